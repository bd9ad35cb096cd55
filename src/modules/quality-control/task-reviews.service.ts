import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { QcReviewState } from '../../db/schema.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { PendingTaskRow, QualityControlRepository, TaskReviewRow, TaskRow } from './quality-control.repository.js';
import type { PendingTaskReviewOut, QcShape, TaskReviewOut } from './quality-control.schemas.js';
import { resolvedShapes } from './task-tracks.logic.js';
import type { ReviewQuery, ReviewValues } from './task-reviews.repository.js';

export type { ReviewQuery };

/** A task as the review step sees it. */
export interface ReviewedTask { id: number; user_id: number; status: 'open' | 'submitted'; review_state: QcReviewState | null; review_comment: string | null; review_round: number; submitted_at: string | null }

/** What the review step reads and writes of images' or samples' tasks (their repositories). */
export interface TaskReviewStore<T extends ReviewedTask, P extends ReviewedTask, R> {
  findTask(projectId: number, itemId: number, userId: number): Promise<T | undefined>;
  pendingReviews(projectId: number, reviewerId: number, query: ReviewQuery): Promise<P[]>;
  decideReview(task: T, values: ReviewValues): Promise<R | undefined>;
  taskReviews(projectId: number, query: ReviewQuery): Promise<R[]>;
  users(ids: readonly number[]): Promise<Map<number, { email: string; display_name: string }>>;
}

/** The fields every pending entry has, images' and samples'. */
export interface PendingCommon { task_id: number; user_id: number; email: string; display_name: string; submitted_at: string | null; round: number; last_comment: string | null }

/** Images or samples under review: their item (`key`), their store, and how an entry and a decision are shown. */
export interface ReviewedItems<T extends ReviewedTask, P extends ReviewedTask, R, PendingOut, ReviewOut> {
  noun: 'image' | 'sample';
  key: 'image_id' | 'sample_id';
  store: TaskReviewStore<T, P, R>;
  pendingOut(row: P, common: PendingCommon): PendingOut | Promise<PendingOut>;
  reviewOut(row: R): ReviewOut;
}

/** A decision as a reviewer sends it: the item (`image_id` or `sample_id`), the annotator, accept or request changes. */
export interface TaskReviewInput { image_id?: number; sample_id?: number; user_id: number; decision: ReviewValues['decision']; comment?: string }

/**
 * The review step on quality-control task submissions (issue 29), one for images' and samples' tasks. A task's review goes
 *   submit → `pending` → `accepted` (final)
 *                      → `changes_requested` (the task is open again for its annotator, dealt first by tasks/next,
 *                         with the comment) → resubmit → `pending` (round 2, …) → …
 * Whoever may decide image reviews (`reviews.decide`: reviewers, project admins, owners) reviews tasks, never their
 * own. Every decision is recorded with the version it was made on (`qc_task_reviews`, `qc_sample_task_reviews`).
 * Ground-truth tasks are reviewed like any other: nothing here tells them apart. A video's frames are reviewed as they
 * are submitted, as the annotator's task set: listed once, decided once (one record, on the frame named) for every
 * frame of it.
 */
export class TaskReviewsService<T extends ReviewedTask, P extends ReviewedTask, R, PendingOut, ReviewOut> {
  constructor(
    private readonly items: ReviewedItems<T, P, R, PendingOut, ReviewOut>,
    private readonly access: ProjectAccess,
  ) {}

  async pending(caller: Caller, projectId: number, query: ReviewQuery): Promise<PendingOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const { store } = this.items;
    const rows = await store.pendingReviews(projectId, caller.userId, query);
    const users = await store.users([...new Set(rows.map((r) => r.user_id))]);
    return Promise.all(rows.map((r) => this.items.pendingOut(r, {
      task_id: r.id,
      user_id: r.user_id,
      email: users.get(r.user_id)?.email ?? '',
      display_name: users.get(r.user_id)?.display_name ?? '',
      submitted_at: r.submitted_at,
      round: Number(r.review_round) + 1,
      // A change request's comment stays on the task (on every frame of a set) until the next decision.
      last_comment: Number(r.review_round) > 0 ? r.review_comment : null,
    })));
  }

  /**
   * Accepts a pending submission or requests changes (a comment needed); 409 when it is not waiting for review. A
   * video frame's decision is its task set's: every pending frame of the annotator's set moves at once.
   */
  async decide(caller: Caller, projectId: number, input: TaskReviewInput): Promise<ReviewOut> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const { noun, key, store } = this.items;
    const itemId = input[key]!;
    const comment = (input.comment ?? '').trim();
    if (input.decision === 'changes_requested' && comment === '') throw ValidationError.at(['body', 'comment'], 'Say what to change: a change request needs a comment', 'missing');
    if (input.user_id === caller.userId) throw new ForbiddenError('You cannot review your own task');
    const task = await store.findTask(projectId, itemId, input.user_id);
    if (!task) throw new NotFoundError(`User ${input.user_id} has no task on ${noun} ${itemId} in project ${projectId}`);
    const notPending = () => new ConflictError(`The task of user ${input.user_id} on ${noun} ${itemId} is not waiting for review (${task.status === 'open' ? 'open with its annotator' : task.review_state ?? 'never submitted'})`);
    if (task.status !== 'submitted' || task.review_state !== 'pending') throw notPending();
    const row = await store.decideReview(task, { decision: input.decision, comment, reviewed_by: caller.userId, created_at: new Date().toISOString() });
    if (!row) throw notPending();
    return this.items.reviewOut(row);
  }

  async list(caller: Caller, projectId: number, query: ReviewQuery): Promise<ReviewOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    return (await this.items.store.taskReviews(projectId, query)).map((r) => this.items.reviewOut(r));
  }
}

/**
 * Images' tasks under review: an entry shows the image's size and the annotator's shapes as they see them; a video's
 * task set is one entry, with its pending frames' versions to step through.
 */
export function imageTaskReviews(repo: QualityControlRepository): ReviewedItems<TaskRow, PendingTaskRow, TaskReviewRow, PendingTaskReviewOut, TaskReviewOut> {
  return {
    noun: 'image',
    key: 'image_id',
    store: repo,
    pendingOut: async (r, common) => {
      const set = r.video_id === null ? [] : await repo.videoTasks(r.project_id, r.user_id, r.video_id);
      const frames = set.filter((t) => t.status === 'submitted' && t.review_state === 'pending');
      const shapes = resolvedShapes([r, ...frames], () => set);
      return {
        ...common,
        image_id: r.image_id,
        width: r.width,
        height: r.height,
        video_id: r.video_id,
        frame: r.frame,
        frames: r.frames,
        video_frames: frames.map((t, i) => ({ task_id: t.id, image_id: t.image_id, frame: t.frame ?? 0, shapes: shapes[i + 1] })),
        shapes: shapes[0],
      };
    },
    reviewOut: toTaskReviewOut,
  };
}

function toTaskReviewOut(row: TaskReviewRow): TaskReviewOut {
  return {
    id: row.id,
    task_id: row.task_id,
    image_id: row.image_id,
    user_id: row.user_id,
    round: row.round,
    decision: row.decision,
    comment: row.comment,
    shapes: JSON.parse(row.shapes) as QcShape[],
    reviewed_by: row.reviewed_by,
    created_at: row.created_at,
  };
}
