import { ForbiddenError, NotFoundError } from '../http/errors.js';
import type { ProjectsRepository } from '../modules/projects/projects.repository.js';
import type { ProjectRow } from '../modules/projects/projects.schemas.js';
import type { Caller } from './caller.js';
import { roleAllows, type Permission, type ProjectRole } from './roles.js';

/** The part of a project row that decides who may see it. */
export interface ProjectOwnership {
  id: number;
  owner_id: number;
}

/**
 * The one place that decides what a caller may do in a project. A project the caller may not see is reported as
 * not found (404), one they see but may not act on as forbidden (403). Async because roles granted through
 * membership are looked up in the database.
 */
export class ProjectAccess {
  constructor(private readonly projects: ProjectsRepository) {}

  /** The caller's role in the project, or null when they may not see it. */
  async roleOf(caller: Caller, project: ProjectOwnership): Promise<ProjectRole | null> {
    if (project.owner_id === caller.userId) return 'owner';
    if (caller.isAdmin) return 'admin';
    return null;
  }

  /**
   * Throws unless the caller holds `permission` in the project; returns their role. `notFound` is the message used
   * when the record the caller asked for (a project, or an image or class inside one) is hidden or missing.
   */
  async check(caller: Caller, project: ProjectOwnership | undefined, permission: Permission, notFound: string): Promise<ProjectRole> {
    const role = project ? await this.roleOf(caller, project) : null;
    if (!project || !role) throw new NotFoundError(notFound);
    if (!roleAllows(role, permission)) {
      throw new ForbiddenError(`Your role (${role}) in project ${project.id} does not allow ${permission}`);
    }
    return role;
  }

  /** Loads a project the caller holds `permission` in (404 when hidden or missing, 403 when not allowed). */
  async project(caller: Caller, projectId: number, permission: Permission): Promise<ProjectRow> {
    const project = await this.projects.find(projectId);
    await this.check(caller, project, permission, `Project ${projectId} not found`);
    return project!;
  }

  /** Owner filter for project listings: null when the caller sees every project (instance admins). */
  listingOwner(caller: Caller): number | null {
    return caller.isAdmin ? null : caller.userId;
  }
}
