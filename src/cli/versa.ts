#!/usr/bin/env node
/**
 * `versa`: the scripted jobs people run most against a Versa server — log in, upload a folder, import an archive,
 * freeze a version, export and download it, start training and follow it — with progress bars on long operations.
 * Run `versa help` for the commands. Server and token come from flags, VERSA_URL / VERSA_TOKEN, or the file
 * `versa login` writes (VERSA_CONFIG, default ~/.config/versa/credentials.json, mode 600).
 */
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiError, VersaApi } from './api.js';
import { humanBytes, ProgressBar } from './progress.js';

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp', '.tif', '.tiff', '.gif', '.avif', '.bmp']);

const HELP = `versa — command-line client for a Versa server

  versa login --email E [--password P]           log in (password also from VERSA_PASSWORD) and save the token
  versa projects                                 list your projects
  versa create-project NAME [--type T]           create a project (object_detection, classification, …)
  versa upload PROJECT_ID FOLDER [--batch N]     upload every image under FOLDER
  versa import ARCHIVE.zip [--name N] [--format F] [--type T]
                                                 import a dataset archive as a new project (format: detected, or coco,
                                                 yolo, voc, cvat, datumaro, labelme, labelstudio, createml, …)
  versa version PROJECT_ID --name N [--seed S]   freeze a version and wait until its images are generated
  versa export PROJECT_ID --format F [--version ID] [--output FILE]
                                                 export (coco, yolo_ultralytics, cvat, …) and download it
  versa train PROJECT_ID --version ID [--model M] [--epochs N] [--imgsz N] [--batch N] [--device D]
               [--adapter A] [--no-follow]       start training and follow it to the end
  versa follow JOB_ID                            follow a training job

Options for every command: --server URL (VERSA_URL), --token T (VERSA_TOKEN).`;

interface Saved {
  server?: string;
  token?: string;
}

const configPath = () => process.env.VERSA_CONFIG ?? join(homedir(), '.config', 'versa', 'credentials.json');

async function loadSaved(): Promise<Saved> {
  try {
    return JSON.parse(await readFile(configPath(), 'utf8')) as Saved;
  } catch {
    return {};
  }
}

async function save(saved: Saved): Promise<void> {
  await mkdir(dirname(configPath()), { recursive: true });
  await writeFile(configPath(), JSON.stringify(saved, null, 2), { mode: 0o600 });
  await chmod(configPath(), 0o600);
}

const out = (value: unknown) => process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);

function integer(value: string | undefined, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a whole number, got "${value ?? ''}"`);
  return n;
}

class UsageError extends Error {}

async function imagesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && IMAGE_EXTENSIONS.has(extname(e.name).toLowerCase()))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  type: { type: 'string' },
  batch: { type: 'string' },
  name: { type: 'string' },
  format: { type: 'string' },
  seed: { type: 'string' },
  version: { type: 'string' },
  output: { type: 'string', short: 'o' },
  model: { type: 'string' },
  epochs: { type: 'string' },
  imgsz: { type: 'string' },
  device: { type: 'string' },
  adapter: { type: 'string' },
  'no-follow': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const parse = (argv: string[]) => parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
type Options = ReturnType<typeof parse>['values'];

/** What a command runs with: the client for the server, the server's URL, the options and the arguments after the command. */
interface Invocation {
  api: VersaApi;
  server: string;
  values: Options;
  args: string[];
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  const [command, ...args] = positionals;
  if (!command || command === 'help' || values.help) {
    out(HELP);
    return command || values.help ? 0 : 2;
  }
  const saved = await loadSaved();
  const server = values.server || process.env.VERSA_URL || saved.server || 'http://127.0.0.1:8000';
  const api = new VersaApi(server, values.token || process.env.VERSA_TOKEN || (saved.server === server ? saved.token : undefined) || null);
  const run = COMMANDS.get(command);
  if (!run) throw new UsageError(`unknown command "${command}" (versa help lists them)`);
  return run({ api, server, values, args });
}

async function login({ api, server, values }: Invocation): Promise<number> {
  const password = values.password ?? process.env.VERSA_PASSWORD;
  if (!values.email || !password) throw new UsageError('login needs --email and --password (or VERSA_PASSWORD)');
  const answer = await api.post<{ token: string; user: { email: string } }>('/api/auth/login', { email: values.email, password });
  await save({ server, token: answer.token });
  out(`logged in to ${server} as ${answer.user.email}; token saved in ${configPath()}`);
  return 0;
}

async function projects({ api }: Invocation): Promise<number> {
  const list = await api.get<{ id: number; name: string; project_type: string; image_count: number }[]>('/api/projects');
  for (const p of list) out(`${p.id}\t${p.project_type}\t${p.image_count} images\t${p.name}`);
  return 0;
}

async function createProject({ api, values, args }: Invocation): Promise<number> {
  if (!args[0]) throw new UsageError('create-project needs a NAME');
  out(await api.post('/api/projects', { name: args[0], project_type: values.type ?? 'object_detection' }));
  return 0;
}

interface UploadAnswer {
  created: number;
  duplicates: number;
  rejected: number;
  results: { original_name: string; outcome: string; detail?: string }[];
}

async function upload({ api, values, args }: Invocation): Promise<number> {
  const projectId = integer(args[0], 'PROJECT_ID');
  if (!args[1]) throw new UsageError('upload needs a FOLDER');
  const files = await imagesUnder(resolve(args[1]));
  if (files.length === 0) throw new UsageError(`no images under ${args[1]}`);
  const batch = values.batch ? integer(values.batch, '--batch') || 16 : 16;
  const bar = new ProgressBar('upload');
  const totals = { created: 0, duplicates: 0, rejected: 0 };
  const rejected: string[] = [];
  for (let start = 0; start < files.length; start += batch) {
    const answer = await uploadBatch(api, projectId, files.slice(start, start + batch));
    totals.created += answer.created;
    totals.duplicates += answer.duplicates;
    totals.rejected += answer.rejected;
    for (const r of answer.results) if (r.outcome === 'rejected') rejected.push(`${r.original_name}: ${r.detail ?? ''}`);
    bar.update(Math.min(start + batch, files.length), files.length);
  }
  bar.done();
  for (const line of rejected) process.stderr.write(`rejected ${line}\n`);
  out(totals);
  return totals.rejected > 0 && totals.created + totals.duplicates === 0 ? 1 : 0;
}

async function uploadBatch(api: VersaApi, projectId: number, files: string[]): Promise<UploadAnswer> {
  try {
    return await api.upload<UploadAnswer>(`/api/projects/${projectId}/images`, {}, 'files', files);
  } catch (error) {
    // Every file of the batch refused: the answer still carries the per-file report.
    if (!(error instanceof ApiError) || !(error.body as { results?: unknown })?.results) throw error;
    return error.body as UploadAnswer;
  }
}

async function importArchive({ api, values, args }: Invocation): Promise<number> {
  if (!args[0]) throw new UsageError('import needs an ARCHIVE.zip');
  process.stderr.write(`importing ${basename(args[0])} (the server reads and checks the whole archive; this can take a while)\n`);
  out(await api.upload('/api/projects/import', { name: values.name, format: values.format, project_type: values.type }, 'file', [resolve(args[0])]));
  return 0;
}

async function version({ api, values, args }: Invocation): Promise<number> {
  const projectId = integer(args[0], 'PROJECT_ID');
  if (!values.name) throw new UsageError('version needs --name');
  let created = await api.post<{ id: number; status: string; job_id?: number | null }>(`/api/projects/${projectId}/versions`, {
    name: values.name,
    ...(values.seed !== undefined ? { seed: integer(values.seed, '--seed') } : {}),
  });
  const bar = new ProgressBar(`version ${created.id}`);
  while (created.status !== 'ready' && created.status !== 'failed') {
    await new Promise((r) => setTimeout(r, 500));
    if (created.job_id) {
      const job = await api.get<{ progress: number }>(`/api/jobs/${created.job_id}`);
      bar.update(Math.round(job.progress * 100), 100, '%');
    }
    created = await api.get(`/api/projects/${projectId}/versions/${created.id}`);
  }
  bar.done();
  out(created);
  return created.status === 'ready' ? 0 : 1;
}

async function exportProject({ api, values, args }: Invocation): Promise<number> {
  const projectId = integer(args[0], 'PROJECT_ID');
  if (!values.format) throw new UsageError('export needs --format');
  process.stderr.write(`exporting project ${projectId} as ${values.format}…\n`);
  const exported = await api.post<{ filename: string; url: string; size_bytes: number; image_count: number }>(`/api/projects/${projectId}/export`, {
    format: values.format,
    version_id: values.version !== undefined ? integer(values.version, '--version') : null,
  });
  const destination = resolve(values.output ?? exported.filename);
  const bar = new ProgressBar('download');
  await api.download(exported.url, destination, (done, total) => bar.update(done, total, humanBytes(done)));
  bar.done(`${exported.image_count} images, ${humanBytes(exported.size_bytes)} → ${destination}`);
  out({ ...exported, path: destination });
  return 0;
}

async function train({ api, values, args }: Invocation): Promise<number> {
  const projectId = integer(args[0], 'PROJECT_ID');
  if (values.version === undefined) throw new UsageError('train needs --version');
  const body: Record<string, unknown> = { version_id: integer(values.version, '--version') };
  if (values.model) body.model = values.model;
  if (values.epochs) body.epochs = integer(values.epochs, '--epochs');
  if (values.imgsz) body.imgsz = integer(values.imgsz, '--imgsz');
  if (values.batch) body.batch = integer(values.batch, '--batch');
  if (values.device) body.device = values.device;
  if (values.adapter) body.adapter = values.adapter;
  const job = await api.post<{ id: number }>(`/api/projects/${projectId}/train`, body);
  process.stderr.write(`training job ${job.id} started\n`);
  return values['no-follow'] ? (out(job), 0) : follow(api, job.id);
}

/** The commands by name (`versa help` describes them). */
const COMMANDS = new Map<string, (invocation: Invocation) => Promise<number>>([
  ['login', login],
  ['projects', projects],
  ['create-project', createProject],
  ['upload', upload],
  ['import', importArchive],
  ['version', version],
  ['export', exportProject],
  ['train', train],
  ['follow', ({ api, args }) => follow(api, integer(args[0], 'JOB_ID'))],
]);

interface TrainJob {
  id: number;
  status: string;
  progress?: number;
  epoch?: number | null;
  epochs?: number | null;
  metrics?: Record<string, number> | null;
  message?: string | null;
  eta_seconds?: number | null;
  model_id?: number | null;
  error?: string | null;
}

/** Polls a training job (GET /api/train/jobs/{id}) until it ends, drawing epochs, metrics and the estimate left. */
async function follow(api: VersaApi, jobId: number): Promise<number> {
  const bar = new ProgressBar(`train ${jobId}`);
  for (;;) {
    const job = await api.get<TrainJob>(`/api/train/jobs/${jobId}`);
    const metrics = Object.entries(job.metrics ?? {}).map(([k, v]) => `${k}=${Number(v).toFixed(3)}`).join(' ');
    const eta = job.eta_seconds ? ` eta ${Math.round(job.eta_seconds)}s` : '';
    if (job.epochs) bar.update(job.epoch ?? 0, job.epochs, `epochs ${metrics}${eta}`.trim());
    else bar.update(Math.round((job.progress ?? 0) * 100), 100, `% ${job.message ?? ''}${eta}`.trim());
    if (!['queued', 'running'].includes(job.status)) {
      bar.done(`training ${job.status}${job.model_id ? `: model ${job.model_id}` : ''}${job.error ? `: ${job.error}` : ''}`);
      out(job);
      return job.status === 'succeeded' ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const invokedDirectly = process.argv[1] && resolve(process.argv[1]).replace(/\.[jt]s$/, '') === resolve(new URL(import.meta.url).pathname).replace(/\.[jt]s$/, '');
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof UsageError) process.stderr.write(`versa: ${error.message}\n`);
      else if (error instanceof ApiError) process.stderr.write(`versa: the server answered ${error.message}\n`);
      else process.stderr.write(`versa: ${(error as Error).message}\n`);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}
