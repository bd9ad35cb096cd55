import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify, type Stringifier } from 'csv-stringify';
import { stringify as toYaml } from 'yaml';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ZipWriter } from '../../formats/zip/zip-writer.js';
import { ConflictError, ValidationError } from '../../http/errors.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { TabularDataSource, TabularLayout } from '../../training/tabular-data.js';
import type { ExportsRepository } from '../exports/exports.repository.js';
import { slugOf } from '../exports/exports.service.js';
import { exportBlobKey } from '../../storage/keys.js';
import { SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';
import type { TabularSchema } from './sample-readers.adapter.js';
import type { SampleRow, SamplesRepository } from './samples.repository.js';
import type { AdapterPrepareBody, AdapterPrepareOut, Modality } from './samples.schemas.js';

/** Hugging Face split names. */
const HUB_SPLITS: Record<SplitName, string> = { train: 'train', valid: 'validation', test: 'test' };
const HF_DTYPES: Record<string, string> = { integer: 'int64', number: 'float64', boolean: 'bool', category: 'string', text: 'string', date: 'string' };

/**
 * Writes a project's samples in the layouts training code reads: `tabular` (train/valid/test CSV and schema.json, the
 * folder the tabular trainer reads) and `hub` (a zipped folder `datasets.load_dataset(path)` loads: one JSONL per
 * split and a README.md dataset card whose YAML front matter gives the features, splits and class names). Every
 * prepared file becomes an export record, downloaded through `GET /api/exports/{filename}`. The tabular folder is also
 * what the tabular trainer reads (`adapters/train`): the training module writes it through `writeTabularFolder`.
 */
export class SampleAdapters implements TabularDataSource {
  constructor(
    private readonly samples: SamplesRepository,
    private readonly exportsRepository: ExportsRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly workDir: string,
  ) {}

  async prepare(caller: Caller, projectId: number, body: AdapterPrepareBody): Promise<AdapterPrepareOut> {
    const project = await this.access.wholeProject(caller, projectId, 'export');
    if (body.version_id !== undefined) {
      throw ValidationError.at(['body', 'version_id'], 'dataset versions freeze images; sample adapters read the project\'s current samples');
    }
    await mkdir(this.workDir, { recursive: true });
    const dir = await mkdtemp(join(this.workDir, 'adapter-'));
    try {
      const files = body.adapter === 'tabular' ? (await this.tabular(projectId, dir)).files : await this.hub(projectId, dir, body.modality);
      const out: AdapterPrepareOut['files'] = [];
      const written: string[] = [];
      try {
        for (const file of files) {
          const filename = `${slugOf(project.name) || 'project'}-project-${body.adapter}-${file.stem}-${randomBytes(8).toString('hex')}.${file.ext}`;
          const key = exportBlobKey(projectId, filename);
          const size = await this.blobs.putStream(key, createReadStream(file.path));
          written.push(key);
          await this.exportsRepository.insert({
            project_id: projectId,
            version_id: null,
            format: `${body.adapter}-${file.stem}`,
            filename,
            blob_key: key,
            size_bytes: size,
            image_count: file.samples,
            annotation_count: 0,
            include_unannotated: 1,
            created_by: caller.userId,
            created_at: new Date().toISOString(),
          });
          out.push({ name: file.name, url: `/api/exports/${encodeURIComponent(filename)}`, size_bytes: size });
        }
      } catch (err) {
        await Promise.all(written.map((key) => this.blobs.delete(key)));
        throw err;
      }
      return { adapter: body.adapter, files: out };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Writes the tabular training folder (`train.csv`, `valid.csv`, `test.csv`, `schema.json`) into `dir`, for the
   * tabular trainer, which reads it in place. No access check: the training service checked when the run was asked for.
   */
  async writeTabularFolder(projectId: number, dir: string): Promise<TabularLayout> {
    return (await this.tabular(projectId, dir)).layout;
  }

  /** What `writeTabularFolder` would write now: target, task, classes and rows per split; null without tabular samples. */
  async tabularLayout(projectId: number): Promise<TabularLayout | null> {
    const schema = (await this.samples.findSchema(projectId, 'tabular')) as TabularSchema | undefined;
    if (!schema) return null;
    const bySplit = await this.samples.splitCounts(projectId, 'tabular');
    const unsplit = bySplit.get(null) ?? 0;
    const anySplit = [...bySplit].some(([split, n]) => split !== null && n > 0);
    const counts = { train: bySplit.get('train') ?? 0, valid: bySplit.get('valid') ?? 0, test: bySplit.get('test') ?? 0 };
    if (!anySplit) counts.train = unsplit;
    return layoutOf(schema, counts);
  }

  /** Samples of a split: unsplit samples are left out, unless none has a split (then all are training data). */
  private async splitOf(projectId: number, modality: Modality): Promise<(row: SampleRow) => SplitName | null> {
    const bySplit = await this.samples.splitCounts(projectId, modality);
    const anySplit = [...bySplit].some(([split, n]) => split !== null && n > 0);
    return (row) => (row.split ? (row.split as SplitName) : anySplit ? null : 'train');
  }

  /** The one writer of the tabular folder: `prepare` stores its files, the trainer reads them in place. */
  private async tabular(projectId: number, dir: string) {
    const schema = (await this.samples.findSchema(projectId, 'tabular')) as TabularSchema | undefined;
    if (!schema) throw new ConflictError(`Project ${projectId} has no tabular samples (import a CSV first)`);
    const splitOf = await this.splitOf(projectId, 'tabular');
    const header = schema.columns.map(([name]) => name);
    const writers = new Map<SplitName, { csv: Stringifier; out: WriteStream; path: string; rows: number }>();
    for (const split of SPLIT_NAMES) {
      const path = join(dir, `${split}.csv`);
      // Cells as they are, never formula-neutralised: these files are data for a trainer, and a `'=up` in a CSV
      // whose schema.json says `=up` is a different class (spreadsheet exports neutralise; this is not one).
      const csv = stringify({ header: true, columns: header, cast: { boolean: (b) => (b ? 'true' : 'false') } });
      const out = createWriteStream(path);
      csv.pipe(out);
      writers.set(split, { csv, out, path, rows: 0 });
    }
    for await (const row of this.samples.iterate(projectId, 'tabular')) {
      const split = splitOf(row);
      if (!split) continue;
      const cells = (JSON.parse(row.data) as { row: Record<string, unknown> }).row;
      const target = schema.task === 'classification' ? row.label : row.value === null ? null : JSON.parse(row.value);
      const record = header.map((name) => {
        const cell = name === schema.target ? target : cells[name];
        return cell === null || cell === undefined ? '' : cell;
      });
      const w = writers.get(split)!;
      w.rows++;
      if (!w.csv.write(record)) await once(w.csv, 'drain');
    }
    for (const w of writers.values()) {
      w.csv.end();
      await once(w.out, 'finish');
    }
    const schemaPath = join(dir, 'schema.json');
    const document = { target: schema.target, task: schema.task, columns: Object.fromEntries(schema.columns), classes: schema.task === 'classification' ? schema.classes : [] };
    await writeText(schemaPath, `${JSON.stringify(document, null, 2)}\n`);
    const rows = (split: SplitName) => writers.get(split)!.rows;
    return {
      layout: layoutOf(schema, { train: rows('train'), valid: rows('valid'), test: rows('test') }),
      files: [
        ...SPLIT_NAMES.map((split) => ({ name: `${split}.csv`, stem: split, ext: 'csv', path: writers.get(split)!.path, samples: rows(split) })),
        { name: 'schema.json', stem: 'schema', ext: 'json', path: schemaPath, samples: 0 },
      ],
    };
  }

  private async hub(projectId: number, dir: string, modality?: Modality) {
    const chosen = modality ?? (await this.firstModality(projectId));
    if (!chosen) throw new ConflictError(`Project ${projectId} has no samples`);
    const classes = await this.samples.classNames(projectId);
    const index = new Map(classes.map((name, i) => [name, i]));
    const schema = chosen === 'tabular' ? ((await this.samples.findSchema(projectId, 'tabular')) as TabularSchema | undefined) : undefined;
    const splitOf = await this.splitOf(projectId, chosen);
    const folder = join(dir, 'dataset');
    await mkdir(folder);
    const outputs = new Map<SplitName, { out: WriteStream; rows: number }>();
    for (const split of SPLIT_NAMES) outputs.set(split, { out: createWriteStream(join(folder, `${HUB_SPLITS[split]}.jsonl`)), rows: 0 });
    let multiLabel = false;
    const media = new Map<string, string>();
    for await (const row of this.samples.iterate(projectId, chosen)) {
      if (row.labels) multiLabel = true;
    }
    for await (const row of this.samples.iterate(projectId, chosen)) {
      const split = splitOf(row);
      if (!split) continue;
      const data = JSON.parse(row.data) as Record<string, unknown>;
      const names: string[] = row.labels ? JSON.parse(row.labels) : row.label ? [row.label] : [];
      const record: Record<string, unknown> = { id: row.id };
      if (chosen === 'tabular') Object.assign(record, data.row);
      else if (chosen === 'text') record.text = data.text;
      else if (chosen === 'llm') for (const key of ['prompt', 'response', 'chosen', 'rejected', 'messages']) record[key] = data[key] ?? null;
      else {
        const ext = (row.blob_key ?? '').slice((row.blob_key ?? '').lastIndexOf('.') + 1);
        const file = `media/${row.sha256}.${ext}`;
        if (row.blob_key) media.set(file, row.blob_key);
        Object.assign(record, { file, duration_s: data.duration_s ?? null });
      }
      if (schema?.task === 'regression') record[schema.target] = row.value === null ? null : JSON.parse(row.value);
      else if (multiLabel) record.labels = names.map((n) => index.get(n) ?? -1);
      else record[schema?.target ?? 'label'] = names.length > 0 ? index.get(names[0]) ?? -1 : -1;
      if (chosen === 'text' || chosen === 'audio' || chosen === 'video') record.spans = row.spans ? JSON.parse(row.spans) : [];
      if (chosen === 'audio') record.transcript = row.value === null ? null : JSON.parse(row.value);
      if (chosen === 'llm') {
        const v = row.value === null ? {} : (JSON.parse(row.value) as { rating?: number; preference?: string });
        record.rating = v.rating ?? null;
        record.preference = v.preference ?? null;
      }
      const o = outputs.get(split)!;
      o.rows++;
      if (!o.out.write(`${JSON.stringify(record)}\n`)) await once(o.out, 'drain');
    }
    for (const o of outputs.values()) {
      o.out.end();
      await once(o.out, 'finish');
    }
    const classLabel = { class_label: { names: Object.fromEntries(classes.map((name, i) => [String(i), name])) } };
    const features: Record<string, unknown>[] = [{ name: 'id', dtype: 'int64' }];
    if (chosen === 'tabular' && schema) {
      for (const [name, type] of schema.columns) {
        if (name === schema.target) features.push(schema.task === 'regression' ? { name, dtype: 'float64' } : { name, dtype: classLabel });
        else features.push({ name, dtype: HF_DTYPES[type] });
      }
    } else {
      if (chosen === 'text') features.push({ name: 'text', dtype: 'string' });
      if (chosen === 'llm') {
        for (const name of ['prompt', 'response', 'chosen', 'rejected']) features.push({ name, dtype: 'string' });
        features.push({ name: 'messages', list: [{ name: 'role', dtype: 'string' }, { name: 'content', dtype: 'string' }] });
        features.push({ name: 'rating', dtype: 'int64' }, { name: 'preference', dtype: 'string' });
      }
      if (chosen === 'audio' || chosen === 'video') features.push({ name: 'file', dtype: 'string' }, { name: 'duration_s', dtype: 'float64' });
      features.push(multiLabel ? { name: 'labels', sequence: classLabel } : { name: 'label', dtype: classLabel });
      if (chosen === 'text') features.push({ name: 'spans', list: [{ name: 'start', dtype: 'int64' }, { name: 'end', dtype: 'int64' }, { name: 'label', dtype: 'string' }] });
      if (chosen === 'audio' || chosen === 'video') features.push({ name: 'spans', list: [{ name: 'start_s', dtype: 'float64' }, { name: 'end_s', dtype: 'float64' }, { name: 'label', dtype: 'string' }] });
      if (chosen === 'audio') features.push({ name: 'transcript', dtype: 'string' });
    }
    const splits = SPLIT_NAMES.filter((s) => outputs.get(s)!.rows > 0);
    const card = {
      configs: [{ config_name: 'default', data_files: splits.map((s) => ({ split: HUB_SPLITS[s], path: `${HUB_SPLITS[s]}.jsonl` })) }],
      dataset_info: { features, splits: splits.map((s) => ({ name: HUB_SPLITS[s], num_examples: outputs.get(s)!.rows })) },
    };
    const readme = `---\n${toYaml(card)}---\n\n# Versa project ${projectId} (${chosen} samples)\n\nExported by Versa. Load with \`datasets.load_dataset("path/to/this/folder")\`.\n\nClasses: ${classes.join(', ') || '(none)'}\n`;
    const zipPath = join(dir, 'hub.zip');
    const out = createWriteStream(zipPath);
    const zip = new ZipWriter(out);
    await zip.addBuffer('README.md', readme, { compress: true });
    for (const s of SPLIT_NAMES) if (outputs.get(s)!.rows > 0) await zip.addFile(`${HUB_SPLITS[s]}.jsonl`, join(folder, `${HUB_SPLITS[s]}.jsonl`), { compress: true });
    for (const [name, key] of media) await zip.addStream(name, this.blobs.stream(key));
    await zip.finish();
    const total = [...outputs.values()].reduce((n, o) => n + o.rows, 0);
    return [{ name: 'hub.zip', stem: 'dataset', ext: 'zip', path: zipPath, samples: total }];
  }

  private async firstModality(projectId: number): Promise<Modality | undefined> {
    for await (const row of this.samples.iterate(projectId, undefined, 1)) return row.modality;
    return undefined;
  }
}

function layoutOf(schema: TabularSchema, counts: TabularLayout['counts']): TabularLayout {
  return { target: schema.target, task: schema.task, classes: schema.task === 'classification' ? schema.classes : [], counts };
}

async function writeText(path: string, text: string): Promise<void> {
  const out = createWriteStream(path);
  out.end(text);
  await once(out, 'finish');
  await stat(path);
}
