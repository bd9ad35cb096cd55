/**
 * The version generation job: reads the version's frozen snapshot, runs every source image through the recipe
 * (bounded concurrency), stores each output under projects/{pid}/versions/{number}/{split}/{filename} and writes
 * the output rows in batches. Rerunning it (a retry, or a regenerate) first removes what an earlier run left, and
 * produces the same bytes: every random choice comes from the version seed.
 */
import { createHash } from 'node:crypto';
import type { JobContext } from '../../jobs/job-queue.js';
import {
  executePlan,
  outputsPerImage,
  planOutputs,
  type RecipeAnnotation,
  type RecipeInput,
  type Recipe,
  type SourceDescriptor,
} from '../../imaging/recipe/index.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { versionFileKey, versionPrefix } from '../../storage/keys.js';
import { deleteVersionFiles } from '../../storage/lifecycle.js';
import { filenameStem } from '../images/stored-filename.logic.js';
import { carriedColumns, flipOrders, fromRecipeGeometry, toRecipeAnnotation, type CarriedAnnotation, type FrozenAnnotation } from './output-geometry.logic.js';
import type { OutputRow, VersionSourceRow, VersionsRepository } from './versions.repository.js';
import type { VersionRow } from './versions.schemas.js';
import { drainConcurrently, InOrder } from '../../lib/batches.js';
import { exifOrientation } from '../../imaging/image-probe.js';

export const GENERATE_JOB = 'versions.generate';
export interface GeneratePayload {
  version_id: number;
}

/** Source images processed at once: two keep both cores busy without queueing work in libvips' pool. */
export const GENERATION_CONCURRENCY = 2;
/** Output rows written per transaction. */
const WRITE_BATCH = 100;
/** Snapshot rows read per query. */
const READ_PAGE = 128;
const JPEG_QUALITY = 90;
/** The counts of a version without outputs. */
const NO_OUTPUTS = JSON.stringify({ train: 0, valid: 0, test: 0, total: 0 });

export function recipeOf(version: VersionRow): Recipe {
  return { preprocessing: JSON.parse(version.preprocessing_config), augmentation: JSON.parse(version.augmentation_config) };
}

/** Stopped because the version was deleted while it generated. */
class VersionGone extends Error {}

export class VersionGenerator {
  constructor(
    private readonly versions: VersionsRepository,
    private readonly blobs: BlobStore,
  ) {}

  async run(ctx: JobContext<GeneratePayload>): Promise<unknown> {
    const version = await this.versions.find(ctx.payload.version_id);
    if (!version) return { skipped: 'version deleted' };
    const prefix = versionPrefix(version.project_id, version.number);
    try {
      await this.versions.update(version.id, { status: 'generating', progress: 0, error: null, finished_at: null });
      await this.versions.clearOutputs(version.id);
      await this.blobs.deletePrefix(prefix);
      const counts = await this.generate(version, prefix, ctx);
      const image_counts = JSON.stringify(counts);
      const finished = await this.versions.update(version.id, { status: 'ready', progress: 1, image_counts, finished_at: new Date().toISOString() });
      if (!finished) throw new VersionGone();
      return { version_id: version.id, image_counts: counts };
    } catch (err) {
      // A failed version keeps none of its partial output: no rows, no files, and counts of nothing.
      await this.versions.clearOutputs(version.id).catch(() => undefined);
      await deleteVersionFiles(this.blobs, version.project_id, version.number).catch(() => undefined);
      if (err instanceof VersionGone) return { skipped: 'version deleted' };
      const message = err instanceof Error ? err.message : String(err);
      await this.versions.update(version.id, { status: 'failed', error: message, image_counts: NO_OUTPUTS, finished_at: new Date().toISOString() });
      throw err;
    }
  }

  /**
   * Versions left pending or generating by a process that stopped (the in-process queue's generations die with it)
   * are failed at boot, like their jobs, and what they had written is removed as a failed generation's would be.
   */
  async failInterrupted(): Promise<void> {
    for (const version of await this.versions.failInterrupted(NO_OUTPUTS)) {
      await this.versions.clearOutputs(version.id);
      await deleteVersionFiles(this.blobs, version.project_id, version.number);
    }
  }

  private async generate(version: VersionRow, prefix: string, ctx: JobContext<GeneratePayload>) {
    const recipe = recipeOf(version);
    const classes = await this.versions.classes(version.id);
    const classIndex = new Map(classes.map((c) => [c.name, c.index]));
    // Keypoints are mirrored by the skeleton of the class they end in: a class the recipe renames into another takes
    // that class's flip order (the version keeps one skeleton per output class).
    const flips = flipOrders(classes);
    for (const [from, to] of Object.entries(recipe.preprocessing.classes.remap)) {
      const order = flips.get(to);
      if (order && !flips.has(from)) flips.set(from, order);
    }
    const summaries = await this.versions.sourceSummaries(version.id);
    const pools = await this.mosaicPools(recipe, summaries);
    const partner = async (imageId: number | string): Promise<RecipeInput<CarriedAnnotation>> => {
      const source = await this.versions.sourceBySourceImage(version.id, Number(imageId));
      if (!source) throw new Error(`mosaic partner ${imageId} is not in version ${version.id}`);
      return { image: await this.sourceBytes(source), annotations: frozenAnnotations(source, flips) };
    };

    const total = summaries.length;
    let done = 0;
    // Outputs are written in the sources' order whatever order the workers finish in, one batch after another: two
    // generations of the same inputs hold the same rows in the same order, so a trainer given the same seed sees the
    // same batches and reproduces its numbers.
    const inOrder = new InOrder<OutputRow[]>();
    const pending: OutputRow[] = [];
    let writing: Promise<void> = Promise.resolve();
    const flush = async () => {
      const batch = pending.splice(0);
      await (writing = writing.then(() => this.versions.insertOutputs(batch)));
      const progress = total === 0 ? 1 : done / total;
      if (!(await this.versions.update(version.id, { progress }))) throw new VersionGone();
      await ctx.progress(progress);
    };

    const sources = new SourceReader(this.versions, version.id);
    // After a failure no worker takes another source, and the failure is thrown only once every worker has stopped:
    // the cleanup that follows must not run while a worker is still storing files or rows.
    const failures: unknown[] = [];
    const next = async () => {
      if (failures.length > 0) return undefined;
      try {
        return await sources.next();
      } catch (err) {
        failures.push(err);
        return undefined;
      }
    };
    await drainConcurrently(GENERATION_CONCURRENCY, next, async ({ source, sequence }) => {
      try {
        const rows = await this.renderSource(version, recipe, prefix, source, classIndex, flips, pools.get(source.split), partner);
        for (const ready of inOrder.put(sequence, rows)) pending.push(...ready);
        done++;
        if (pending.length >= WRITE_BATCH) await flush();
      } catch (err) {
        failures.push(err);
      }
    });
    if (failures.length > 0) throw failures[0];
    await flush();

    const counts = await this.versions.outputCounts(version.id);
    const train = counts.train ?? 0;
    const valid = counts.valid ?? 0;
    const test = counts.test ?? 0;
    return { train, valid, test, total: train + valid + test };
  }

  /** Every output of one source image: files stored, rows returned for the next batch write. */
  private async renderSource(
    version: VersionRow,
    recipe: Recipe,
    prefix: string,
    source: VersionSourceRow,
    classIndex: Map<string, number>,
    flips: ReadonlyMap<string, number[]>,
    pool: SourceDescriptor[] | undefined,
    partner: (imageId: number | string) => Promise<RecipeInput<CarriedAnnotation>>,
  ): Promise<OutputRow[]> {
    const image = await this.sourceBytes(source);
    const descriptor: SourceDescriptor = { id: source.source_image_id, width: source.width, height: source.height, orientation: await exifOrientation(image) };
    const annotations = frozenAnnotations(source, flips);
    const outputs = outputsPerImage(recipe, source.split);
    const stem = `${filenameStem(source.filename)}-${source.source_image_id}`;
    const rows: OutputRow[] = [];
    for (let outputIndex = 0; outputIndex < outputs; outputIndex++) {
      const plan = planOutputs({ recipe, seed: version.seed, source: descriptor, outputIndex, split: source.split, mosaicPool: pool });
      const results = await executePlan({ image, annotations }, plan, { format: 'jpeg', quality: JPEG_QUALITY, partner });
      for (const result of results) {
        const filename = `${stem}${outputs > 1 ? `-a${outputIndex}` : ''}${result.tile ? `-r${result.tile.row}c${result.tile.column}` : ''}.jpg`;
        await this.blobs.put(versionFileKey(prefix, source.split, filename), result.image);
        rows.push({
          image: {
            version_id: version.id,
            split: source.split,
            filename,
            blob_key: versionFileKey(prefix, source.split, filename),
            width: result.width,
            height: result.height,
            source_image_id: source.source_image_id,
            lineage: JSON.stringify(result.steps),
            sha256: createHash('sha256').update(result.image).digest('hex'),
            // A frame stays a frame of its video where it is its source's only output (a video holds one image a frame).
            ...(outputs === 1 && results.length === 1 ? { video_id: source.video_id, frame: source.frame } : {}),
          },
          annotations: result.annotations.flatMap((a) => {
            const index = classIndex.get(a.class_name);
            if (index === undefined) return [];
            const out = fromRecipeGeometry(a.geometry);
            return [{ class_name: a.class_name, class_index: index, annotation_type: out.annotation_type, geometry: JSON.stringify(out.geometry), ...carriedColumns(a) }];
          }),
        });
      }
    }
    return rows;
  }

  private async sourceBytes(source: { source_image_id: number; blob_key: string }): Promise<Buffer> {
    try {
      return await this.blobs.get(source.blob_key);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw err;
      throw new Error(`The file of source image ${source.source_image_id} is gone (the image was deleted and no longer kept)`);
    }
  }

  /** Per split, the images a mosaic may draw from; only read (orientation needs each file's header) when mosaics are on. */
  private async mosaicPools(recipe: Recipe, summaries: { source_image_id: number; split: string; blob_key: string; width: number; height: number }[]) {
    const pools = new Map<string, SourceDescriptor[]>();
    if (!recipe.augmentation.enabled || recipe.augmentation.mosaic <= 0) return pools;
    for (const s of summaries) {
      const orientation = await exifOrientation(await this.sourceBytes(s));
      const list = pools.get(s.split) ?? [];
      list.push({ id: s.source_image_id, width: s.width, height: s.height, orientation });
      pools.set(s.split, list);
    }
    return pools;
  }
}

/** One output of a recipe preview: the image (JPEG) with its annotations in output pixels, and its lineage. */
export interface PreviewOutput {
  image: Buffer;
  width: number;
  height: number;
  steps: unknown[];
  annotations: { class_name: string; annotation_type: string; geometry: object; attributes: Record<string, unknown>; group_id: number | null }[];
}

/**
 * The first outputs a recipe gives for one image, rendered exactly as generation would for a training image with
 * this seed (mosaics have no partners here, so they are left out), up to `limit` outputs; nothing is stored.
 */
export async function previewOutputs(
  recipe: Recipe,
  seed: number,
  source: { id: number; width: number; height: number; image: Buffer },
  annotations: FrozenAnnotation[],
  limit: number,
  flips?: ReadonlyMap<string, number[]>,
): Promise<PreviewOutput[]> {
  const descriptor: SourceDescriptor = { id: source.id, width: source.width, height: source.height, orientation: await exifOrientation(source.image) };
  const input = { image: source.image, annotations: annotations.flatMap((a) => toRecipeAnnotation(a, flips) ?? []) };
  const outputs: PreviewOutput[] = [];
  const perImage = outputsPerImage(recipe, 'train');
  for (let outputIndex = 0; outputIndex < perImage && outputs.length < limit; outputIndex++) {
    const plan = planOutputs({ recipe, seed, source: descriptor, outputIndex, split: 'train', mosaicPool: undefined });
    for (const result of await executePlan(input, plan, { format: 'jpeg', quality: JPEG_QUALITY })) {
      if (outputs.length >= limit) break;
      outputs.push({
        image: result.image,
        width: result.width,
        height: result.height,
        steps: result.steps,
        annotations: result.annotations.map((a) => {
          const out = fromRecipeGeometry(a.geometry);
          return { class_name: a.class_name, annotation_type: out.annotation_type, geometry: out.geometry as object, attributes: a.attributes ?? {}, group_id: a.group_id ?? null };
        }),
      });
    }
  }
  return outputs;
}

function frozenAnnotations(source: VersionSourceRow, flips: ReadonlyMap<string, number[]>): CarriedAnnotation[] {
  return (JSON.parse(source.annotations) as FrozenAnnotation[]).flatMap((a) => toRecipeAnnotation(a, flips) ?? []);
}

/** Reads the snapshot page by page as workers ask for sources; one query at a time. */
class SourceReader {
  private buffer: VersionSourceRow[] = [];
  private after = 0;
  private given = 0;
  private exhausted = false;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly versions: VersionsRepository,
    private readonly versionId: number,
  ) {}

  /** The next source and its place in the version's order (numbered as it is taken, so callers may run at once). */
  async next(): Promise<{ source: VersionSourceRow; sequence: number } | undefined> {
    while (this.buffer.length === 0 && !this.exhausted) {
      this.loading ??= this.load().finally(() => (this.loading = null));
      await this.loading;
    }
    const source = this.buffer.shift();
    return source && { source, sequence: this.given++ };
  }

  private async load(): Promise<void> {
    const page = await this.versions.sources(this.versionId, this.after, READ_PAGE);
    if (page.length < READ_PAGE) this.exhausted = true;
    if (page.length > 0) this.after = page[page.length - 1].id;
    this.buffer.push(...page);
  }
}
