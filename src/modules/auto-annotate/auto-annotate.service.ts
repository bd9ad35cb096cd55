import { setTimeout as sleep } from 'node:timers/promises';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { Executor } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import { GeometryError, parseGeometry, type ImageSize } from '../../imaging/geometry.js';
import { InferenceOverloadedError, UnsupportedModelError } from '../../inference/errors.js';
import type { DetectorShape, NamedDetection } from '../../inference/yolo-detector.js';
import { skeletonSize, type Skeleton } from '../../imaging/class-specs.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { AnnotationsService } from '../annotations/annotations.service.js';
import type { AnnotationOut } from '../annotations/annotations.schemas.js';
import { isSingleLabel, type LabelMode } from '../annotations/single-label.logic.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import { paletteColor } from '../classes/classes.service.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { LockHolder } from '../locks/locks.repository.js';
import { assertRunnable, sessionId, type ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { ModelRow, ModelTask } from '../models/models.schemas.js';
import type { ProjectRow } from '../projects/projects.schemas.js';
import type { NewRevision, RevisionsRepository } from '../revisions/revisions.repository.js';
import { stateText } from '../revisions/revisions.schemas.js';
import type { AutoAnnotateRepository, ExistingAnnotation, ImageToAnnotate, NewAnnotation } from './auto-annotate.repository.js';
import {
  INLINE_IMAGE_LIMIT,
  type JobStartedOut,
  type LockedImageOut,
  type PrecomputeRequest,
  type SamOut,
  type SamRequest,
  type YoloRequest,
  type YoloResultOut,
} from './auto-annotate.schemas.js';
import { forEachConcurrently, mapConcurrently } from '../../lib/batches.js';
import { geometryBox } from '../../imaging/geometry.js';
import { classKey } from '../classes/class-key.logic.js';

export const YOLO_JOB = 'auto-annotate.yolo';
export const SAM_PRECOMPUTE_JOB = 'auto-annotate.sam-precompute';

interface YoloJobPayload {
  projectId: number;
  /** Who started the job: its annotations' revisions name them, and their own locks do not stop it. */
  userId?: number;
  modelId: number;
  imageIds: number[];
  /** null: the model's per-class thresholds (see cutOff). */
  confidence: number | null;
  iou: number;
  createMissingClasses: boolean;
}

interface PrecomputePayload {
  projectId: number;
  encoderId: number;
  decoderId: number;
}

/** How often a background job retries a run refused because interactive requests fill the inference queue. */
const OVERLOAD_RETRIES = 60;

/** One detection turned into what will be stored, before classes are resolved. */
export interface PlannedAnnotation {
  className: string;
  annotation_type: 'bbox' | 'polygon' | 'classification' | 'keypoints';
  geometry: object;
  confidence: number;
  /** Keypoints: the skeleton a class created for them gets; an existing class must have one of as many points. */
  skeleton?: Skeleton;
}

export type YoloOutcome = { status: 200; body: YoloResultOut } | { status: 202; body: JobStartedOut };

export class AutoAnnotateService {
  constructor(
    private readonly repository: AutoAnnotateRepository,
    private readonly models: ModelsRepository,
    private readonly runtime: ModelRuntime,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly queue: JobQueue,
    private readonly annotations: AnnotationsService,
    /**
     * Model output is annotation writes like any other: each annotation gets a `create` revision naming the caller,
     * images locked by another user are skipped and reported, annotators of assigned-only projects reach only their
     * images.
     */
    private readonly teams: { locks: LockGuard; revisions: RevisionsRepository; scope: AssignmentScope },
  ) {}

  /**
   * Runs a detector on the chosen images. Up to INLINE_IMAGE_LIMIT images answer at once with what was created (all
   * of it in one transaction, after every image has run, so a failure leaves nothing); more become a job. Either
   * way an image another user has locked gets nothing and is reported in `locked` (the rest go ahead).
   */
  async yolo(caller: Caller, projectId: number, input: YoloRequest): Promise<YoloOutcome> {
    const { project, model, images, batch } = await this.yoloTargets(caller, projectId, input);
    if (images.length > INLINE_IMAGE_LIMIT) {
      const payload: YoloJobPayload = {
        projectId,
        userId: caller.userId,
        modelId: model.id,
        imageIds: images.map((i) => i.id),
        confidence: input.confidence ?? null,
        iou: input.iou,
        createMissingClasses: input.create_missing_classes,
      };
      const job = await this.queue.enqueue(YOLO_JOB, payload, { projectId, createdBy: caller.userId });
      return { status: 202, body: jobStarted(job, images.length) };
    }
    const inFlight = batch ? this.runtime.batchInFlight : 1;
    const detections = await mapConcurrently(images, inFlight, async (image) => ({ image, ...(await this.detect(model, image, input, batch)) }));
    const classes = await this.classIndex(projectId);
    const missing = [...new Set(detections.flatMap((d) => d.planned.map((p) => p.className)))].filter((n) => !classes.has(classKey(n)));
    if (input.create_missing_classes && missing.length > 0) await this.access.check(caller, project, 'classes.write', `Project ${projectId} not found`);
    const created: string[] = input.create_missing_classes ? missing : [];
    const now = new Date().toISOString();
    const source = `model:${model.id}`;
    try {
      const written = await this.writeSuggested(caller, project, detections, classes, created, source, now);
      const lockedIds = new Set(written.locked.map((l) => l.image_id));
      const byImage = new Map<number, AnnotationOut[]>(images.filter((i) => !lockedIds.has(i.id)).map((i) => [i.id, []]));
      written.rows.forEach((row, i) => byImage.get(row.image_id)!.push({
        id: written.ids[i],
        image_id: row.image_id,
        class_id: row.class_id,
        annotation_type: row.annotation_type as AnnotationOut['annotation_type'],
        geometry: row.geometry,
        confidence: row.confidence,
        source,
        status: row.status,
        attributes: {},
        group_id: null,
        created_at: now,
        updated_at: now,
      }));
      const { skipped, replaced, matched, locked } = written;
      const annotated = [...byImage].map(([image_id, annotations]) => ({ image_id, annotations }));
      return { status: 200, body: { created: written.rows.length, skipped, replaced, matched, classes_created: created, images: annotated, locked } };
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('A class was created or images were deleted while annotating; try again');
      throw err;
    }
  }

  /**
   * What `yolo` runs on: the project (annotations.write), the model (detect, segment or classify, runnable and loaded
   * in the pool that will run it, before anything is queued) and the caller's images among those asked for.
   */
  private async yoloTargets(caller: Caller, projectId: number, input: YoloRequest): Promise<{ project: ProjectRow; model: ModelRow; images: ImageToAnnotate[]; batch: boolean }> {
    const project = await this.access.project(caller, projectId, 'annotations.write');
    const role = (await this.access.roleOf(caller, project))!;
    const assignedTo = (await this.teams.scope.listingUser(caller, project, role)) ?? undefined;
    const model = await this.resolveModel(caller, projectId, input.model, ['body', 'model']);
    if (!(['detect', 'segment', 'classify', 'pose', 'obb'] as string[]).includes(model.task)) {
      throw ValidationError.at(['body', 'model'], `Model '${model.name}' is a ${model.task} model; auto-annotation needs a detect, segment, classify, pose or obb model`);
    }
    assertRunnable(model);
    if (input.image_ids) {
      const inProject = await this.repository.imageIdsInProject(projectId, input.image_ids, assignedTo);
      const foreign = input.image_ids.findIndex((id) => !inProject.has(id));
      if (foreign !== -1) throw ValidationError.at(['body', 'image_ids', foreign], `Image ${input.image_ids[foreign]} is not in project ${projectId}`);
    }
    const images = await this.repository.images(projectId, input.image_ids, input.only_unannotated, assignedTo);
    const names = JSON.parse(model.class_names) as string[];
    if (input.create_missing_classes) await this.assertMayCreate(caller, project, names);
    // Many images run on the batch pool, one on the single-image pool: the model is loaded (and so checked) in the
    // pool that will run it, before anything is queued.
    const batch = images.length > 1;
    if (model.task === 'classify') await this.runtime.classifier(model, batch);
    else await this.runtime.detector(model, batch);
    return { project, model, images, batch };
  }

  /**
   * `yolo`'s write, all of it in one transaction: the classes to create, then image by image (skipping those another
   * user has locked) the model's earlier suggestions replaced by its detections, less those an accepted annotation
   * already matches.
   */
  private async writeSuggested(
    caller: Caller,
    project: ProjectRow,
    detections: ({ image: ImageToAnnotate } & Detected)[],
    classes: Map<string, number>,
    created: string[],
    source: string,
    now: string,
  ): Promise<{ ids: number[]; rows: NewAnnotation[]; locked: LockedImageOut[]; skipped: number; replaced: number; matched: number }> {
    const tally = { rows: [] as NewAnnotation[], locked: [] as LockedImageOut[], skipped: 0, replaced: 0, matched: 0 };
    const ids = await this.repository.transaction(async (tx) => {
      for (const [i, name] of created.entries()) {
        const skeleton = detections.flatMap((d) => d.planned).find((p) => p.className === name)?.skeleton;
        classes.set(classKey(name), await this.repository.insertClass(project.id, name, paletteColor(project.class_count + i), tx, skeleton ? JSON.stringify(skeleton) : null));
      }
      // In the transaction: on SQLite its one connection is held, and a read outside it would wait for ever.
      const sizes = await this.skeletonSizes(project.id, tx);
      const accepted = await this.repository.accepted(detections.map((d) => d.image.id), tx);
      for (const { image, planned, unusable } of detections) {
        // Inside the write's transaction, as for a person's writes: a lock taken before the commit is seen.
        const holder = await this.teams.locks.blockingHolder(caller.userId, image.id, tx);
        if (holder) {
          tally.locked.push(lockedImage(image.id, holder));
          continue;
        }
        tally.replaced += await this.replaceSuggestions(image.id, source, caller.userId, now, tx);
        tally.skipped += unusable;
        const kept = accepted.filter((a) => a.image_id === image.id);
        for (const p of planned) {
          const classId = classes.get(classKey(p.className));
          if (classId === undefined || !fitsSkeleton(p, sizes.get(classId))) tally.skipped++;
          else if (matchesAccepted(classId, p.annotation_type, p.geometry, kept)) tally.matched++;
          else tally.rows.push({ image_id: image.id, project_id: project.id, class_id: classId, annotation_type: p.annotation_type, geometry: p.geometry, confidence: p.confidence, source, status: 'suggested' });
        }
      }
      const classed = await this.oneClassEach(project, tally.rows, tx);
      tally.rows = classed.rows;
      tally.skipped += classed.dropped;
      return this.insertWithRevisions(tally.rows, caller.userId, now, tx);
    });
    return { ids, ...tally };
  }

  /**
   * The background half of `yolo`: image by image, each committed on its own, with progress. An image locked by
   * another user is skipped (before the model runs, and again inside the write) and reported in `locked`.
   */
  async runYoloJob(ctx: JobContext<YoloJobPayload>): Promise<object> {
    const { projectId, modelId, imageIds, createMissingClasses } = ctx.payload;
    // Jobs queued before the starter was recorded: nobody's lock is theirs, and revisions name no one.
    const userId = ctx.payload.userId ?? null;
    const model = await this.models.find(modelId);
    if (!model) throw new Error(`Model ${modelId} was deleted before the job ran`);
    const mode = await this.repository.labelMode(projectId);
    if (!mode) throw new Error(`Project ${projectId} was deleted before the job ran`);
    const classes = await this.classIndex(projectId);
    const source = `model:${model.id}`;
    const classesCreated: string[] = [];
    let created = 0;
    let skipped = 0;
    let replaced = 0;
    let matched = 0;
    let done = 0;
    const failed: { image_id: number; error: string }[] = [];
    const locked: LockedImageOut[] = [];
    let lockedCount = 0;
    const skipLocked = (imageId: number, holder: LockHolder) => {
      if (locked.length < 100) locked.push(lockedImage(imageId, holder));
      lockedCount++;
    };
    await forEachConcurrently(imageIds, this.runtime.batchInFlight, async (imageId) => {
      const image = await this.repository.image(imageId);
      const holderFirst = image && image.project_id === projectId ? await this.teams.locks.blockingHolder(userId ?? 0, imageId) : null;
      if (holderFirst) skipLocked(imageId, holderFirst);
      else if (image && image.project_id === projectId) {
        try {
          const { planned, unusable } = await retryOverload(() => this.detect(model, image, ctx.payload, true));
          skipped += unusable;
          const rows: NewAnnotation[] = [];
          for (const p of planned) {
            const classId = await this.jobClassId(projectId, p.className, classes, createMissingClasses ? classesCreated : null, p.skeleton);
            if (classId === undefined || (p.skeleton && !fitsSkeleton(p, (await this.skeletonSizes(projectId)).get(classId)))) skipped++;
            else rows.push({ image_id: image.id, project_id: projectId, class_id: classId, annotation_type: p.annotation_type, geometry: p.geometry, confidence: p.confidence, source, status: 'suggested' });
          }
          const outcome = await this.writeImageSuggestions(mode, image.id, rows, source, userId);
          if (outcome.holder) skipLocked(image.id, outcome.holder);
          else {
            created += outcome.kept.length;
            skipped += outcome.dropped;
            matched += rows.length - outcome.kept.length - outcome.dropped;
            replaced += outcome.replacedNow;
          }
        } catch (err) {
          // One unreadable or vanished image does not sink the rest of the job.
          if (failed.length < 100) failed.push({ image_id: imageId, error: err instanceof Error ? err.message : String(err) });
        }
      }
      await ctx.progress(++done / imageIds.length);
    });
    return { created, skipped, replaced, matched, images: imageIds.length, classes_created: classesCreated, failed, locked_count: lockedCount, locked };
  }

  /** A job's class for a detected name: known, else created when `created` collects new ones, else undefined. */
  private async jobClassId(projectId: number, className: string, classes: Map<string, number>, created: string[] | null, skeleton?: Skeleton): Promise<number | undefined> {
    const known = classes.get(classKey(className));
    if (known !== undefined || !created) return known;
    const ensured = await this.repository.ensureClass(projectId, className, paletteColor(classes.size), skeleton ? JSON.stringify(skeleton) : null);
    classes.set(classKey(className), ensured.id);
    if (ensured.created) created.push(className);
    return ensured.id;
  }

  /**
   * A job's write for one image, in its own transaction: nothing when another user holds its lock (the holder is
   * returned); else the model's earlier suggestions replaced by `rows`, less those an accepted annotation matches.
   */
  private async writeImageSuggestions(
    mode: LabelMode,
    imageId: number,
    rows: NewAnnotation[],
    source: string,
    userId: number | null,
  ): Promise<{ holder: LockHolder | null; kept: NewAnnotation[]; dropped: number; replacedNow: number }> {
    return this.repository.transaction(async (tx) => {
      const holderNow = await this.teams.locks.blockingHolder(userId ?? 0, imageId, tx);
      if (holderNow) return { holder: holderNow, kept: [] as NewAnnotation[], dropped: 0, replacedNow: 0 };
      const now = new Date().toISOString();
      const replacedNow = await this.replaceSuggestions(imageId, source, userId, now, tx);
      const accepted = await this.repository.accepted([imageId], tx);
      const { rows: kept, dropped } = await this.oneClassEach(mode, rows.filter((r) => !matchesAccepted(r.class_id, r.annotation_type, r.geometry, accepted)), tx);
      await this.insertWithRevisions(kept, userId, now, tx);
      return { holder: null, kept, dropped, replacedNow };
    });
  }

  /**
   * Model output for a single-label project (issue 30): a class only for an image that has none yet (the model's own
   * earlier suggestion was replaced first), one per image; the rest are left out and counted as `dropped`.
   */
  private async oneClassEach(mode: LabelMode, rows: NewAnnotation[], tx: Executor): Promise<{ rows: NewAnnotation[]; dropped: number }> {
    if (!isSingleLabel(mode)) return { rows, dropped: 0 };
    const classed = new Map<number, boolean>();
    const kept: NewAnnotation[] = [];
    for (const row of rows) {
      if (row.annotation_type === 'classification') {
        const has = classed.get(row.image_id) ?? (await this.repository.hasClass(row.image_id, tx));
        classed.set(row.image_id, true);
        if (has) continue;
      }
      kept.push(row);
    }
    return { rows: kept, dropped: rows.length - kept.length };
  }

  /**
   * SAM from clicks: the image's embedding comes from the cache or one encoder run, then the decoder runs for the
   * points. Saves the mask as a polygon (default) or RLE mask annotation with source `sam`, unless `preview`.
   */
  async sam(caller: Caller, projectId: number, input: SamRequest): Promise<SamOut> {
    const project = await this.access.project(caller, projectId, 'annotations.write');
    const image = await this.repository.image(input.image_id);
    if (!image || image.project_id !== projectId) throw new NotFoundError(`Image ${input.image_id} not found in project ${projectId}`);
    const role = (await this.access.roleOf(caller, project))!;
    await this.teams.scope.assertImage(caller, project, role, image.id, `Image ${input.image_id} not found in project ${projectId}`);
    const points = input.points ?? [];
    const labels = input.labels ?? [];
    if (points.length === 0 && !input.box) throw ValidationError.at(['body', 'points'], 'Give points, a box, or both', 'missing');
    if (labels.length !== points.length) {
      throw ValidationError.at(['body', 'labels'], `Give one label per point (${points.length} points, ${labels.length} labels)`);
    }
    const outside = points.findIndex(([x, y]) => x > image.width || y > image.height);
    if (outside !== -1) throw ValidationError.at(['body', 'points', outside], `Point lies outside the ${image.width}×${image.height} image`);
    if (input.box && (input.box.x + input.box.width > image.width || input.box.y + input.box.height > image.height)) {
      throw ValidationError.at(['body', 'box'], `The box reaches past the ${image.width}×${image.height} image`);
    }
    if (!input.preview) {
      if (input.class_id === undefined) throw ValidationError.at(['body', 'class_id'], 'Field required unless preview is true', 'missing');
      const classes = await this.repository.classes(projectId);
      if (!classes.some((c) => c.id === input.class_id)) {
        throw ValidationError.at(['body', 'class_id'], `Class ${input.class_id} is not a class of project ${projectId}`);
      }
      // Refused before the model runs; the save below checks again inside its transaction and writes the revision.
      await this.teams.locks.assertWritable(caller, image.id);
    }
    const [encoder, decoder] = await this.samModels(caller, projectId, input.encoder_model, input.decoder_model);
    const predictor = await this.runtime.sam(encoder, decoder);
    let embedding = await this.runtime.embeddings.get(sessionId(encoder), image.sha256);
    const cached = embedding !== null;
    if (!embedding) embedding = await predictor.embed(await this.blobs.get(image.blob_key), image.sha256);
    const mask = await predictor.predict(embedding, { points: points as [number, number][], labels, box: input.box });
    let annotation: AnnotationOut | null = null;
    if (!input.preview) {
      if (mask.area === 0 || mask.polygons.length === 0) throw ValidationError.at(['body', input.box && points.length === 0 ? 'box' : 'points'], 'The model found no object at this prompt');
      annotation = await this.annotations.create(caller, image.id, {
        class_id: input.class_id!,
        annotation_type: input.annotation_type,
        geometry: input.annotation_type === 'mask' ? { rle: mask.rle } : { points: mask.polygons[0] },
        confidence: clamp01(mask.score),
        source: 'sam',
        status: 'suggested',
      });
    }
    return {
      image_id: image.id,
      mask: { rle: mask.rle, polygons: mask.polygons, bbox: mask.bbox, area: mask.area, score: mask.score },
      annotation,
      embedding_cached: cached,
    };
  }

  /** Queues a job that computes and caches the SAM embedding of every image of the project. */
  async precompute(caller: Caller, projectId: number, input: PrecomputeRequest): Promise<JobStartedOut> {
    await this.access.project(caller, projectId, 'annotations.write');
    const [encoder, decoder] = await this.samModels(caller, projectId, input.encoder_model, undefined);
    await this.runtime.sam(encoder, decoder);
    const images = await this.repository.images(projectId, undefined, false);
    const payload: PrecomputePayload = { projectId, encoderId: encoder.id, decoderId: decoder.id };
    const job = await this.queue.enqueue(SAM_PRECOMPUTE_JOB, payload, { projectId, createdBy: caller.userId });
    return jobStarted(job, images.length);
  }

  async runPrecomputeJob(ctx: JobContext<PrecomputePayload>): Promise<object> {
    const [encoder, decoder] = await Promise.all([this.models.find(ctx.payload.encoderId), this.models.find(ctx.payload.decoderId)]);
    if (!encoder || !decoder) throw new Error('The SAM model was deleted before the job ran');
    const predictor = await this.runtime.sam(encoder, decoder);
    const images = await this.repository.images(ctx.payload.projectId, undefined, false);
    let computed = 0;
    let done = 0;
    for (const image of images) {
      if (!(await this.runtime.embeddings.get(sessionId(encoder), image.sha256))) {
        await retryOverload(async () => predictor.embed(await this.blobs.get(image.blob_key), image.sha256)).then(() => computed++, () => undefined);
      }
      await ctx.progress(++done / images.length);
    }
    return { images: images.length, computed, cached: images.length - computed };
  }

  /** Deletes the image's open suggestions from `source` with a `delete` revision each; returns how many. */
  private async replaceSuggestions(imageId: number, source: string, userId: number | null, now: string, tx: Executor): Promise<number> {
    const deleted = await this.repository.deleteSuggestions(imageId, source, tx);
    await this.teams.revisions.insertMany(
      deleted.map((row) => ({ annotation_id: row.id, image_id: row.image_id, project_id: row.project_id, action: 'delete', before: stateText(row), after: null, user_id: userId, created_at: now })),
      tx,
    );
    return deleted.length;
  }

  /** Images a batch of detections keeps in flight on the batch pool (pipelines run their detect steps at this width). */
  get batchInFlight(): number {
    return this.runtime.batchInFlight;
  }

  /**
   * A detector on one image for a pipeline step: the same batch inference pool and post-processing as a many-image
   * auto-annotate run, retried while interactive requests fill the queue. Without a confidence, the model's per-class
   * thresholds apply, as for an auto-annotate request that names none.
   */
  async detectForPipeline(model: ModelRow, image: ImageToAnnotate, options: { confidence?: number | null; iou: number }): Promise<PlannedAnnotation[]> {
    return (await retryOverload(() => this.detect(model, image, options, true))).planned;
  }

  /** SAM with box prompts for a pipeline step: one mask per box (null where the model found nothing). */
  async segmentBoxesForPipeline(
    projectId: number,
    image: ImageToAnnotate,
    boxes: { x: number; y: number; width: number; height: number }[],
  ): Promise<({ polygon: [number, number][]; score: number } | null)[]> {
    const [encoder, decoder] = await Promise.all([this.models.findDefault(projectId, 'sam-encoder'), this.models.findDefault(projectId, 'sam-decoder')]);
    if (!encoder || !decoder) throw new UnsupportedModelError(`Project ${projectId} has no sam-encoder and sam-decoder models`);
    const predictor = await this.runtime.sam(encoder, decoder);
    let embedding = await this.runtime.embeddings.get(sessionId(encoder), image.sha256);
    if (!embedding) embedding = await retryOverload(async () => predictor.embed(await this.blobs.get(image.blob_key), image.sha256));
    const out: ({ polygon: [number, number][]; score: number } | null)[] = [];
    for (const box of boxes) {
      const mask = await retryOverload(() => predictor.predict(embedding, { points: [], labels: [], box }));
      out.push(mask.area > 0 && mask.polygons.length > 0 ? { polygon: mask.polygons[0] as [number, number][], score: mask.score } : null);
    }
    return out;
  }

  /**
   * Writes a pipeline's detections as annotations with `source`, each with a `create` revision naming `userId`, in
   * one transaction per call; images another user has locked are skipped and reported, missing classes created
   * when asked. Answers the new annotation ids so the run can record them.
   */
  async saveForPipeline(
    projectId: number,
    userId: number | null,
    items: { image_id: number; planned: PlannedAnnotation[] }[],
    options: { source: string; createMissingClasses: boolean },
  ): Promise<{ ids: number[]; skipped: number; locked: number[]; classes_created: string[] }> {
    const mode = await this.repository.labelMode(projectId);
    if (!mode) throw new NotFoundError(`Project ${projectId} not found`);
    const classes = await this.classIndex(projectId);
    const classesCreated: string[] = [];
    let skipped = 0;
    const locked: number[] = [];
    const rows: NewAnnotation[] = [];
    for (const item of items) {
      for (const p of item.planned) {
        let classId = classes.get(classKey(p.className));
        if (classId === undefined && options.createMissingClasses) {
          const ensured = await this.repository.ensureClass(projectId, p.className, paletteColor(classes.size));
          classes.set(classKey(p.className), ensured.id);
          if (ensured.created) classesCreated.push(p.className);
          classId = ensured.id;
        }
        if (classId === undefined) skipped++;
        else rows.push({ image_id: item.image_id, project_id: projectId, class_id: classId, annotation_type: p.annotation_type, geometry: p.geometry, confidence: p.confidence, source: options.source, status: 'suggested' });
      }
    }
    const ids = await this.repository.transaction(async (tx) => {
      const blocked = new Set<number>();
      for (const item of items) {
        if (await this.teams.locks.blockingHolder(userId ?? 0, item.image_id, tx)) blocked.add(item.image_id);
      }
      locked.push(...blocked);
      const classed = await this.oneClassEach(mode, rows.filter((r) => !blocked.has(r.image_id)), tx);
      skipped += classed.dropped;
      return this.insertWithRevisions(classed.rows, userId, new Date().toISOString(), tx);
    });
    return { ids, skipped, locked, classes_created: classesCreated };
  }

  /** Inserts model output with a `create` revision per annotation (by `userId`), in the caller's transaction. */
  private async insertWithRevisions(rows: NewAnnotation[], userId: number | null, now: string, tx: Executor): Promise<number[]> {
    const ids = await this.repository.insertAnnotations(rows, now, tx);
    const revisions: NewRevision[] = rows.map((row, i) => ({
      annotation_id: ids[i],
      image_id: row.image_id,
      project_id: row.project_id,
      action: 'create',
      before: null,
      after: stateText({ ...row, geometry: JSON.stringify(row.geometry) }),
      user_id: userId,
      created_at: now,
    }));
    await this.teams.revisions.insertMany(revisions, tx);
    return ids;
  }

  /**
   * A model by id (any project the caller can read: a team's promoted model serves its other projects, classes
   * mapped by name) or by name in this project. A model the caller cannot read is not found (404), as its project is.
   */
  private async resolveModel(caller: Caller, projectId: number, ref: number | string, loc: (string | number)[]): Promise<ModelRow> {
    if (typeof ref === 'number') {
      const model = await this.models.find(ref);
      await this.access.check(caller, model && { id: model.project_id, owner_id: model.owner_id }, 'project.read', `Model ${ref} not found`).catch((err) => {
        throw err instanceof ForbiddenError ? new NotFoundError(`Model ${ref} not found`) : err;
      });
      return model!;
    }
    const model = await this.models.findByName(projectId, ref.trim());
    if (!model) throw ValidationError.at(loc, `No model named '${ref}' in project ${projectId}`);
    return model;
  }

  private async samModels(caller: Caller, projectId: number, encoderRef?: number | string, decoderRef?: number | string): Promise<[ModelRow, ModelRow]> {
    const pick = async (ref: number | string | undefined, task: ModelTask, field: string): Promise<ModelRow> => {
      if (ref !== undefined) {
        const model = await this.resolveModel(caller, projectId, ref, ['body', field]);
        if (model.task !== task) throw ValidationError.at(['body', field], `Model '${model.name}' is a ${model.task} model, not a ${task}`);
        return model;
      }
      const fallback = await this.models.findDefault(projectId, task);
      if (!fallback) {
        throw new UnsupportedModelError(`Project ${projectId} has no ${task} model; register a SAM encoder/decoder ONNX pair (see README) or name them in ${field}`);
      }
      return fallback;
    };
    return [await pick(encoderRef, 'sam-encoder', 'encoder_model'), await pick(decoderRef, 'sam-decoder', 'decoder_model')];
  }

  /** Needs classes.write up front when the model's known class names include ones the project lacks. */
  private async assertMayCreate(caller: Caller, project: ProjectRow, names: string[]): Promise<void> {
    const classes = await this.classIndex(project.id);
    if (names.some((n) => !classes.has(classKey(n)))) await this.access.check(caller, project, 'classes.write', `Project ${project.id} not found`);
  }

  /** Each class's skeleton point count (null: no skeleton). */
  private async skeletonSizes(projectId: number, db?: Executor): Promise<Map<number, number | null>> {
    return new Map((await this.repository.classes(projectId, db)).map((c) => [c.id, skeletonSize(c.skeleton)]));
  }

  private async classIndex(projectId: number): Promise<Map<string, number>> {
    return new Map((await this.repository.classes(projectId)).map((c) => [classKey(c.name), c.id]));
  }

  /** What the model found on the image, as annotations to write, and how many of its detections cannot be one. */
  private async detect(model: ModelRow, image: ImageToAnnotate, options: { confidence?: number | null; iou: number }, batch: boolean): Promise<Detected> {
    const cut = cutOff(model, options.confidence);
    if (model.task === 'classify') {
      // A classifier labels the whole image: one `classification` annotation with its top class, when confident enough.
      const classifier = await this.runtime.classifier(model, batch);
      const top = await classifier.classify(await this.blobs.get(image.blob_key));
      const className = top.className ?? `class_${top.classId}`;
      if (top.confidence < cut.of(className)) return { planned: [], unusable: 0 };
      return { planned: [{ className, annotation_type: 'classification', geometry: {}, confidence: clamp01(top.confidence) }], unusable: 0 };
    }
    const detector = await this.runtime.detector(model, batch);
    const bytes = await this.blobs.get(image.blob_key);
    const result = await detector.detect(bytes, { confidence: cut.floor, iou: options.iou });
    const size = { width: image.width, height: image.height };
    let unusable = 0;
    const planned = result.detections.flatMap((d) => {
      if (d.confidence < cut.of(d.className ?? `class_${d.classId}`)) return [];
      const annotation = plan(d, model.task === 'segment', size, detector.shape);
      if (!annotation) unusable++;
      return annotation ? [annotation] : [];
    });
    return { planned, unusable };
  }
}

/** A model's output on one image: the annotations to write and the detections that cannot be one (no area on the image, no keypoint labelled). */
type Detected = { planned: PlannedAnnotation[]; unusable: number };

const DEFAULT_CONFIDENCE = 0.25;

/**
 * The confidence each class's detections must reach: the request's when it gives one; else the model's per-class
 * thresholds from its promotion (DEFAULT_CONFIDENCE for a class without one); `floor` is what the detector is asked
 * for, the lowest of them.
 */
function cutOff(model: ModelRow, confidence: number | null | undefined): { floor: number; of: (className: string) => number } {
  const thresholds = confidence === null || confidence === undefined ? (JSON.parse(model.class_thresholds ?? 'null') as Record<string, number> | null) : null;
  if (!thresholds) {
    const fixed = confidence ?? DEFAULT_CONFIDENCE;
    return { floor: fixed, of: () => fixed };
  }
  const of = (className: string) => thresholds[className] ?? DEFAULT_CONFIDENCE;
  return { floor: Math.min(DEFAULT_CONFIDENCE, ...Object.values(thresholds)), of };
}

/**
 * A pose detection's keypoint is visible (v = 2) when the model's confidence in it reaches this (Ultralytics draws
 * keypoints from 0.5) and it lies on the image, else not labelled (v = 0), as a crop marks the points it cuts off: a
 * model says nothing that tells "occluded" (v = 1) apart.
 */
export const KEYPOINT_VISIBLE_CONFIDENCE = 0.5;

/**
 * A detection as keypoints (pose models; the instance's box as their `bbox`), a rotated box (OBB models), a polygon
 * (segmentation models, largest outer boundary) or a box, cut to the image; null if empty.
 */
function plan(detection: NamedDetection, segment: boolean, size: ImageSize, shape?: DetectorShape): PlannedAnnotation | null {
  const className = detection.className ?? `class_${detection.classId}`;
  const confidence = clamp01(detection.confidence);
  try {
    if (detection.keypoints) {
      // On the image or within the pixel that parseGeometry moves onto it; beyond, the model guessed a point it cannot see.
      const onImage = (x: number, y: number) => x >= -1 && y >= -1 && x <= size.width + 1 && y <= size.height + 1;
      const points = detection.keypoints.map(([x, y, c]) => (c >= KEYPOINT_VISIBLE_CONFIDENCE && onImage(x, y) ? [round(x), round(y), 2] : [0, 0, 0]));
      const { x, y, width, height } = detection.box;
      const geometry = parseGeometry('keypoints', { points, bbox: { x: round(x), y: round(y), width: round(width), height: round(height) } }, size);
      return { className, annotation_type: 'keypoints', geometry, confidence, skeleton: poseSkeleton(detection.keypoints.length, shape) };
    }
    if (detection.oriented) {
      const { x, y, width, height, rotation } = detection.oriented;
      const box = { x: round(x), y: round(y), width: round(width), height: round(height), rotation: round(rotation) % 360 };
      return { className, annotation_type: 'bbox', geometry: parseGeometry('bbox', box, size), confidence };
    }
    if (segment && detection.polygons?.length) {
      const points = detection.polygons[0].map(([x, y]) => [round(x), round(y)]);
      return { className, annotation_type: 'polygon', geometry: parseGeometry('polygon', { points }, size), confidence };
    }
    const { x, y, width, height } = detection.box;
    return { className, annotation_type: 'bbox', geometry: parseGeometry('bbox', { x: round(x), y: round(y), width: round(width), height: round(height) }, size), confidence };
  } catch (err) {
    if (err instanceof GeometryError) return null;
    throw err;
  }
}

/** The skeleton a pose model's class is created with: its `kpt_names` (else kp0…), no edges, pairs from `flip_idx`. */
function poseSkeleton(count: number, shape?: DetectorShape): Skeleton {
  const names = shape?.keypointNames?.length === count ? shape.keypointNames : Array.from({ length: count }, (_, i) => `kp${i}`);
  const flip = shape?.flipIndex?.length === count ? shape.flipIndex : null;
  const flipPairs: [number, number][] = flip ? flip.flatMap((j, i): [number, number][] => (i < j && flip[j] === i ? [[i, j]] : [])) : [];
  return { points: [...names], edges: [], flip_pairs: flipPairs };
}

/** Keypoints need a class whose skeleton has as many points; other shapes fit any class. */
function fitsSkeleton(planned: PlannedAnnotation, size: number | null | undefined): boolean {
  return !planned.skeleton || size === planned.skeleton.points.length;
}

/** Detections that overlap an accepted annotation of the same class this much (box IoU) are not suggested again. */
export const RERUN_MATCH_IOU = 0.5;

function matchesAccepted(classId: number, type: string, geometry: object, accepted: readonly ExistingAnnotation[]): boolean {
  const box = geometryBox(type, geometry);
  if (!box) return false;
  return accepted.some((a) => {
    if (a.class_id !== classId) return false;
    const other = geometryBox(a.annotation_type, JSON.parse(a.geometry));
    return other !== null && boxIou(box, other) >= RERUN_MATCH_IOU;
  });
}

type Rect = { x: number; y: number; width: number; height: number };

function boxIou(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

function lockedImage(imageId: number, holder: LockHolder): LockedImageOut {
  return { image_id: imageId, user_id: holder.user_id, email: holder.email, expires_at: holder.expires_at };
}

const round = (value: number) => Math.round(value * 100) / 100;
const clamp01 = (value: number) => Math.min(1, Math.max(0, value));

function jobStarted(job: { id: number; name: string; status: JobStartedOut['status']; progress: number }, imageCount: number): JobStartedOut {
  return { job_id: job.id, name: job.name, status: job.status, progress: job.progress, image_count: imageCount, url: `/api/jobs/${job.id}` };
}

async function retryOverload<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof InferenceOverloadedError) || attempt >= OVERLOAD_RETRIES) throw err;
      await sleep(500);
    }
  }
}
