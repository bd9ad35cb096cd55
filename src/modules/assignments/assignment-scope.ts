import type { Caller } from '../../access/caller.js';
import type { ProjectAccess, ProjectOwnership } from '../../access/project-access.js';
import type { ProjectRole } from '../../access/roles.js';
import { NotFoundError } from '../../http/errors.js';
import type { AssignmentsRepository } from './assignments.repository.js';

/**
 * In projects that keep annotators to their assignments, an image not assigned to the annotator does not exist for
 * them (404), like a project they may not see. Everyone else is unrestricted, at no cost.
 */
export class AssignmentScope {
  constructor(
    private readonly access: ProjectAccess,
    private readonly assignments: AssignmentsRepository,
  ) {}

  async assertImage(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageId: number, notFound: string): Promise<void> {
    const userId = await this.access.assignedOnlyUser(caller, project, role);
    if (userId !== null && !(await this.assignments.isAssigned(imageId, userId))) throw new NotFoundError(notFound);
  }

  /** The user whose assignments bound an image listing, or null for an unrestricted caller. */
  listingUser(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<number | null> {
    return this.access.assignedOnlyUser(caller, project, role);
  }
}
