import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ValidationError } from '../../http/errors.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { AutoAnnotateService } from '../auto-annotate/auto-annotate.service.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { PrefetchOut, PrefetchRequest } from './suggestions.schemas.js';
import type { SuggestionsRepository } from './suggestions.repository.js';

export const PREFETCH_JOB = 'suggestions.prefetch';

export interface PrefetchPayload {
  projectId: number;
  /** The annotator who asked: the suggestions' revisions name them, and their own locks do not stop the job. */
  userId: number;
  modelId: number;
  imageIds: number[];
}

/**
 * What auto-annotate keeps by default, so these are the suggestions "Run detector" would make, only earlier: no
 * confidence given means the model's per-class thresholds where promotion stored them, else auto-annotate's default.
 */
const DETECTION = { iou: 0.45 };

/**
 * Suggestions waiting when an image opens: the editor names the images ahead of the annotator, and the project's
 * production model predicts them in the background, one job per project at a time, on the batch inference pool
 * (so it yields to interactive requests). Its output is suggestions like any model run's: they count as
 * annotations only once accepted.
 */
export class SuggestionsService {
  constructor(
    private readonly repository: SuggestionsRepository,
    private readonly models: ModelsRepository,
    private readonly detector: Pick<AutoAnnotateService, 'detectForPipeline' | 'saveForPipeline'>,
    private readonly access: ProjectAccess,
    private readonly scope: AssignmentScope,
    private readonly queue: JobQueue,
  ) {}

  async prefetch(caller: Caller, projectId: number, input: PrefetchRequest): Promise<{ status: 200 | 202; body: PrefetchOut }> {
    const project = await this.access.project(caller, projectId, 'annotations.write');
    const role = (await this.access.roleOf(caller, project))!;
    const inProject = await this.repository.inProject(projectId, input.image_ids, await this.scope.listingUser(caller, project, role));
    const foreign = input.image_ids.findIndex((id) => !inProject.has(id));
    if (foreign !== -1) throw ValidationError.at(['body', 'image_ids', foreign], `Image ${input.image_ids[foreign]} is not in project ${projectId}`);
    const model = await this.models.imageModelInProduction(projectId);
    if (!model) throw new ConflictError(`Project ${projectId} has no production model to suggest annotations with: promote one (PATCH /api/models/{id}/lifecycle)`);
    const running = await this.repository.activeJob(projectId, PREFETCH_JOB);
    if (running !== null) return { status: 200, body: { model_id: model.id, queued: [], job_id: running } };
    const images = await this.repository.toPredict(projectId, input.image_ids, `model:${model.id}`);
    if (images.length === 0) return { status: 200, body: { model_id: model.id, queued: [], job_id: null } };
    // Nearest first, as the editor listed them: the image opened next gets its suggestions soonest.
    const order = new Map(input.image_ids.map((id, i) => [id, i]));
    const imageIds = images.map((i) => i.id).sort((a, b) => order.get(a)! - order.get(b)!);
    const payload: PrefetchPayload = { projectId, userId: caller.userId, modelId: model.id, imageIds };
    const job = await this.queue.enqueue(PREFETCH_JOB, payload, { projectId, createdBy: caller.userId });
    return { status: 202, body: { model_id: model.id, queued: imageIds, job_id: job.id } };
  }

  /**
   * Predicts each image still waiting (an image someone labelled, or that got this model's suggestions, since the
   * request is skipped) and writes its suggestions on their own; classes the project lacks are skipped, not created.
   */
  async runPrefetchJob(ctx: JobContext<PrefetchPayload>): Promise<object> {
    const { projectId, userId, modelId, imageIds } = ctx.payload;
    const model = await this.models.find(modelId);
    if (!model) throw new Error(`Model ${modelId} was deleted before the job ran`);
    const source = `model:${model.id}`;
    let predicted = 0;
    let created = 0;
    let skipped = 0;
    const locked: number[] = [];
    for (const [i, imageId] of imageIds.entries()) {
      if (ctx.signal.aborted) break;
      const [image] = await this.repository.toPredict(projectId, [imageId], source);
      if (image) {
        const planned = await this.detector.detectForPipeline(model, image, DETECTION);
        predicted++;
        // Labelled while the model ran: the person's work stands, no suggestion is laid over it.
        if ((await this.repository.toPredict(projectId, [imageId], source)).length === 1) {
          const saved = await this.detector.saveForPipeline(projectId, userId, [{ image_id: imageId, planned }], { source, createMissingClasses: false });
          created += saved.ids.length;
          skipped += saved.skipped;
          locked.push(...saved.locked);
        }
      }
      await ctx.progress((i + 1) / imageIds.length);
    }
    return { images: imageIds.length, predicted, created, skipped, locked };
  }
}
