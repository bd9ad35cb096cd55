import { join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { SampleModality } from '../../db/schema.js';
import type { WriteBatcher } from '../../db/write-batcher.js';
import { LineError } from '../../formats/samples/line-reader.js';
import { safeExtractZip, unsafeEntryName } from '../../formats/zip/safe-extract.js';
import { FormatError } from '../../formats/format-error.js';
import { ConflictError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import { MediaRejectedError, probeMediaFile } from '../../media/media-probe.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { paletteColor } from '../classes/classes.service.js';
import { sampleBlobKey } from '../../storage/keys.js';
import { assignRandom, assignStratified, type SplitCounts } from '../splits/assign.logic.js';
import { SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';
import type { ReviewDecide } from '../reviews/reviews.schemas.js';
import { reviewDecision, type ItemWorkflow } from '../workflow/item-workflow.service.js';
import { inferTabularSchema, readJsonlSamples, readTabularSamples, readTextSamples, sha256OfFile, type MediaFacts, type ReadSample, type TabularSchema } from './sample-readers.adapter.js';
import { editedLabels, normaliseData, SampleRuleError, storedLabels } from './sample-rules.logic.js';
import type { SampleLockRow, SampleWithOwner } from './sample-items.repository.js';
import type { SampleUpload } from './sample-upload.adapter.js';
import type { SampleInsert, SampleRow, SamplesRepository } from './samples.repository.js';
import { ensureFolder, listFiles, readHead, readStream, regularFileSize } from '../../storage/local-files.js';
import type {
  ImportOut,
  SampleAssignBody,
  SampleAssignOut,
  SampleCreate,
  SampleCreateBody,
  SampleFramesBody,
  SampleFramesOut,
  SampleListQuery,
  SampleOut,
  SampleRevisionOut,
  SampleSplitsBody,
  SampleTargetOut,
  SampleUpdate,
  TimeSegment,
} from './samples.schemas.js';
import type { VideoFramesPort } from './samples.ports.js';

export interface SamplesServiceOptions {
  /** Largest media file inside an import. */
  readonly maxMediaBytes: number;
  /** Largest import data file or archive. */
  readonly maxImportBytes: number;
  /** Most samples one import may create. */
  readonly maxImportSamples: number;
  /** Most media files one archive may hold. */
  readonly maxMediaFiles: number;
}

/** Rows inserted per transaction: commits stay cheap, and other requests get the database between batches. */
const IMPORT_BATCH = 2000;

/** The team workflow (visibility, locks, assignees, review decisions) over samples. */
export type SampleWorkflow = ItemWorkflow<SampleWithOwner, SampleLockRow>;

export const sampleFileUrl = (sampleId: number) => `/api/samples/${sampleId}/file`;

const parse = (text: string | null) => (text === null ? null : JSON.parse(text));

export function toSampleOut(row: SampleRow): SampleOut {
  const data = JSON.parse(row.data) as Record<string, unknown>;
  if (row.blob_key) data.file_url = sampleFileUrl(row.id);
  return {
    id: row.id,
    project_id: row.project_id,
    modality: row.modality,
    split: row.split as SplitName | null,
    data,
    label: row.labels ? JSON.parse(row.labels) : row.label,
    spans: parse(row.spans),
    value: parse(row.value),
    metadata: parse(row.metadata),
    review_state: row.review_state,
    assignee_id: row.assignee_id,
    review_comment: row.review_comment,
    reviewed_by: row.reviewed_by,
    reviewed_at: row.reviewed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A sample as shown to a caller it hides ground truth from (issue 29): unreviewed and unlabelled, like the pool's. */
export function untouchedSampleOut(row: SampleRow): SampleOut {
  return { ...toSampleOut(row), label: null, spans: null, value: null, review_state: 'unreviewed', review_comment: null, reviewed_by: null, reviewed_at: null };
}

/** A stored media file ready to send, whole or a byte range of it. */
export interface SampleFile {
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number;
  readonly etag: string;
  open(range?: { start: number; end: number }): Readable;
}

const lineIssue = (err: LineError, file?: string) =>
  new ValidationError([{ loc: ['body', 'file', ...(file ? [file] : []), err.line], msg: `${file ? `${file} ` : ''}line ${err.line} ${err.message}`, type: 'value_error' }]);

export class SamplesService {
  constructor(
    private readonly samples: SamplesRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly options: SamplesServiceOptions,
    private readonly writes: WriteBatcher,
    /** Visibility, locks, assignees and review decisions: the same team workflow as images'. */
    private readonly workflow: SampleWorkflow,
    /** The videos module's decoding of a video sample into an image project's frames. */
    private readonly frames: VideoFramesPort,
  ) {}

  async list(caller: Caller, projectId: number, query: SampleListQuery): Promise<Page<SampleOut>> {
    const project = await this.access.project(caller, projectId, 'project.read');
    let assignee = query.assignee === undefined ? undefined : query.assignee === 'me' ? caller.userId : query.assignee === 'none' ? null : Number(query.assignee);
    // An annotator kept to their assignments sees their samples only, as with images.
    const role = (await this.access.roleOf(caller, project))!;
    const restrictedTo = await this.access.assignedOnlyUser(caller, project, role);
    if (restrictedTo !== null) {
      if (assignee !== undefined && assignee !== restrictedTo) return { items: [], total: 0 };
      assignee = restrictedTo;
    }
    const filters = { modality: query.modality, split: query.split, label: query.label, assignee, review_state: query.review_state };
    const filtered = Object.values(filters).some((v) => v !== undefined);
    // Hidden ground truth (issue 29) is listed and filtered as the unlabelled, unreviewed sample it looks like.
    const hideGroundTruth = await this.access.hidesSampleGroundTruth(caller, project, role);
    const [rows, total] = await Promise.all([
      this.samples.listPage(projectId, { ...filters, hideGroundTruth }, query),
      // The unfiltered total is the project's counter: listing never counts a large table.
      filtered ? this.samples.count(projectId, { ...filters, hideGroundTruth }) : Promise.resolve(project.sample_count),
    ]);
    const hidden = hideGroundTruth ? await this.access.hiddenSamplesAmong(caller, project, role, rows.map((r) => r.id)) : new Set<number>();
    return { items: rows.map((r) => (hidden.has(r.id) ? untouchedSampleOut(r) : toSampleOut(r))), total };
  }

  /**
   * The tabular target's column and kind, so that a page never guesses it from the rows it happens to show: the
   * import's declaration (sample_schemas), else what every tabular sample of the project says (a tabular value is
   * always a number: one is regression). Hidden ground truth counts too; only the kind shows, not a value.
   */
  async target(caller: Caller, projectId: number): Promise<SampleTargetOut> {
    await this.access.project(caller, projectId, 'project.read');
    const schema = (await this.samples.findSchema(projectId, 'tabular')) as TabularSchema | undefined;
    if (schema) return { column: schema.target, task: schema.task };
    if (await this.samples.hasSample(projectId, 'tabular', true)) return { column: null, task: 'regression' };
    return { column: null, task: (await this.samples.hasSample(projectId, 'tabular')) ? 'classification' : null };
  }

  async get(caller: Caller, sampleId: number): Promise<SampleOut> {
    const row = await this.workflow.visible(caller, sampleId, 'project.read');
    return (await this.hides(caller, row.project_id, sampleId)) ? untouchedSampleOut(row) : toSampleOut(row);
  }

  /** Whether the sample is ground truth hidden from the caller (issue 29). */
  private async hides(caller: Caller, projectId: number, sampleId: number): Promise<boolean> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const role = (await this.access.roleOf(caller, project))!;
    return (await this.access.hiddenSamplesAmong(caller, project, role, [sampleId])).has(sampleId);
  }

  /** 403 below project admin while the project keeps ground-truth samples: they label through their tasks (issue 29). */
  private async assertLabelsThroughTasks(caller: Caller, row: { project_id: number }): Promise<void> {
    const project = await this.access.project(caller, row.project_id, 'project.read');
    await this.access.assertLabelsThroughTasks(caller, project, (await this.access.roleOf(caller, project))!, 'samples');
  }

  /** One sample (or a list); new class names become classes of the project, all in one transaction. */
  async create(caller: Caller, projectId: number, body: SampleCreateBody): Promise<{ one: true; item: SampleOut } | { one: false; created: number; items: SampleOut[] }> {
    await this.access.project(caller, projectId, 'images.write');
    const inputs = 'items' in body ? body.items : [body];
    const loc = (i: number) => ('items' in body ? ['body', 'items', i] : ['body']);
    const now = new Date().toISOString();
    const classNames = new Set<string>();
    const rows: SampleInsert[] = inputs.map((input: SampleCreate, i) => {
      try {
        const data = normaliseData(input.modality, input.data);
        const labels = storedLabels(input.modality, data, input);
        for (const name of labels.classNames) classNames.add(name);
        const sample: ReadSample = { line: i + 1, modality: input.modality, split: input.split ?? null, data: JSON.stringify(data), metadata: input.metadata ? JSON.stringify(input.metadata) : null, ...labels };
        return sampleRow(projectId, sample, now);
      } catch (err) {
        if (err instanceof SampleRuleError) throw ValidationError.at(loc(i), err.message);
        throw err;
      }
    });
    const created = await this.samples.transaction(async (trx) => {
      await this.samples.ensureClasses(projectId, [...classNames], paletteColor, trx);
      return this.samples.insertMany(projectId, rows, trx);
    });
    const items = created.map(toSampleOut);
    return 'items' in body ? { one: false, created: items.length, items } : { one: true, item: items[0] };
  }

  /**
   * Changes labels, spans, value or split. Class names must be classes of the project; another user's live lock on
   * the sample refuses it (409). The change and its revision are written in one transaction.
   */
  async update(caller: Caller, sampleId: number, input: SampleUpdate): Promise<SampleOut> {
    const sample = await this.workflow.visible(caller, sampleId, 'annotations.write');
    await this.assertLabelsThroughTasks(caller, sample);
    const current = toSampleOut(sample);
    const labels = editedLabels(sample.modality, current.data, current, input);
    const { classNames, ...stored } = labels;
    if (classNames.length > 0) {
      const known = new Set(await this.samples.classNamesIn(sample.project_id, classNames));
      const unknown = classNames.filter((n) => !known.has(n));
      if (unknown.length > 0) throw ValidationError.at(['body', input.spans !== undefined && input.label === undefined ? 'spans' : 'label'], `not a class of this project: ${unknown.join(', ')}`);
    }
    // Group commit: label edits from many annotators share transactions. The lock is checked inside the write's
    // transaction, so a lock taken before the write commits is seen.
    const row = await this.writes.run(async (trx) => {
      await this.workflow.assertWritable(caller, sampleId, trx);
      const updated = await this.samples.update(sample, {
        label: stored.label,
        labels: stored.labels,
        spans: stored.spans,
        value: stored.value,
        labelled: stored.labelled,
        split: input.split !== undefined ? input.split : sample.split,
      }, trx);
      const snapshot = (s: SampleOut) => JSON.stringify({ label: s.label, spans: s.spans, value: s.value, split: s.split });
      await this.samples.addRevision({ sample_id: sampleId, project_id: sample.project_id, before: snapshot(current), after: snapshot(toSampleOut(updated)), user_id: caller.userId }, trx);
      return updated;
    });
    return toSampleOut(row);
  }

  async file(caller: Caller, sampleId: number): Promise<SampleFile> {
    const sample = await this.workflow.visible(caller, sampleId, 'project.read');
    if (!sample.blob_key || !sample.sha256) throw new NotFoundError(`Sample ${sampleId} has no media file`);
    const data = JSON.parse(sample.data) as { file: string; mime_type: string };
    const key = sample.blob_key;
    const size = await this.blobs.size(key);
    if (size === null) throw new NotFoundError(`Sample ${sampleId} has no media file`);
    return { filename: data.file.replace(/[^\w.-]+/g, '_'), mimeType: data.mime_type, size, etag: sample.sha256, open: (range) => this.blobs.stream(key, range) };
  }

  /**
   * Sends a video sample (read access, assigned-only annotators included) to an image project as frames: the videos
   * module checks the target (images.write on the whole project), copies the file and starts the decoding job.
   */
  async sendToFrames(caller: Caller, sampleId: number, body: SampleFramesBody): Promise<SampleFramesOut> {
    const sample = await this.workflow.visible(caller, sampleId, 'project.read');
    if (sample.modality !== 'video' || !sample.blob_key) {
      throw ValidationError.at(['path', 'sample_id'], `Sample ${sampleId} is ${sample.modality === 'audio' ? 'an' : 'a'} ${sample.modality} sample: only a video sample becomes frames`);
    }
    const data = JSON.parse(sample.data) as { file?: string };
    const segments = ((parse(sample.spans) ?? []) as TimeSegment[]).filter((s) => 'start_s' in s);
    return this.frames.fromSample(caller, body.project_id, { sampleId, name: data.file ?? `sample-${sampleId}.mp4`, blobKey: sample.blob_key, segments }, {
      step: body.step ?? 1,
      startS: body.start_s,
      endS: body.end_s,
    });
  }

  // Imports: all or nothing. The file is checked whole first; only then are rows written, in batches.

  async importText(caller: Caller, projectId: number, upload: SampleUpload): Promise<ImportOut> {
    await this.access.project(caller, projectId, 'images.write');
    const f = upload.fields;
    const fields = {
      text: this.field(f, 'text_field', 'text'),
      label: this.field(f, 'label_field', 'label'),
      spans: this.field(f, 'spans_field', 'spans'),
      explicit: { label: !!f.label_field, spans: !!f.spans_field },
    };
    const isJsonl = (await firstCharacter(upload.path)) === '{';
    const result = await this.store(projectId, () => readTextSamples(upload.path, fields, isJsonl));
    return { created: result.created, modality: 'text', classes: result.classes };
  }

  async importTabular(caller: Caller, projectId: number, upload: SampleUpload): Promise<ImportOut> {
    await this.access.project(caller, projectId, 'images.write');
    const target = upload.fields.target?.trim();
    if (!target) throw ValidationError.at(['body', 'target'], 'Field required: the name of the target (label) column', 'missing');
    const task = upload.fields.task || undefined;
    if (task !== undefined && task !== 'classification' && task !== 'regression') throw ValidationError.at(['body', 'task'], 'must be classification or regression', 'enum');
    let schema: TabularSchema;
    let rows: number;
    try {
      ({ schema, rows } = await inferTabularSchema(upload.path, target, task));
    } catch (err) {
      if (err instanceof LineError) throw lineIssue(err);
      throw err;
    }
    const before = (await this.samples.findSchema(projectId, 'tabular')) as TabularSchema | undefined;
    if (before) {
      const names = (s: TabularSchema) => s.columns.map(([n]) => n).join('\u0000');
      if (before.target !== schema.target || names(before) !== names(schema)) {
        throw ValidationError.at(['body', 'file'], `the project's tabular samples have the columns ${before.columns.map(([n]) => n).join(', ')} and target ${before.target}; this file differs`);
      }
      if (before.task !== schema.task) throw ValidationError.at(['body', 'task'], `the project's tabular target is a ${before.task} target`);
      schema = {
        ...schema,
        // A column keeps the broader of the two types (a later file with decimals turns an integer column into a number one).
        columns: schema.columns.map(([n, t], i) => [n, t === before.columns[i][1] ? t : t === 'number' || before.columns[i][1] === 'number' ? 'number' : 'text']),
        classes: [...new Set([...before.classes, ...schema.classes])].sort(),
      };
    }
    // The schema inference has read and checked every row already: the rows are stored in one more pass.
    const result = await this.store(projectId, () => readTabularSamples(upload.path, schema), schema.classes, undefined, { rows });
    await this.samples.saveSchema(projectId, 'tabular', schema);
    return { created: result.created, modality: 'tabular', columns: Object.fromEntries(schema.columns), target: schema.target, task: schema.task, classes: schema.classes };
  }

  async importJsonl(caller: Caller, projectId: number, upload: SampleUpload): Promise<ImportOut> {
    await this.access.project(caller, projectId, 'images.write');
    const modality = upload.fields.modality;
    if (modality !== 'audio' && modality !== 'video' && modality !== 'llm') throw ValidationError.at(['body', 'modality'], 'Field required: audio, video or llm', 'enum');
    let jsonlPath = upload.path;
    let jsonlName: string | undefined;
    let mediaRoot: string | null = null;
    if (await isZip(upload.path)) {
      mediaRoot = join(upload.dir, 'archive');
      await ensureFolder(mediaRoot);
      try {
        const extracted = await safeExtractZip(upload.path, mediaRoot, { maxTotalBytes: this.options.maxImportBytes, maxEntryBytes: Math.max(this.options.maxMediaBytes, this.options.maxImportBytes), maxEntries: this.options.maxMediaFiles + 10 });
        if (extracted.files > this.options.maxMediaFiles + 1) throw new PayloadTooLargeError(`The archive holds more than ${this.options.maxMediaFiles} files`);
      } catch (err) {
        if (err instanceof FormatError) {
          if (err.code === 'archive_too_large') throw new PayloadTooLargeError(err.message);
          throw ValidationError.at(['body', 'file'], `the archive is unsafe or unreadable: ${err.message}`);
        }
        throw err;
      }
      const jsonl = (await listFiles(mediaRoot)).filter((p) => p.toLowerCase().endsWith('.jsonl'));
      if (jsonl.length !== 1) throw ValidationError.at(['body', 'file'], `the archive must hold exactly one .jsonl file (found ${jsonl.length})`);
      jsonlPath = join(mediaRoot, jsonl[0]);
      jsonlName = jsonl[0];
    }
    const facts = new Map<string, MediaFacts>();
    const media = async (line: number, name: unknown) => {
      if (typeof name !== 'string' || name === '') throw new LineError(line, `names no ${modality} file (field "file")`);
      if (!mediaRoot) throw new LineError(line, `names the file "${name}", but the upload is not a zip holding it`);
      const unsafe = unsafeEntryName(name);
      if (unsafe) throw new LineError(line, `names the file "${name}", which ${unsafe}`);
      const path = resolve(mediaRoot, name);
      if (!path.startsWith(mediaRoot + sep)) throw new LineError(line, `names the file "${name}" outside the archive`);
      const size = await regularFileSize(path);
      if (size === null) throw new LineError(line, `names the file "${name}", which is missing from the zip`);
      if (size > this.options.maxMediaBytes) throw new PayloadTooLargeError(`${name} is larger than the limit of ${Math.round(this.options.maxMediaBytes / 1024 / 1024)} MB per file`);
      let known = facts.get(path);
      if (!known) {
        try {
          const probed = await probeMediaFile(path, modality as 'audio' | 'video');
          known = { sha256: await sha256OfFile(path), size, mime: probed.type.mime, ext: probed.type.ext, durationS: probed.durationS, sampleRate: probed.sampleRate, fps: probed.fps, channels: probed.channels };
        } catch (err) {
          if (err instanceof MediaRejectedError) throw new LineError(line, `names the file "${name}", which ${err.message}`);
          throw err;
        }
        facts.set(path, known);
      }
      return { path, name, facts: known };
    };
    const result = await this.store(projectId, () => readJsonlSamples(jsonlPath, modality, media), [], jsonlName);
    return { created: result.created, modality, classes: result.classes };
  }

  private field(fields: Record<string, string>, name: string, fallback: string): string {
    const value = fields[name];
    if (value === undefined || value === '') return fallback;
    if (value.length > 200) throw ValidationError.at(['body', name], 'at most 200 characters');
    return value;
  }

  /**
   * Checks every row (first pass), then creates the classes and stores media and rows in batches (second pass).
   * A failure in the second pass removes what it wrote, so the import leaves nothing behind either way. `checked`:
   * a first pass the caller already made over every row (the tabular schema inference), with its count.
   */
  private async store(
    projectId: number,
    read: () => AsyncGenerator<ReadSample[]>,
    knownClasses: string[] = [],
    file?: string,
    checked?: { rows: number },
  ): Promise<{ created: number; classes: string[] }> {
    const classes = new Set<string>(knownClasses);
    let count = checked?.rows ?? 0;
    if (count > this.options.maxImportSamples) throw new PayloadTooLargeError(`An import may create at most ${this.options.maxImportSamples} samples`);
    if (!checked) {
      try {
        for await (const samples of read()) {
          for (const sample of samples) {
            for (const name of sample.classNames) classes.add(name);
            if (classes.size > 10_000) throw new LineError(sample.line, 'brings the number of classes over 10,000');
          }
          count += samples.length;
          if (count > this.options.maxImportSamples) throw new PayloadTooLargeError(`An import may create at most ${this.options.maxImportSamples} samples`);
        }
      } catch (err) {
        if (err instanceof LineError) throw lineIssue(err, file);
        throw err;
      }
    }
    if (count === 0) throw ValidationError.at(['body', 'file'], 'the file holds no samples');

    const ids: number[] = [];
    const blobs = new Map<string, string>();
    let createdClasses: string[] = [];
    try {
      ({ created: createdClasses } = await this.samples.transaction((trx) => this.samples.ensureClasses(projectId, [...classes], paletteColor, trx)));
      const now = new Date().toISOString();
      let batch: SampleInsert[] = [];
      const flush = async () => {
        const rows = batch;
        batch = [];
        for (const id of await this.samples.transaction((trx) => this.samples.insertManyIds(projectId, rows, trx))) ids.push(id);
      };
      for await (const samples of read()) for (const sample of samples) {
        const media = sample.media;
        const row = sampleRow(projectId, sample, now);
        if (media) {
          const facts = JSON.parse(sample.data) as { mime_type: string };
          const sha256 = await sha256OfFile(media.path);
          const ext = extensionOf(facts.mime_type);
          const key = sampleBlobKey(projectId, sha256, ext);
          if (!blobs.has(key) && !(await this.samples.shaInUse(projectId, sha256))) {
            await this.blobs.putStream(key, readStream(media.path));
            blobs.set(key, sha256);
          }
          row.blob_key = key;
          row.sha256 = sha256;
        }
        batch.push(row);
        if (batch.length >= IMPORT_BATCH) await flush();
      }
      if (batch.length > 0) await flush();
    } catch (err) {
      await this.samples.deleteMany(projectId, ids);
      for (const [key, sha] of blobs) if (!(await this.samples.shaInUse(projectId, sha))) await this.blobs.delete(key);
      await this.samples.deleteUnusedClasses(projectId, createdClasses);
      throw err instanceof LineError ? lineIssue(err, file) : err;
    }
    return { created: ids.length, classes: [...classes].sort() };
  }

  // Splits.

  /** Random or stratified (by label; by target quantiles for regression) splits, seeded and repeatable. */
  async split(caller: Caller, projectId: number, body: SampleSplitsBody): Promise<SplitCounts & { strategy: string; seed: number }> {
    await this.access.project(caller, projectId, 'versions.write');
    if (body.train + body.valid + body.test !== 100) throw ValidationError.at(['body'], 'train + valid + test must be 100');
    const strategy = body.strategy ?? 'stratified';
    const seed = body.seed ?? 42;
    const rows = await this.samples.labelsOf(projectId, body.modality);
    const percentages = { train: body.train, valid: body.valid, test: body.test };
    let assignment: Map<number, SplitName>;
    if (strategy === 'random') {
      assignment = assignRandom(rows.map((r) => r.id), percentages, seed);
    } else {
      const numeric = rows.map((r) => (r.value === null ? null : JSON.parse(r.value))).map((v) => (typeof v === 'number' ? v : null));
      const bins = quantileBins(numeric.filter((v): v is number => v !== null), 5);
      assignment = assignStratified(rows.map((r, i) => {
        const labels = r.labels ? (JSON.parse(r.labels) as string[]) : r.label ? [r.label] : [];
        const v = numeric[i];
        return { id: r.id, labels: labels.length > 0 ? labels : v !== null ? [`q${bins(v)}`] : [] };
      }), percentages, seed);
    }
    await this.samples.setSplits(projectId, assignment);
    const counts: SplitCounts = { train: 0, valid: 0, test: 0 };
    for (const split of assignment.values()) counts[split]++;
    return { ...counts, strategy, seed };
  }

  // Revisions.

  async revisions(caller: Caller, sampleId: number): Promise<SampleRevisionOut[]> {
    const sample = await this.workflow.visible(caller, sampleId, 'project.read');
    // Hidden ground truth (issue 29) has no history to show, like an untouched sample.
    if (await this.hides(caller, sample.project_id, sampleId)) return [];
    return (await this.samples.revisions(sampleId)).map((r) => ({
      id: r.id,
      sample_id: r.sample_id,
      action: r.action,
      before: parse(r.before),
      after: parse(r.after),
      user_id: r.user_id,
      created_at: r.created_at,
    }));
  }

  // Assignments and reviews: the same roles, permissions and states as for images.

  /**
   * Assigns samples (by id, or the next `count` unassigned ones) to a member who can annotate, or withdraws their
   * assignment (user_id null). A sample outside the project or an assignee who cannot annotate is 422 and changes
   * nothing; a sample reassigned by another request meanwhile is 409 and changes nothing. Each changed sample gets an
   * `assign` revision.
   */
  async assign(caller: Caller, projectId: number, input: SampleAssignBody): Promise<SampleAssignOut> {
    const project = await this.access.project(caller, projectId, 'assignments.write');
    if ((input.sample_ids === undefined) === (input.count === undefined)) throw ValidationError.at(['body'], 'Send exactly one of sample_ids and count');
    if (input.user_id === null && input.sample_ids === undefined) throw ValidationError.at(['body', 'sample_ids'], 'Name the samples whose assignment to withdraw', 'missing');
    if (input.user_id !== null) await this.workflow.assertAssignable(project, input.user_id);
    let changes: { id: number; before: number | null }[];
    if (input.sample_ids) {
      const current = await this.samples.assigneesOf(projectId, [...new Set(input.sample_ids)]);
      const missing = input.sample_ids.findIndex((id) => !current.has(id));
      if (missing >= 0) throw ValidationError.at(['body', 'sample_ids', missing], `Sample ${input.sample_ids[missing]} is not a sample of project ${projectId}`);
      changes = [...current]
        .filter(([, before]) => before !== input.user_id && !(input.only_unassigned && before !== null))
        .map(([id, before]) => ({ id, before }));
    } else {
      changes = (await this.samples.unassigned(projectId, input.count!, input.modality)).map((id) => ({ id, before: null }));
    }
    if (changes.length > 0 && !(await this.samples.assign(projectId, changes, input.user_id, caller.userId))) {
      throw new ConflictError('Some of the samples were assigned by someone else meanwhile; nothing changed, try again');
    }
    return { user_id: input.user_id, sample_ids: changes.map((c) => c.id).sort((a, b) => a - b) };
  }

  /** Submits a sample for review: it turns `pending` (409 when it already is). */
  async submit(caller: Caller, sampleId: number): Promise<SampleOut> {
    const sample = await this.workflow.visible(caller, sampleId, 'reviews.submit');
    await this.assertLabelsThroughTasks(caller, sample);
    const conflict = () => new ConflictError(`Sample ${sampleId} is already waiting for review`);
    if (sample.review_state === 'pending') throw conflict();
    const row = await this.samples.setReview(sample, { notFrom: 'pending' }, { review_state: 'pending' }, {
      sample_id: sampleId, action: 'submit', before: { review_state: sample.review_state }, after: { review_state: 'pending' },
    }, caller.userId);
    if (!row) throw conflict();
    return toSampleOut(row);
  }

  /**
   * Approves, rejects or asks for changes on a pending sample (409 otherwise); `changes` needs a comment (422). The
   * decision, its comment, who and when are kept on the sample and in a `review` revision.
   */
  async review(caller: Caller, sampleId: number, input: ReviewDecide): Promise<SampleOut> {
    const sample = await this.workflow.visible(caller, sampleId, 'reviews.decide');
    const { state, comment } = reviewDecision(input);
    const conflict = (state: string) => new ConflictError(`Sample ${sampleId} is not waiting for review (${state})`);
    if (sample.review_state !== 'pending') throw conflict(sample.review_state);
    const row = await this.samples.setReview(sample, { from: 'pending' }, {
      review_state: state, review_comment: comment || null, reviewed_by: caller.userId, reviewed_at: new Date().toISOString(),
    }, {
      sample_id: sampleId, action: 'review', before: { review_state: 'pending', review_comment: sample.review_comment }, after: { review_state: state, review_comment: comment || null },
    }, caller.userId);
    if (!row) throw conflict('decided meanwhile');
    return toSampleOut(row);
  }
}

/** Bin index (0..n-1) of a value among the quantiles of `values`. */
/** The row a sample is stored as, whichever way it came in (the JSON body or an import file); media keys are added by the import. */
function sampleRow(projectId: number, sample: ReadSample, now: string): SampleInsert {
  const { modality, split, data, metadata, label, labels, spans, value, labelled } = sample;
  return { project_id: projectId, modality, split, data, metadata, label, labels, spans, value, labelled, blob_key: null, sha256: null, created_at: now, updated_at: now };
}

function quantileBins(values: number[], n: number): (v: number) => number {
  const sorted = [...values].sort((a, b) => a - b);
  const cuts = Array.from({ length: n - 1 }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / n)] ?? Infinity);
  return (v) => {
    let bin = 0;
    while (bin < cuts.length && v >= cuts[bin]) bin++;
    return bin;
  };
}

const EXTENSIONS: Record<string, string> = {
  'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/flac': 'flac', 'audio/ogg': 'ogg', 'audio/mp4': 'm4a', 'audio/webm': 'webm',
  'video/mp4': 'mp4', 'video/webm': 'webm', 'video/quicktime': 'mov', 'video/ogg': 'ogv',
};
const extensionOf = (mime: string) => EXTENSIONS[mime] ?? 'bin';

async function firstCharacter(path: string): Promise<string> {
  return (await readHead(path, 4096)).toString('utf8').replace(/^\uFEFF/, '').trimStart().charAt(0);
}

async function isZip(path: string): Promise<boolean> {
  const head = await readHead(path, 4);
  return head.length === 4 && head.readUInt32LE(0) === 0x04034b50;
}

export type { SampleModality };
