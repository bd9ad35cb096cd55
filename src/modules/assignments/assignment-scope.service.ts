import type { Caller } from '../../access/caller.js';
import type { ProjectAccess, ProjectOwnership } from '../../access/project-access.js';
import type { ProjectRole } from '../../access/roles.js';
import { NotFoundError } from '../../http/errors.js';
import type { AnyItemWorkflow } from '../workflow/item-workflow.service.js';

/**
 * In projects that keep annotators to their assignments, an image not assigned to the annotator does not exist for
 * them (404), like a project they may not see. Everyone else is unrestricted, at no cost. The rule is the team
 * workflow's (samples share it); this names it for the image modules that already hold the project and role.
 */
export class AssignmentScope {
  constructor(
    private readonly access: ProjectAccess,
    private readonly workflow: AnyItemWorkflow,
  ) {}

  assertImage(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageId: number, notFound: string): Promise<void> {
    return this.workflow.assertAssigned(caller, project, role, { id: imageId, project_id: project.id, owner_id: project.owner_id }, notFound);
  }

  /** Whether the image is ground truth hidden from the caller (issue 29): shown as untouched, its labels not at all. */
  async hides(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageId: number): Promise<boolean> {
    return (await this.access.hiddenAmong(caller, project, role, [imageId])).has(imageId);
  }

  /** Which of the images are hidden ground truth for the caller. */
  hiddenAmong(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageIds: readonly number[]): Promise<Set<number>> {
    return this.access.hiddenAmong(caller, project, role, imageIds);
  }

  /** Whether listings must show the project's ground truth to the caller as untouched images. */
  hidesGroundTruth(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<boolean> {
    return this.access.hidesGroundTruth(caller, project, role);
  }

  /** An annotation of hidden ground truth (or its history) does not exist for the caller (404), like its labels. */
  async assertLabelsVisible(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageId: number, notFound: string): Promise<void> {
    if (await this.hides(caller, project, role, imageId)) throw new NotFoundError(notFound);
  }

  /** The user whose assignments bound an image listing, or null for an unrestricted caller. */
  listingUser(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<number | null> {
    return this.access.assignedOnlyUser(caller, project, role);
  }
}
