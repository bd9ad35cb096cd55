import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { QualityControlRepository, TaskReviewRow } from './quality-control.repository.js';
import type { PendingTaskReviewOut, QcShape, TaskReviewCreate, TaskReviewOut, TaskReviewQuery } from './quality-control.schemas.js';

/**
 * The review step on quality-control task submissions (issue 29). A task's review goes
 *   submit → `pending` → `accepted` (final)
 *                      → `changes_requested` (the task is open again for its annotator, dealt first by tasks/next,
 *                         with the comment) → resubmit → `pending` (round 2, …) → …
 * Whoever may decide image reviews (`reviews.decide`: reviewers, project admins, owners) reviews tasks, never their
 * own. Every decision is recorded with the version it was made on (`qc_task_reviews`). Ground-truth tasks are
 * reviewed like any other: nothing here tells them apart.
 */
export class TaskReviewsService {
  constructor(
    private readonly repo: QualityControlRepository,
    private readonly access: ProjectAccess,
  ) {}

  async pending(caller: Caller, projectId: number, query: TaskReviewQuery): Promise<PendingTaskReviewOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const rows = await this.repo.pendingReviews(projectId, caller.userId, query);
    const [users, comments] = await Promise.all([this.repo.users([...new Set(rows.map((r) => r.user_id))]), this.repo.lastComments(rows.filter((r) => Number(r.review_round) > 0).map((r) => r.id))]);
    return rows.map((r) => ({
      task_id: r.id,
      image_id: r.image_id,
      user_id: r.user_id,
      email: users.get(r.user_id)?.email ?? '',
      display_name: users.get(r.user_id)?.display_name ?? '',
      width: r.width,
      height: r.height,
      shapes: JSON.parse(r.shapes) as QcShape[],
      submitted_at: r.submitted_at,
      round: Number(r.review_round) + 1,
      last_comment: comments.get(r.id) ?? null,
    }));
  }

  /** Accepts a pending submission or requests changes (a comment needed); 409 when it is not waiting for review. */
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
