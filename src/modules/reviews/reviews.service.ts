import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ValidationError } from '../../http/errors.js';
import { reviewDecision } from '../workflow/item-workflow.service.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ReviewsRepository } from './reviews.repository.js';
import { toReviewOut, type ReviewDecide, type ReviewListQuery, type ReviewOut } from './reviews.schemas.js';

export class ReviewsService {
  constructor(
    private readonly reviews: ReviewsRepository,
    private readonly access: ProjectAccess,
    private readonly scope: AssignmentScope,
  ) {}

  /** Submits images for review. An image outside the project is 422, one already waiting for review 409. */
  async submit(caller: Caller, projectId: number, imageIds: number[], comment = ''): Promise<ReviewOut[]> {
    const project = await this.access.project(caller, projectId, 'reviews.submit');
    const ids = [...new Set(imageIds)];
    const found = await this.reviews.imagesInProject(projectId, ids);
    const field = imageIds.length === 1 ? ['body', 'image_id'] : ['body', 'image_ids'];
    for (const [i, id] of imageIds.entries()) {
      const loc = imageIds.length === 1 ? field : [...field, i];
      if (!found.has(id)) throw ValidationError.at(loc, `Image ${id} is not an image of project ${projectId}`);
    }
    const role = (await this.access.roleOf(caller, project))!;
    for (const id of ids) await this.scope.assertImage(caller, project, role, id, `Image ${id} not found`);
    await this.access.assertLabelsThroughTasks(caller, project, role, 'images');
    const rows = await this.reviews.submit(projectId, ids, caller.userId, comment, new Date().toISOString());
    if (!rows) throw new ConflictError(ids.length === 1 ? `Image ${ids[0]} is already waiting for review` : 'Some of the images are already waiting for review');
    return rows.map(toReviewOut);
  }

  async list(caller: Caller, projectId: number, query: ReviewListQuery): Promise<ReviewOut[]> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const role = (await this.access.roleOf(caller, project))!;
    let rows = (await this.reviews.list(projectId, query)).map(toReviewOut);
    // The reviews of hidden ground truth (issue 29) are not there for the caller: they would name its reviewed state.
    const hidden = await this.scope.hiddenAmong(caller, project, role, [...new Set(rows.map((r) => r.image_id))]);
    if (hidden.size > 0) rows = rows.filter((r) => !hidden.has(r.image_id));
    // An annotator kept to their assignments sees the reviews of their images only.
    const restrictedTo = await this.scope.listingUser(caller, project, role);
    if (restrictedTo === null) return rows;
    const visible = await Promise.all(rows.map((r) => this.scope.assertImage(caller, project, role, r.image_id, '').then(() => true, () => false)));
    return rows.filter((_, i) => visible[i]);
  }

  async get(caller: Caller, reviewId: number): Promise<ReviewOut> {
    const row = await this.reviews.find(reviewId);
    const project = row && { id: row.project_id, owner_id: row.owner_id };
    const role = await this.access.check(caller, project, 'project.read', `Review ${reviewId} not found`);
    await this.scope.assertImage(caller, project!, role, row!.image_id, `Review ${reviewId} not found`);
    await this.scope.assertLabelsVisible(caller, project!, role, row!.image_id, `Review ${reviewId} not found`);
    return toReviewOut(row!);
  }

  /**
   * Approves, rejects or returns a pending review (409 once decided). Rejecting or asking for changes sends the image
   * back to the submitter's queue; the decision records who and when.
   */
  async decide(caller: Caller, reviewId: number, input: ReviewDecide): Promise<ReviewOut> {
    const row = await this.reviews.find(reviewId);
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, 'reviews.decide', `Review ${reviewId} not found`);
    const { state, comment } = reviewDecision(input);
    if (row!.status !== 'pending') throw new ConflictError(`Review ${reviewId} was already decided (${row!.status})`);
    const decided = await this.reviews.decide(reviewId, state, caller.userId, comment, new Date().toISOString());
    if (!decided) throw new ConflictError(`Review ${reviewId} was already decided`);
    return toReviewOut(decided);
  }
}
