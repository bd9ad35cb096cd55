import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { QualityControlRepository, TaskReviewRow } from './quality-control.repository.js';
import { resolvedShapes } from './task-tracks.logic.js';
import type { PendingTaskReviewOut, QcShape, TaskReviewCreate, TaskReviewOut, TaskReviewQuery } from './quality-control.schemas.js';

/**
 * The review step on quality-control task submissions (issue 29). A task's review goes
 *   submit → `pending` → `accepted` (final)
 *                      → `changes_requested` (the task is open again for its annotator, dealt first by tasks/next,
 *                         with the comment) → resubmit → `pending` (round 2, …) → …
 * Whoever may decide image reviews (`reviews.decide`: reviewers, project admins, owners) reviews tasks, never their
 * own. Every decision is recorded with the version it was made on (`qc_task_reviews`). Ground-truth tasks are
 * reviewed like any other: nothing here tells them apart. A video's frames are reviewed as they are submitted, as
 * the annotator's task set: listed once, decided once (one record, on the frame named) for every frame of it.
 */
export class TaskReviewsService {
  constructor(
    private readonly repo: QualityControlRepository,
    private readonly access: ProjectAccess,
  ) {}

  /** Pending submissions, a video's task set as one, with its pending frames' versions to step through. */
  async pending(caller: Caller, projectId: number, query: TaskReviewQuery): Promise<PendingTaskReviewOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const rows = await this.repo.pendingReviews(projectId, caller.userId, query);
    const users = await this.repo.users([...new Set(rows.map((r) => r.user_id))]);
    return Promise.all(rows.map(async (r) => {
      const set = r.video_id === null ? [] : await this.repo.videoTasks(projectId, r.user_id, r.video_id);
      const frames = set.filter((t) => t.status === 'submitted' && t.review_state === 'pending');
      const shapes = resolvedShapes([r, ...frames], () => set);
      return {
        task_id: r.id,
        image_id: r.image_id,
        user_id: r.user_id,
        email: users.get(r.user_id)?.email ?? '',
        display_name: users.get(r.user_id)?.display_name ?? '',
        width: r.width,
        height: r.height,
        video_id: r.video_id,
        frame: r.frame,
        frames: r.frames,
        video_frames: frames.map((t, i) => ({ task_id: t.id, image_id: t.image_id, frame: t.frame ?? 0, shapes: shapes[i + 1] })),
        shapes: shapes[0],
        submitted_at: r.submitted_at,
        round: Number(r.review_round) + 1,
        // The comment a change request left on the task (every frame of a set) stays until the next decision.
        last_comment: Number(r.review_round) > 0 ? r.review_comment : null,
      };
    }));
  }

  /**
   * Accepts a pending submission or requests changes (a comment needed); 409 when it is not waiting for review. A
   * video frame's decision is its task set's: every pending frame of the annotator's set moves at once.
   */
  async decide(caller: Caller, projectId: number, input: TaskReviewCreate): Promise<TaskReviewOut> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const comment = (input.comment ?? '').trim();
    if (input.decision === 'changes_requested' && comment === '') throw ValidationError.at(['body', 'comment'], 'Say what to change: a change request needs a comment', 'missing');
    if (input.user_id === caller.userId) throw new ForbiddenError('You cannot review your own task');
    const task = await this.repo.findTask(projectId, input.image_id, input.user_id);
    if (!task) throw new NotFoundError(`User ${input.user_id} has no task on image ${input.image_id} in project ${projectId}`);
    const notPending = () => new ConflictError(`The task of user ${input.user_id} on image ${input.image_id} is not waiting for review (${task.status === 'open' ? 'open with its annotator' : task.review_state ?? 'never submitted'})`);
    if (task.status !== 'submitted' || task.review_state !== 'pending') throw notPending();
    const row = await this.repo.decideReview(task, { decision: input.decision, comment, reviewed_by: caller.userId, created_at: new Date().toISOString() });
    if (!row) throw notPending();
    return toTaskReviewOut(row);
  }

  async list(caller: Caller, projectId: number, query: TaskReviewQuery): Promise<TaskReviewOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    return (await this.repo.taskReviews(projectId, query)).map(toTaskReviewOut);
  }
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
