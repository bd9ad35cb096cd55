import type { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { parseRecipe, recipeDefaults, type Recipe } from '../../imaging/recipe/index.js';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { deleteImageFiles, deleteVersionFiles } from '../../storage/lifecycle.js';
import { assignKeepingVideos } from '../splits/assign.logic.js';
import { SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';
import { checkPercentages, randomSeed } from '../splits/splits.service.js';
import { diffVersions } from './diff.logic.js';
import { FrameTracks } from '../exports/frame-tracks.logic.js';
import { GENERATE_JOB, previewOutputs, type GeneratePayload } from './generation.service.js';
import type { SourceAnnotation, SourceImage, VersionsRepository } from './versions.repository.js';
import { flipOrders, type FrozenAnnotation } from './output-geometry.logic.js';
import type { SplitConfig, VersionCreate, VersionPreviewOut, VersionPreviewRequest, VersionDiffOut, VersionImageOut, VersionImagesQuery, VersionOut, VersionRow } from './versions.schemas.js';

const DEFAULT_SPLIT: SplitConfig = { train: 70, valid: 20, test: 10 };

export class VersionsService {
  constructor(
    private readonly versions: VersionsRepository,
    private readonly access: ProjectAccess,
    private readonly queue: JobQueue,
    private readonly blobs: BlobStore,
  ) {}

  defaults() {
    return recipeDefaults();
  }

  async list(caller: Caller, projectId: number): Promise<VersionOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    const rows = await this.versions.list(projectId);
    return Promise.all(rows.map((row) => this.out(row)));
  }

  async get(caller: Caller, projectId: number | null, versionId: number): Promise<VersionOut> {
    return this.out(await this.visible(caller, projectId, versionId, 'project.read'));
  }

  /**
   * Renders the first outputs of a recipe for one image (as a training image), with their annotations, before
   * anything is generated: nothing is stored. Needs versions.write, like creating the version it previews.
   */
  async preview(caller: Caller, projectId: number, input: VersionPreviewRequest): Promise<VersionPreviewOut> {
    const parsed = parseRecipe(emptyAsNull(input.preprocessing_config), emptyAsNull(input.augmentation_config));
    if (parsed.recipe === null) throw new ValidationError(parsed.issues);
    await this.access.project(caller, projectId, 'versions.write');
    const image = await this.versions.previewImage(projectId, input.image_id);
    if (!image) {
      if (input.image_id !== undefined) throw ValidationError.at(['body', 'image_id'], `Image ${input.image_id} is not in project ${projectId}`);
      throw ValidationError.at(['body'], 'The project has no images to preview');
    }
    const annotations = frozen(await this.versions.imageAnnotations(image.id));
    if (image.video_id !== null) {
      const { tracks, keyframes } = await this.versions.projectTracks(this.versions.executor, projectId);
      annotations.push(...trackShapes(new FrameTracks([], tracks, keyframes), image));
    }
    const bytes = await this.blobs.get(image.blob_key);
    const flips = flipOrders(await this.versions.projectClasses(this.versions.executor, projectId));
    const outputs = await previewOutputs(parsed.recipe, input.seed ?? 0, { ...image, image: bytes }, annotations, input.limit ?? 4, flips);
    return {
      image_id: image.id,
      outputs: outputs.map((o) => ({
        data_url: `data:image/jpeg;base64,${o.image.toString('base64')}`,
        width: o.width,
        height: o.height,
        lineage: o.steps,
        annotations: o.annotations as VersionPreviewOut['outputs'][number]['annotations'],
      })),
    };
  }

  /**
   * Validates the recipe, freezes the project into the version tables in one transaction (images, their splits,
   * annotations, classes), and queues the generation. Answers the pending version at once.
   */
  async create(caller: Caller, projectId: number, input: VersionCreate): Promise<VersionOut> {
    const split = input.split_config ?? DEFAULT_SPLIT;
    checkPercentages(split, ['body', 'split_config']);
    const parsed = parseRecipe(emptyAsNull(input.preprocessing_config), emptyAsNull(input.augmentation_config));
    if (parsed.recipe === null) throw new ValidationError(parsed.issues);
    const recipe = parsed.recipe;
    await this.access.project(caller, projectId, 'versions.write');
    const seed = input.seed ?? randomSeed();

    const version = await this.versions.transaction(async (tx) => {
      const number = await this.versions.nextNumber(tx, projectId);
      const images = await this.versions.projectImages(tx, projectId);
      const annotations = await this.versions.projectAnnotations(tx, projectId, input.include_predictions === true);
      const classes = await this.versions.projectClasses(tx, projectId);
      const { tracks, keyframes } = await this.versions.projectTracks(tx, projectId);
      const row = await this.versions.insert(tx, {
        project_id: projectId,
        number,
        name: input.name.trim(),
        notes: input.notes ?? '',
        seed,
        split_config: JSON.stringify({ train: split.train, valid: split.valid, test: split.test }),
        preprocessing_config: JSON.stringify(recipe.preprocessing),
        augmentation_config: JSON.stringify(recipe.augmentation),
        status: 'pending',
        progress: 0,
        error: null,
        job_id: null,
        image_counts: JSON.stringify({ train: 0, valid: 0, test: 0, total: 0 }),
        created_by: caller.userId,
        created_at: new Date().toISOString(),
        finished_at: null,
      });
      await this.versions.insertSources(tx, snapshotRows(row.id, images, annotations, new FrameTracks([], tracks, keyframes), split, seed));
      await this.versions.insertClasses(tx, outputClasses(classes, recipe).map((c, index) => ({ version_id: row.id, index, ...c })));
      return row;
    });

    return this.out(await this.enqueue(version, caller));
  }

  /** Generates the version again from its snapshot and seed: the same files, byte for byte. */
  async regenerate(caller: Caller, projectId: number, versionId: number): Promise<VersionOut> {
    const version = await this.visible(caller, projectId, versionId, 'versions.write');
    // Claimed in one statement: of two regenerations at once, one is 409 (never two generations of one version).
    if (!(await this.versions.claimRegeneration(version.id))) {
      throw new ConflictError(`Version ${version.number} is still generating`);
    }
    return this.out(await this.enqueue({ ...version, status: 'pending' }, caller));
  }

  async delete(caller: Caller, projectId: number, versionId: number): Promise<void> {
    const version = await this.visible(caller, projectId, versionId, 'versions.write');
    const references = await this.versions.references(version.id);
    if (references.length > 0) {
      throw new ConflictError(
        `Version ${version.number} is in use (${references.map((r) => `${r.count} ${r.table}`).join(', ')}); delete those first`,
        { references },
      );
    }
    const sources = await this.versions.sourceSummaries(version.id);
    await this.versions.delete(version.id);
    // A generation still running notices the version is gone at its next batch and removes what it wrote.
    await deleteVersionFiles(this.blobs, version.project_id, version.number);
    // Source files kept only for this version (their image was deleted since) go with it.
    const unique = [...new Map(sources.map((s) => [s.sha256, { sha256: s.sha256, blob_key: s.blob_key }])).values()];
    for (const source of await this.versions.unheldSources(version.project_id, unique)) {
      await deleteImageFiles(this.blobs, { project_id: version.project_id, sha256: source.sha256, blob_key: source.blob_key });
    }
  }

  async diff(caller: Caller, projectId: number, a: number, b: number): Promise<VersionDiffOut> {
    // The diff names every source image of both versions, as their outputs do: the whole project (403 for annotators
    // kept to their assignments).
    await this.access.wholeProject(caller, projectId, 'project.read');
    const before = await this.visible(caller, projectId, a, 'project.read');
    const after = await this.visible(caller, projectId, b, 'project.read');
    const [sourcesA, sourcesB, outputsA, outputsB] = await Promise.all([
      this.versions.allSources(before.id),
      this.versions.allSources(after.id),
      this.versions.outputHashes(before.id),
      this.versions.outputHashes(after.id),
    ]);
    return diffVersions(before, after, sourcesA, sourcesB, outputsA, outputsB);
  }

  async images(caller: Caller, projectId: number, versionId: number, query: VersionImagesQuery): Promise<{ items: VersionImageOut[]; total: number }> {
    await this.access.wholeProject(caller, projectId, 'project.read');
    const version = await this.visible(caller, projectId, versionId, 'project.read');
    // Outputs are a dataset only once all of them are written: a generating or failed version lists none.
    if (version.status !== 'ready') return { items: [], total: 0 };
    const page = await this.versions.images(version.id, query);
    const annotations = await this.versions.annotationsOf(page.items.map((i) => i.id));
    return {
      total: page.total,
      items: page.items.map((row) => ({
        id: row.id,
        version_id: row.version_id,
        split: row.split,
        filename: row.filename,
        width: row.width,
        height: row.height,
        source_image_id: row.source_image_id,
        sha256: row.sha256,
        lineage: JSON.parse(row.lineage),
        annotations: (annotations.get(row.id) ?? []).map((a) => ({ ...a, geometry: JSON.parse(a.geometry), attributes: a.attributes ? JSON.parse(a.attributes) : {} })),
        file_url: `/api/projects/${version.project_id}/versions/${version.id}/images/${row.id}/file`,
      })),
    };
  }

  async imageFile(caller: Caller, projectId: number, versionId: number, imageId: number): Promise<{ stream: Readable; size: number | null; filename: string }> {
    await this.access.wholeProject(caller, projectId, 'project.read');
    const version = await this.visible(caller, projectId, versionId, 'project.read');
    const image = await this.versions.findImage(version.id, imageId);
    if (!image) throw NotFoundError.of('Version image', imageId);
    return { stream: this.blobs.stream(image.blob_key), size: await this.blobs.size(image.blob_key), filename: image.filename };
  }

  /** A version the caller may act on; `projectId` null for the /api/versions/{id} routes. */
  private async visible(caller: Caller, projectId: number | null, versionId: number, permission: 'project.read' | 'versions.write'): Promise<VersionRow> {
    if (projectId !== null) await this.access.project(caller, projectId, permission);
    const version = await this.versions.find(versionId);
    if (!version || (projectId !== null && version.project_id !== projectId)) throw NotFoundError.of('Version', versionId);
    if (projectId === null) await this.access.project(caller, version.project_id, permission).catch((err) => {
      throw err instanceof NotFoundError ? NotFoundError.of('Version', versionId) : err;
    });
    return version;
  }

  private async enqueue(version: VersionRow, caller: Caller): Promise<VersionRow> {
    const payload: GeneratePayload = { version_id: version.id };
    try {
      const job = await this.queue.enqueue(GENERATE_JOB, payload, { projectId: version.project_id, createdBy: caller.userId });
      await this.versions.update(version.id, { job_id: job.id });
      return { ...version, job_id: job.id };
    } catch (err) {
      // A version that can never generate is not left behind (a regenerated one keeps its earlier state: failed).
      if (version.job_id === null) await this.versions.delete(version.id);
      else await this.versions.update(version.id, { status: 'failed', error: 'could not queue the generation' });
      throw err;
    }
  }

  private async out(row: VersionRow): Promise<VersionOut> {
    const sources = await this.versions.sourceCounts(row.id);
    const source_counts = { train: sources.train ?? 0, valid: sources.valid ?? 0, test: sources.test ?? 0, total: 0 };
    source_counts.total = source_counts.train + source_counts.valid + source_counts.test;
    return {
      id: row.id,
      project_id: row.project_id,
      number: row.number,
      name: row.name,
      notes: row.notes,
      seed: Number(row.seed),
      split_config: JSON.parse(row.split_config),
      preprocessing_config: JSON.parse(row.preprocessing_config),
      augmentation_config: JSON.parse(row.augmentation_config),
      status: row.status,
      progress: row.progress,
      error: row.error,
      job_id: row.job_id,
      image_counts: JSON.parse(row.image_counts),
      source_counts,
      created_by: row.created_by,
      created_at: row.created_at,
      finished_at: row.finished_at,
    };
  }
}

const emptyAsNull = (config: object | null | undefined) => (config && Object.keys(config).length > 0 ? config : null);

/** An annotation as a snapshot freezes it: attribute values and group id only when it has some (plain shapes read as before). */
function frozen(annotations: SourceAnnotation[]): FrozenAnnotation[] {
  return annotations.map((a) => {
    const attributes = a.attributes ? (JSON.parse(a.attributes) as Record<string, unknown>) : null;
    return {
      class_name: a.class_name,
      annotation_type: a.annotation_type,
      geometry: JSON.parse(a.geometry),
      ...(attributes && Object.keys(attributes).length > 0 ? { attributes } : {}),
      ...(a.group_id != null ? { group_id: a.group_id } : {}),
    };
  });
}

/**
 * One snapshot row per image: its split (kept, or assigned with the version seed), its video and frame, and its
 * annotations inline, a frame's tracks' shapes on it among them (keyframes and interpolated ones, with `track_id`,
 * `keyframe` and `occluded`), so that the version keeps them whatever the tracks become.
 */
function snapshotRows(versionId: number, images: SourceImage[], annotations: SourceAnnotation[], frames: FrameTracks, split: SplitConfig, seed: number) {
  const byImage = new Map<number, FrozenAnnotation[]>();
  const all = frozen(annotations);
  for (let i = 0; i < annotations.length; i++) {
    const a = annotations[i];
    const list = byImage.get(a.image_id) ?? [];
    list.push(all[i]);
    byImage.set(a.image_id, list);
  }
  const hasSplit = (s: string | null): s is SplitName => s !== null && (SPLIT_NAMES as readonly string[]).includes(s);
  const assigned = assignKeepingVideos(images.map((i) => ({ id: i.id, split: hasSplit(i.split) ? i.split : null, video_id: i.video_id })), split, seed);
  return images.map((image) => ({
    version_id: versionId,
    source_image_id: image.id,
    split: assigned.get(image.id)!,
    filename: image.original_name,
    blob_key: image.blob_key,
    sha256: image.sha256,
    width: image.width,
    height: image.height,
    annotations: JSON.stringify([...(byImage.get(image.id) ?? []), ...trackShapes(frames, image)]),
    video_id: image.video_id,
    frame: image.frame,
  }));
}

const trackShapes = (frames: FrameTracks, image: Pick<SourceImage, 'video_id' | 'frame'>): FrozenAnnotation[] =>
  image.video_id === null || image.frame === null
    ? []
    : frames.shapesOn(image.video_id, image.frame).map((a) => ({ class_name: a.className, annotation_type: a.type, geometry: a.geometry as Record<string, unknown>, attributes: a.attributes }));

type ClassSnapshot = { name: string; color: string; skeleton: string | null; attributes: string | null };

/**
 * The classes outputs carry, in project order, after dropping and remapping, with their skeletons and attribute specs;
 * a merged class keeps the first class's colour and specs.
 */
function outputClasses(classes: ClassSnapshot[], recipe: Recipe): ClassSnapshot[] {
  const { remap, drop } = recipe.preprocessing.classes;
  const dropped = new Set(drop);
  const out = new Map<string, ClassSnapshot>();
  for (const c of classes) {
    if (dropped.has(c.name)) continue;
    const name = Object.hasOwn(remap, c.name) ? remap[c.name] : c.name;
    if (!out.has(name)) out.set(name, { ...c, name });
  }
  return [...out.values()];
}
