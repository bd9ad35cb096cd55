import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { Transactions } from '../../db/transactions.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import type { Page, PageQuery } from '../../http/pagination.js';
import type { AnnotationsRepository } from '../annotations/annotations.repository.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ImageLookup } from '../../access/image-lookup.repository.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { ProjectRow } from '../projects/projects.schemas.js';
import { isSingleLabel, secondClassConflict } from '../annotations/single-label.logic.js';
import type { RevisionsRepository } from './revisions.repository.js';
import { stateText, toRevisionOut, type AnnotationState, type RevisionOut } from './revisions.schemas.js';

export class RevisionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly revisions: RevisionsRepository,
    private readonly annotations: AnnotationsRepository,
    private readonly projects: ProjectsRepository,
    private readonly access: ProjectAccess,
    private readonly locks: LockGuard,
    private readonly scope: AssignmentScope,
    private readonly images: ImageLookup,
  ) {}

  /** An annotation's history, oldest first; still there after the annotation was deleted. */
  async forAnnotation(caller: Caller, annotationId: number, page: PageQuery): Promise<Page<RevisionOut>> {
    await this.annotationProject(caller, annotationId, 'project.read');
    const filter = { annotationId };
    const [rows, total] = await Promise.all([this.revisions.list(filter, page), this.revisions.count(filter)]);
    return { items: rows.map(toRevisionOut), total };
  }

  async forImage(caller: Caller, imageId: number, page: PageQuery): Promise<Page<RevisionOut>> {
    const image = await this.images.findWithOwner(imageId);
    const project = image && { id: image.project_id, owner_id: image.owner_id };
    const role = await this.access.check(caller, project, 'project.read', `Image ${imageId} not found`);
    await this.scope.assertImage(caller, project!, role, imageId, `Image ${imageId} not found`);
    // Hidden ground truth (issue 29) has no history to show, like an untouched image.
    if (await this.scope.hides(caller, project!, role, imageId)) return { items: [], total: 0 };
    const filter = { imageId };
    const [rows, total] = await Promise.all([this.revisions.list(filter, page), this.revisions.count(filter)]);
    return { items: rows.map(toRevisionOut), total };
  }

  /**
   * Restores the annotation to its state right after the given revision, as a new `revert` revision: a deleted
   * annotation comes back under its id, a revision that deleted it deletes it again. Counters move with it, and
   * the image's lock is respected, in one transaction.
   */
  async revert(caller: Caller, annotationId: number, revisionId: number): Promise<RevisionOut> {
    const revision = await this.revisions.find(revisionId);
    const project = await this.annotationProject(caller, annotationId, 'annotations.write');
    if (!revision || revision.annotation_id !== annotationId) throw new NotFoundError(`Revision ${revisionId} of annotation ${annotationId} not found`);
    const target = revision.after === null ? null : (JSON.parse(revision.after) as AnnotationState);
    const now = new Date().toISOString();
    try {
      const id = await this.transactions.run(async (tx) => {
        await this.locks.assertWritable(caller, revision.image_id, tx);
        const current = await this.annotations.findIn(annotationId, tx);
        const base = { annotation_id: annotationId, image_id: revision.image_id, project_id: revision.project_id, action: 'revert' as const, user_id: caller.userId, created_at: now };
        if (target === null) {
          if (!current) throw new ConflictError(`Annotation ${annotationId} is already deleted`);
          await this.annotations.delete(annotationId, tx);
          await this.annotations.countStatusChange(current, current.status, null, tx);
          return this.insertRevision({ ...base, before: stateText(current), after: null }, tx);
        }
        const fields = {
          ...target,
          geometry: JSON.stringify(target.geometry),
          attributes: target.attributes === undefined ? null : JSON.stringify(target.attributes),
          group_id: target.group_id ?? null,
        };
        // Bringing a class back must not give an image of a single-label project a second one (issue 30).
        if (target.annotation_type === 'classification' && current?.annotation_type !== 'classification' && isSingleLabel(project)) {
          const other = await this.annotations.otherClass(revision.image_id, annotationId, tx);
          if (other) throw secondClassConflict(project.id, revision.image_id, other);
        }
        if (current) {
          const updated = (await this.annotations.update(annotationId, { ...fields, updated_at: now }, tx))!;
          await this.annotations.countStatusChange(updated, current.status, updated.status, tx);
          return this.insertRevision({ ...base, before: stateText(current), after: stateText(updated) }, tx);
        }
        const restored = { id: annotationId, image_id: revision.image_id, project_id: revision.project_id, ...fields, status: fields.status ?? 'accepted', created_at: now, updated_at: now };
        await this.annotations.reinsert(restored, tx);
        await this.annotations.countStatusChange(restored, null, restored.status, tx);
        return this.insertRevision({ ...base, before: null, after: stateText(fields) }, tx);
      });
      return toRevisionOut((await this.revisions.find(id))!);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw new ConflictError(`The class of revision ${revisionId} no longer exists in the project`);
      throw err;
    }
  }

  private async insertRevision(values: Parameters<RevisionsRepository['insert']>[0], tx: Parameters<RevisionsRepository['insert']>[1]): Promise<number> {
    await this.revisions.insert(values, tx);
    return this.revisions.lastId(values.annotation_id, tx);
  }

  /** The project of an annotation, found through its history when the annotation itself was deleted. */
  private async annotationProject(caller: Caller, annotationId: number, permission: 'project.read' | 'annotations.write'): Promise<ProjectRow> {
    const latest = await this.revisions.latestOf(annotationId);
    const live = latest ? undefined : await this.annotations.find(annotationId);
    const projectId = latest?.project_id ?? live?.project_id;
    const imageId = latest?.image_id ?? live?.image_id;
    const project = projectId === undefined ? undefined : await this.projects.find(projectId);
    const notFound = `Annotation ${annotationId} not found`;
    const role = await this.access.check(caller, project, permission, notFound);
    await this.scope.assertImage(caller, project!, role, imageId!, notFound);
    await this.scope.assertLabelsVisible(caller, project!, role, imageId!, notFound);
    return project!;
  }
}
