import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import {
  arg, CliError, type Context, decimal, deadlineOf, EXIT, flag, forgetCredentials, loadSaved, note, NotFoundError, print, saveCredentials, str,
  UsageError, waitUntil, wholeNumber,
} from './context.js';
import { readPassword } from './prompt.js';
import { humanBytes, ProgressBar } from './progress.js';
import { filesUnder, importFolder, uploadImages } from './upload.js';

// ---------------------------------------------------------------------------------------------------------------
// Records as the API answers them (only the fields the CLI reads).

interface Project { id: number; name: string; project_type: string; image_count: number }
interface ClassRecord { id: number; name: string; color: string; annotation_count?: number }
interface Image { id: number; filename: string; original_name: string; split: string | null; annotation_count: number; width: number; height: number }
interface Annotation { id: number; class_id: number; annotation_type: string; geometry: unknown; confidence: number | null; source: string; status: string; attributes: Record<string, unknown>; group_id: number | null; track_id?: number }
interface Version { id: number; number: number; name: string; status: string; job_id?: number | null; image_counts: { train: number; valid: number; test: number; total: number }; error?: string | null }
interface Job { id: number; kind: string; status: string; progress: number; message: string | null; eta_seconds: number | null; error: string | null; result: unknown; project_id: number | null }
interface TrainJob extends Job { epoch: number; epochs: number | null; metrics: Record<string, number | null> | null; model_id: number | null; queue_position: number | null }

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

// ---------------------------------------------------------------------------------------------------------------
// Names and numbers as users see them → the ids the API takes.

/** A project by id (digits) or by its exact name (a unique case-insensitive match too). */
export async function projectId(ctx: Context, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const found = await ctx.api.get<Project[]>(`/api/projects?q=${encodeURIComponent(ref)}`);
  const exact = found.filter((p) => p.name === ref);
  const loose = exact.length ? exact : found.filter((p) => p.name.toLowerCase() === ref.toLowerCase());
  if (loose.length === 1) return loose[0].id;
  if (loose.length === 0) throw new NotFoundError(`no project named "${ref}" (versa projects lists them)`);
  throw new UsageError(`several projects are named "${ref}" (ids ${loose.map((p) => p.id).join(', ')}); give the id`);
}

/** A version by its number in the project (1, 2, … as `versa versions` shows them) or `latest`. */
export async function versionOf(ctx: Context, project: number, ref: string): Promise<Version> {
  if (ref !== 'latest' && !/^\d+$/.test(ref)) throw new UsageError(`--version takes a version number (versa versions list PROJECT) or "latest", got "${ref}"`);
  const versions = await ctx.api.get<Version[]>(`/api/projects/${project}/versions`);
  const version = ref === 'latest' ? versions.reduce<Version | undefined>((a, v) => (!a || v.number > a.number ? v : a), undefined) : versions.find((v) => v.number === Number(ref));
  if (!version) {
    const numbers = versions.map((v) => v.number).sort((a, b) => a - b);
    throw new NotFoundError(`project ${project} has no version ${ref}${numbers.length ? ` (its versions: ${numbers.join(', ')})` : ' (it has none yet)'}`);
  }
  return version;
}

const projectArg = (ctx: Context, index = 0) => projectId(ctx, arg(ctx, index, 'PROJECT (an id or a name)'));

// ---------------------------------------------------------------------------------------------------------------
// Account

async function register(ctx: Context): Promise<number> {
  const email = str(ctx, 'email');
  if (!email) throw new UsageError('register needs --email');
  const password = await readPassword(str(ctx, 'password'), ctx.io);
  const user = await ctx.api.post<{ id: number; email: string }>('/api/auth/register', { email, password, ...(str(ctx, 'display-name') ? { display_name: str(ctx, 'display-name') } : {}) });
  print(ctx, user, `registered ${user.email} (user ${user.id}); now: versa login --email ${user.email}`);
  return EXIT.ok;
}

async function login(ctx: Context): Promise<number> {
  const email = str(ctx, 'email');
  if (!email) throw new UsageError('login needs --email');
  const password = await readPassword(str(ctx, 'password'), ctx.io);
  const answer = await ctx.api.post<{ token: string; expires_at: string; user: { id: number; email: string } }>('/api/auth/login', { email, password });
  await saveCredentials(ctx.configPath, { server: ctx.server, token: answer.token, email: answer.user.email });
  print(ctx, { server: ctx.server, user: answer.user, expires_at: answer.expires_at, credentials: ctx.configPath }, `logged in to ${ctx.server} as ${answer.user.email}; token saved in ${ctx.configPath}`);
  return EXIT.ok;
}

async function logout(ctx: Context): Promise<number> {
  const saved = await loadSaved(ctx.configPath);
  if (saved.token && ctx.api.token === saved.token) await ctx.api.post('/api/auth/logout').catch(() => undefined);
  await forgetCredentials(ctx.configPath);
  print(ctx, { logged_out: true }, `logged out; ${ctx.configPath} removed`);
  return EXIT.ok;
}

async function whoami(ctx: Context): Promise<number> {
  const me = await ctx.api.get<{ id: number; email: string }>('/api/auth/me');
  print(ctx, me, `${me.email} (user ${me.id}) on ${ctx.server}`);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Projects, classes, images

async function projectsList(ctx: Context): Promise<number> {
  const q = str(ctx, 'search');
  const list = await ctx.api.get<Project[]>(`/api/projects${q ? `?q=${encodeURIComponent(q)}` : ''}`);
  print(ctx, list, list.length ? list.map((p) => `${p.id}\t${p.project_type}\t${p.image_count} images\t${p.name}`) : 'no projects');
  return EXIT.ok;
}

async function projectsCreate(ctx: Context): Promise<number> {
  const name = arg(ctx, 0, 'NAME');
  const p = await ctx.api.post<Project>('/api/projects', { name, project_type: str(ctx, 'type') ?? 'object_detection' });
  print(ctx, p, `created project ${p.id} "${p.name}" (${p.project_type})`);
  return EXIT.ok;
}

async function projectsShow(ctx: Context): Promise<number> {
  const p = await ctx.api.get<Project>(`/api/projects/${await projectArg(ctx)}`);
  print(ctx, p, `${p.id}\t${p.project_type}\t${p.image_count} images\t${p.name}`);
  return EXIT.ok;
}

async function classesList(ctx: Context): Promise<number> {
  const list = await ctx.api.get<ClassRecord[]>(`/api/projects/${await projectArg(ctx)}/classes`);
  print(ctx, list, list.length ? list.map((c) => `${c.id}\t${c.color}\t${c.annotation_count ?? 0} annotations\t${c.name}`) : 'no classes');
  return EXIT.ok;
}

async function classesAdd(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const names = ctx.args.slice(1);
  if (names.length === 0) throw new UsageError('classes add needs PROJECT and one or more class NAMEs');
  const created: ClassRecord[] = [];
  for (const name of names) created.push(await ctx.api.post<ClassRecord>(`/api/projects/${project}/classes`, { name, ...(str(ctx, 'color') ? { color: str(ctx, 'color') } : {}) }));
  print(ctx, created, created.map((c) => `added class ${c.id} "${c.name}" (${c.color})`));
  return EXIT.ok;
}

async function imagesList(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const limit = str(ctx, 'limit') !== undefined ? wholeNumber(str(ctx, 'limit'), '--limit', 1) : Infinity;
  const images: Image[] = [];
  for await (const image of ctx.api.pages<Image>(`/api/projects/${project}/images`)) {
    if (images.length >= limit) break;
    images.push(image);
  }
  print(ctx, images, images.length ? images.map((i) => `${i.id}\t${i.split ?? '-'}\t${i.width}x${i.height}\t${i.annotation_count} annotations\t${i.original_name}`) : 'no images');
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Data in

interface ImportSummary {
  format: string;
  images_created: number;
  images_merged: number;
  annotations_created: number;
  skipped_count: number;
  skipped: { file: string; item?: string; reason: string }[];
}

const importLine = (s: ImportSummary) =>
  `read as ${s.format}: ${s.images_created} images added, ${s.images_merged} merged, ${s.annotations_created} annotations${s.skipped_count ? `, ${s.skipped_count} items skipped` : ''}`;

function importFields(ctx: Context): Record<string, string | undefined> {
  return { format: str(ctx, 'format'), new_classes: str(ctx, 'new-classes'), on_conflict: str(ctx, 'on-conflict'), strict: flag(ctx, 'strict') ? 'true' : undefined };
}

async function upload(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const folder = resolve(arg(ctx, 1, 'FOLDER'));
  if (!(await stat(folder).catch(() => null))?.isDirectory()) throw new UsageError(`${ctx.args[1]} is not a folder`);
  const found = await filesUnder(folder);
  if (found.images.length === 0) throw new UsageError(`no images under ${ctx.args[1]}`);
  const withLabels = !flag(ctx, 'images-only') && (found.labels.length > 0 || str(ctx, 'format') !== undefined);
  if (withLabels) {
    note(ctx, `uploading ${found.images.length} images and ${found.labels.length} label files (${humanBytes(found.bytes)}) as one import`);
    const answer = (await importFolder(ctx.api, project, folder, found, importFields(ctx), ctx.quiet)) as ImportSummary;
    for (const s of answer.skipped.slice(0, 20)) note(ctx, `skipped ${s.file}${s.item ? ` ${s.item}` : ''}: ${s.reason}`);
    print(ctx, answer, importLine(answer));
    return EXIT.ok;
  }
  const batch = str(ctx, 'batch') !== undefined ? wholeNumber(str(ctx, 'batch'), '--batch', 1) : 16;
  const concurrency = str(ctx, 'concurrency') !== undefined ? wholeNumber(str(ctx, 'concurrency'), '--concurrency', 1) : 4;
  const totals = await uploadImages(ctx.api, project, found.images, { batch, concurrency, quiet: ctx.quiet });
  for (const r of totals.rejections) ctx.io.stderr.write(`rejected ${r.file}: ${r.detail}\n`);
  print(ctx, totals, `${totals.created} images added, ${totals.duplicates} duplicates, ${totals.rejected} rejected`);
  return totals.rejected > 0 && totals.created + totals.duplicates === 0 ? EXIT.failed : EXIT.ok;
}

async function importArchive(ctx: Context): Promise<number> {
  const archive = resolve(arg(ctx, 0, 'ARCHIVE.zip'));
  if (!(await stat(archive).catch(() => null))?.isFile()) throw new UsageError(`${ctx.args[0]} is not a file`);
  note(ctx, `importing ${basename(archive)} (the server reads and checks the whole archive; this can take a while)`);
  const into = str(ctx, 'project');
  if (into !== undefined) {
    const answer = await ctx.api.upload<ImportSummary>(`/api/projects/${await projectId(ctx, into)}/import`, importFields(ctx), 'file', [archive]);
    print(ctx, answer, importLine(answer));
  } else {
    const answer = await ctx.api.upload<Project & { import: ImportSummary }>('/api/projects/import', {
      name: str(ctx, 'name'), format: str(ctx, 'format'), project_type: str(ctx, 'type'), strict: flag(ctx, 'strict') ? 'true' : undefined,
    }, 'file', [archive]);
    print(ctx, answer, `created project ${answer.id} "${answer.name}" (${answer.project_type}); ${importLine(answer.import)}`);
  }
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Annotations as JSON lines: {"image": name, "annotations": [{class, annotation_type, geometry, …}]}, one image a line

interface AnnotationLine {
  image: string;
  split?: string | null;
  annotations: { class: string; annotation_type: string; geometry: unknown; attributes?: Record<string, unknown>; group_id?: number | null; confidence?: number | null; status?: string; source?: string }[];
}

/** Runs `work` over `items` with at most `limit` at a time; the first failure stops new work and is thrown once all settle. */
async function eachLimited<T>(items: AsyncIterable<T> | T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  for await (const item of items) {
    if (failure) break;
    const p: Promise<void> = work(item)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(p));
    running.add(p);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw (failure as { error: unknown }).error;
}

async function annotationsExport(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const classes = new Map((await ctx.api.get<ClassRecord[]>(`/api/projects/${project}/classes`)).map((c) => [c.id, c.name]));
  const outPath = str(ctx, 'out');
  const destination = outPath ? resolve(outPath) : null;
  const stream = destination ? createWriteStream(`${destination}.part`) : ctx.io.stdout;
  const bar = new ProgressBar('annotations', ctx.quiet || !destination);
  const totalImages = (await ctx.api.get<Project>(`/api/projects/${project}`)).image_count;
  let images = 0;
  let annotations = 0;
  // Lines are written in image order, each when its image's annotations are in.
  const pending = new Map<number, string>();
  let nextIndex = 0;
  let index = 0;
  const write = async (line: string) => {
    if (!stream.write(line)) await once(stream, 'drain');
  };
  try {
    await eachLimited(ctx.api.pages<Image>(`/api/projects/${project}/images`), 4, async (image) => {
      const mine = index++;
      const list: Annotation[] = [];
      if (image.annotation_count > 0 || !flag(ctx, 'skip-unannotated')) {
        for await (const a of ctx.api.pages<Annotation>(`/api/images/${image.id}/annotations`, 10_000)) if (a.track_id === undefined) list.push(a);
      }
      const line: AnnotationLine = {
        image: image.original_name,
        split: image.split,
        annotations: list.map((a) => ({
          class: classes.get(a.class_id) ?? String(a.class_id), annotation_type: a.annotation_type, geometry: a.geometry, attributes: a.attributes,
          group_id: a.group_id, confidence: a.confidence, status: a.status, source: a.source,
        })),
      };
      annotations += list.length;
      images++;
      pending.set(mine, `${JSON.stringify(line)}\n`);
      while (pending.has(nextIndex)) {
        const text = pending.get(nextIndex)!;
        pending.delete(nextIndex++);
        await write(text);
      }
      bar.update(images, totalImages);
    });
    if (destination) {
      stream.end();
      await once(stream, 'finish');
      await rename(`${destination}.part`, destination);
    }
  } catch (error) {
    if (destination) {
      (stream as ReturnType<typeof createWriteStream>).destroy();
      await rm(`${destination}.part`, { force: true });
    }
    throw error;
  }
  bar.done();
  if (destination) print(ctx, { images, annotations, path: destination }, `exported ${annotations} annotations of ${images} images to ${destination}`);
  else note(ctx, `exported ${annotations} annotations of ${images} images`);
  return EXIT.ok;
}

async function annotationsImport(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const file = resolve(arg(ctx, 1, 'FILE.jsonl'));
  if (!(await stat(file).catch(() => null))?.isFile()) throw new UsageError(`${ctx.args[1]} is not a file`);
  const imagesByName = new Map<string, number>();
  for await (const image of ctx.api.pages<Image>(`/api/projects/${project}/images`)) {
    if (!imagesByName.has(image.original_name)) imagesByName.set(image.original_name, image.id);
    if (!imagesByName.has(image.filename)) imagesByName.set(image.filename, image.id);
  }
  const classes = new Map((await ctx.api.get<ClassRecord[]>(`/api/projects/${project}/classes`)).map((c) => [c.name.toLowerCase(), c.id]));
  const createClasses = flag(ctx, 'create-classes');
  // One creation per new class, however many images ask for it at once.
  const creating = new Map<string, Promise<number>>();
  const classId = async (name: string): Promise<number> => {
    const known = classes.get(name.toLowerCase());
    if (known !== undefined) return known;
    if (!createClasses) throw new CliError(`the project has no class "${name}" (add it with versa classes add, or pass --create-classes)`, EXIT.failed);
    let made = creating.get(name.toLowerCase());
    if (!made) {
      made = ctx.api.post<ClassRecord>(`/api/projects/${project}/classes`, { name }).then((c) => c.id);
      creating.set(name.toLowerCase(), made);
    }
    return made;
  };
  const totals = { images: 0, annotations: 0, missing_images: [] as string[] };
  const bar = new ProgressBar('annotations', ctx.quiet);
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNumber = 0;
  async function* records(): AsyncGenerator<AnnotationLine> {
    for await (const text of lines) {
      lineNumber++;
      if (!text.trim()) continue;
      let line: AnnotationLine;
      try {
        line = JSON.parse(text) as AnnotationLine;
      } catch {
        throw new UsageError(`${basename(file)} line ${lineNumber}: not JSON`);
      }
      if (typeof line.image !== 'string' || !Array.isArray(line.annotations)) throw new UsageError(`${basename(file)} line ${lineNumber}: needs "image" and "annotations"`);
      yield line;
    }
  }
  await eachLimited(records(), 4, async (line) => {
    const imageId = imagesByName.get(line.image);
    if (imageId === undefined) {
      totals.missing_images.push(line.image);
      return;
    }
    for (const a of line.annotations) {
      await ctx.api.post(`/api/images/${imageId}/annotations`, {
        class_id: await classId(a.class), annotation_type: a.annotation_type, geometry: a.geometry,
        ...(a.attributes && Object.keys(a.attributes).length ? { attributes: a.attributes } : {}),
        ...(a.group_id !== undefined && a.group_id !== null ? { group_id: a.group_id } : {}),
        ...(a.status ? { status: a.status } : {}),
        ...(a.confidence !== undefined && a.confidence !== null ? { confidence: a.confidence } : {}),
        source: 'import',
      });
      totals.annotations++;
    }
    totals.images++;
    bar.update(totals.images, imagesByName.size);
  });
  bar.done();
  for (const name of totals.missing_images.slice(0, 20)) note(ctx, `no image named ${name} in the project; its line was left out`);
  print(ctx, totals, `imported ${totals.annotations} annotations onto ${totals.images} images${totals.missing_images.length ? `; ${totals.missing_images.length} images not found` : ''}`);
  return totals.missing_images.length && totals.images === 0 ? EXIT.notFound : EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Versions, export

const versionLine = (v: Version) =>
  `version ${v.number} "${v.name}" ${v.status}${v.status === 'ready' ? `: ${v.image_counts.total} images (train ${v.image_counts.train}, valid ${v.image_counts.valid}, test ${v.image_counts.test})` : ''}${v.error ? `: ${v.error}` : ''}`;

async function versionsList(ctx: Context): Promise<number> {
  const list = await ctx.api.get<Version[]>(`/api/projects/${await projectArg(ctx)}/versions`);
  print(ctx, list, list.length ? list.map(versionLine) : 'no versions');
  return EXIT.ok;
}

async function versionsShow(ctx: Context): Promise<number> {
  const v = await versionOf(ctx, await projectArg(ctx), arg(ctx, 1, 'NUMBER'));
  print(ctx, v, versionLine(v));
  return EXIT.ok;
}

async function versionsCreate(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const name = str(ctx, 'name') ?? ctx.args[1];
  if (!name) throw new UsageError('versions create needs --name');
  const deadline = deadlineOf(ctx);
  let version = await ctx.api.post<Version>(`/api/projects/${project}/versions`, { name, ...(str(ctx, 'seed') !== undefined ? { seed: wholeNumber(str(ctx, 'seed'), '--seed') } : {}) });
  if (flag(ctx, 'wait')) {
    const bar = new ProgressBar(`version ${version.number}`, ctx.quiet);
    version = await waitUntil(deadline, `version ${version.number}`, async () => {
      const current = await ctx.api.get<Version>(`/api/projects/${project}/versions/${version.id}`);
      if (current.status === 'ready' || current.status === 'failed') return current;
      if (current.job_id) {
        const job = await ctx.api.get<Job>(`/api/jobs/${current.job_id}`);
        bar.update(Math.round(job.progress * 100), 100, '%');
      }
      return undefined;
    });
    bar.done();
  }
  print(ctx, version, versionLine(version));
  return version.status === 'failed' ? EXIT.failed : EXIT.ok;
}

async function exportProject(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const format = str(ctx, 'format');
  if (!format) throw new UsageError('export needs --format (coco, yolo_ultralytics, voc, cvat, …)');
  const version = str(ctx, 'version') !== undefined ? await versionOf(ctx, project, str(ctx, 'version')!) : null;
  note(ctx, `exporting project ${project}${version ? ` version ${version.number}` : ''} as ${format}…`);
  const exported = await ctx.api.post<{ filename: string; url: string; size_bytes: number; image_count: number; annotation_count: number }>(`/api/projects/${project}/export`, {
    format, version_id: version?.id ?? null, ...(flag(ctx, 'skip-unannotated') ? { include_unannotated: false } : {}),
  });
  const destination = resolve(str(ctx, 'out') ?? exported.filename);
  const bar = new ProgressBar('download', ctx.quiet);
  await ctx.api.download(exported.url, destination, (done, total) => bar.update(done, total, '', 'bytes'));
  bar.done();
  print(ctx, { ...exported, version_number: version?.number ?? null, path: destination }, `exported ${exported.image_count} images, ${exported.annotation_count} annotations (${humanBytes(exported.size_bytes)}) → ${destination}`);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Training, models, auto-annotate, jobs

async function train(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const versionRef = str(ctx, 'version');
  if (versionRef === undefined) throw new UsageError('train needs --version NUMBER (versa versions list PROJECT shows them)');
  const body: Record<string, unknown> = {};
  if (str(ctx, 'epochs') !== undefined) body.epochs = wholeNumber(str(ctx, 'epochs'), '--epochs', 1);
  if (str(ctx, 'imgsz') !== undefined) body.imgsz = wholeNumber(str(ctx, 'imgsz'), '--imgsz', 1);
  if (str(ctx, 'batch') !== undefined) body.batch = wholeNumber(str(ctx, 'batch'), '--batch', 1);
  if (str(ctx, 'seed') !== undefined) body.seed = wholeNumber(str(ctx, 'seed'), '--seed');
  for (const key of ['model', 'device', 'adapter', 'name'] as const) if (str(ctx, key)) body[key] = str(ctx, key);
  const deadline = deadlineOf(ctx);
  const version = await versionOf(ctx, project, versionRef);
  const job = await ctx.api.post<TrainJob>(`/api/projects/${project}/train`, { version_id: version.id, ...body });
  if (!flag(ctx, 'follow')) {
    print(ctx, job, `training job ${job.id} ${job.status} on version ${version.number}; follow it with: versa jobs wait ${job.id}`);
    return EXIT.ok;
  }
  note(ctx, `training job ${job.id} started on version ${version.number}`);
  return followTraining(ctx, job.id, deadline);
}

async function followTraining(ctx: Context, jobId: number, deadline: number): Promise<number> {
  const bar = new ProgressBar(`train ${jobId}`, ctx.quiet);
  const job = await waitUntil(deadline, `training job ${jobId}`, async () => {
    const current = await ctx.api.get<TrainJob>(`/api/train/jobs/${jobId}`);
    const metrics = Object.entries(current.metrics ?? {}).filter(([, v]) => typeof v === 'number').map(([k, v]) => `${k}=${(v as number).toFixed(3)}`).join(' ');
    const eta = current.eta_seconds ? ` eta ${Math.round(current.eta_seconds)}s` : '';
    if (current.epochs) bar.update(current.epoch, current.epochs, `epochs ${metrics}${eta}`.trim());
    else bar.update(Math.round(current.progress * 100), 100, `% ${current.message ?? ''}${eta}`.trim());
    return ENDED.has(current.status) ? current : undefined;
  });
  bar.done();
  print(ctx, job, `training ${job.status}${job.model_id ? `: model ${job.model_id}` : ''}${job.error ? `: ${job.error}` : ''}`);
  return job.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}

async function modelsList(ctx: Context): Promise<number> {
  const p = str(ctx, 'project');
  const list = await ctx.api.get<{ id: number; project_id: number; name: string; task: string; format: string; lifecycle: string }[]>(`/api/models${p ? `?project_id=${await projectId(ctx, p)}` : ''}`);
  print(ctx, list, list.length ? list.map((m) => `${m.id}\tproject ${m.project_id}\t${m.task}\t${m.format}\t${m.lifecycle}\t${m.name}`) : 'no models');
  return EXIT.ok;
}

async function autoAnnotate(ctx: Context): Promise<number> {
  const project = await projectArg(ctx);
  const model = str(ctx, 'model');
  if (!model) throw new UsageError('auto-annotate needs --model (an id, or a model name of the project; versa models lists them)');
  const body: Record<string, unknown> = {};
  if (str(ctx, 'confidence') !== undefined) body.confidence = decimal(str(ctx, 'confidence'), '--confidence', 0, 1);
  if (flag(ctx, 'only-unannotated')) body.only_unannotated = true;
  const deadline = deadlineOf(ctx);
  body.model = /^\d+$/.test(model) ? Number(model) : await modelId(ctx, project, model);
  const answer = await ctx.api.post<{ created?: number; replaced?: number; job_id?: number }>(`/api/projects/${project}/auto-annotate/yolo`, body);
  if (answer.job_id === undefined) {
    print(ctx, answer, `${answer.created ?? 0} suggestions created, ${answer.replaced ?? 0} replaced`);
    return EXIT.ok;
  }
  if (!flag(ctx, 'wait')) {
    print(ctx, answer, `auto-annotate job ${answer.job_id} started; follow it with: versa jobs wait ${answer.job_id}`);
    return EXIT.ok;
  }
  return waitJob(ctx, answer.job_id, deadline);
}

/** A model of the project by its name (the server would answer 422; a name that matches nothing is "not found"). */
async function modelId(ctx: Context, project: number, name: string): Promise<number> {
  const models = await ctx.api.get<{ id: number; name: string }[]>(`/api/projects/${project}/models`);
  const found = models.find((m) => m.name === name) ?? models.find((m) => m.name.toLowerCase() === name.toLowerCase());
  if (!found) throw new NotFoundError(`project ${project} has no model named "${name}"${models.length ? ` (its models: ${models.map((m) => m.name).join(', ')})` : ' (it has none yet)'}`);
  return found.id;
}

const jobLine = (j: Job) => `job ${j.id} ${j.kind} ${j.status} ${Math.round(j.progress * 100)}%${j.message ? ` ${j.message}` : ''}${j.error ? `: ${j.error}` : ''}`;

async function jobsShow(ctx: Context): Promise<number> {
  const job = await ctx.api.get<Job>(`/api/jobs/${wholeNumber(arg(ctx, 0, 'JOB_ID'), 'JOB_ID', 1)}`);
  print(ctx, job, jobLine(job));
  return EXIT.ok;
}

async function waitJob(ctx: Context, id: number, deadline: number): Promise<number> {
  const bar = new ProgressBar(`job ${id}`, ctx.quiet);
  const job = await waitUntil(deadline, `job ${id}`, async () => {
    const current = await ctx.api.get<Job>(`/api/jobs/${id}`);
    bar.update(Math.round(current.progress * 100), 100, `% ${current.message ?? ''}`.trim());
    return ENDED.has(current.status) ? current : undefined;
  });
  bar.done();
  print(ctx, job, jobLine(job));
  return job.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}

async function jobsWait(ctx: Context): Promise<number> {
  const id = wholeNumber(arg(ctx, 0, 'JOB_ID'), 'JOB_ID', 1);
  const deadline = deadlineOf(ctx);
  const job = await ctx.api.get<Job>(`/api/jobs/${id}`);
  return job.kind === 'train' ? followTraining(ctx, id, deadline) : waitJob(ctx, id, deadline);
}

async function jobsCancel(ctx: Context): Promise<number> {
  const job = await ctx.api.post<Job>(`/api/jobs/${wholeNumber(arg(ctx, 0, 'JOB_ID'), 'JOB_ID', 1)}/cancel`);
  print(ctx, job, jobLine(job));
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------------------------

export interface Command {
  /** `projects` or `projects create`: the words that name it. */
  name: string;
  usage: string;
  summary: string;
  /** The options it reads (for help and completion), besides the global ones. */
  options: string[];
  run: (ctx: Context) => Promise<number>;
  /** Runs without a server (no credentials read). */
  offline?: boolean;
}

const IMPORT_OPTIONS = ['--format', '--new-classes', '--on-conflict', '--strict'];

export const COMMANDS: Command[] = [
  { name: 'register', usage: 'register --email E [--password P] [--display-name N]', summary: 'create an account (password asked for when not given)', options: ['--email', '--password', '--display-name'], run: register },
  { name: 'login', usage: 'login --email E [--password P]', summary: 'log in and save the token (password asked for on a terminal, or read from stdin)', options: ['--email', '--password'], run: login },
  { name: 'logout', usage: 'logout', summary: 'end the session and remove the saved token', options: [], run: logout },
  { name: 'whoami', usage: 'whoami', summary: 'the account the token belongs to', options: [], run: whoami },
  { name: 'projects list', usage: 'projects [list] [--search TEXT]', summary: 'your projects', options: ['--search'], run: projectsList },
  { name: 'projects create', usage: 'projects create NAME [--type T]', summary: 'create a project (object_detection, classification, instance_segmentation, …)', options: ['--type'], run: projectsCreate },
  { name: 'projects show', usage: 'projects show PROJECT', summary: 'one project', options: [], run: projectsShow },
  { name: 'classes list', usage: 'classes [list] PROJECT', summary: "a project's classes", options: [], run: classesList },
  { name: 'classes add', usage: 'classes add PROJECT NAME… [--color #RRGGBB]', summary: 'add classes', options: ['--color'], run: classesAdd },
  { name: 'images list', usage: 'images [list] PROJECT [--limit N]', summary: "a project's images (every page)", options: ['--limit'], run: imagesList },
  {
    name: 'upload', usage: 'upload PROJECT FOLDER [--format F] [--images-only] [--batch N] [--concurrency N]',
    summary: 'upload the images under FOLDER; with label files (YOLO, COCO, VOC, …) the folder is streamed as one import with its labels',
    options: ['--images-only', '--batch', '--concurrency', ...IMPORT_OPTIONS], run: upload,
  },
  {
    name: 'import', usage: 'import ARCHIVE.zip [--project PROJECT] [--name N] [--type T] [--format F]',
    summary: 'import a dataset archive: into PROJECT, or as a new project', options: ['--project', '--name', '--type', ...IMPORT_OPTIONS], run: importArchive,
  },
  { name: 'annotations export', usage: 'annotations export PROJECT [--out FILE.jsonl]', summary: 'every annotation, one image a JSON line (stdout without --out)', options: ['--out', '--skip-unannotated'], run: annotationsExport },
  { name: 'annotations import', usage: 'annotations import PROJECT FILE.jsonl [--create-classes]', summary: 'add annotations from such lines to the images of the same names', options: ['--create-classes'], run: annotationsImport },
  { name: 'versions list', usage: 'versions [list] PROJECT', summary: "a project's versions by number", options: [], run: versionsList },
  { name: 'versions create', usage: 'versions create PROJECT --name N [--seed S] [--wait [--timeout S]]', summary: 'freeze a version; --wait until its images are generated', options: ['--name', '--seed', '--wait', '--timeout'], run: versionsCreate },
  { name: 'versions show', usage: 'versions show PROJECT NUMBER', summary: 'one version, by its number', options: [], run: versionsShow },
  { name: 'export', usage: 'export PROJECT --format F [--version NUMBER|latest] [--out FILE]', summary: 'export (coco, yolo_ultralytics, voc, cvat, …) and download it', options: ['--format', '--version', '--out', '--skip-unannotated'], run: exportProject },
  {
    name: 'train', usage: 'train PROJECT --version NUMBER [--model M] [--epochs N] [--imgsz N] [--batch N] [--device D] [--adapter A] [--follow [--timeout S]]',
    summary: 'train on a version; --follow shows epochs and metrics to the end', options: ['--version', '--model', '--epochs', '--imgsz', '--batch', '--seed', '--device', '--adapter', '--name', '--follow', '--timeout'], run: train,
  },
  { name: 'models list', usage: 'models [list] [--project PROJECT]', summary: 'registered models', options: ['--project'], run: modelsList },
  { name: 'auto-annotate', usage: 'auto-annotate PROJECT --model M [--confidence C] [--only-unannotated] [--wait [--timeout S]]', summary: 'suggest annotations with a registered model', options: ['--model', '--confidence', '--only-unannotated', '--wait', '--timeout'], run: autoAnnotate },
  { name: 'jobs show', usage: 'jobs [show] JOB_ID', summary: 'a background job', options: [], run: jobsShow },
  { name: 'jobs wait', usage: 'jobs wait JOB_ID [--timeout S]', summary: 'follow a job to its end', options: ['--timeout'], run: jobsWait },
  { name: 'jobs cancel', usage: 'jobs cancel JOB_ID', summary: 'cancel a queued or running job', options: [], run: jobsCancel },
];

/** The command a group name alone runs (`versa projects` lists them). */
export const DEFAULT_SUBCOMMAND: Record<string, string> = { projects: 'list', classes: 'list', images: 'list', versions: 'list', models: 'list', jobs: 'show' };

