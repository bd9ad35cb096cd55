import { ForbiddenError, NotFoundError } from '../http/errors.js';
import type { Selectable } from 'kysely';
import type { ProjectsTable } from '../db/schema.js';
import type { AccessRepository, ProjectGrant } from './access.repository.js';
import type { Caller } from './caller.js';
import { projectRoleFromOrg, roleAllows, strongestRole, type Permission, type ProjectRole } from './roles.js';

/** The part of a project row that decides who may see it. */
export interface ProjectOwnership {
  id: number;
  owner_id: number;
}

/** A project row as stored (the projects module's ProjectRow is the same type). */
export type ProjectRecord = Selectable<ProjectsTable>;

/**
 * How access finds a project. Owned by this layer so that src/access never imports a module; the projects
 * repository implements it.
 */
export interface ProjectLookup {
  find(projectId: number): Promise<ProjectRecord | undefined>;
}

/** How long a looked-up membership is trusted; changes made through this process forget it at once. */
const GRANT_CACHE_MS = 2_000;
const GRANT_CACHE_MAX = 50_000;

interface CachedGrant {
  grant: ProjectGrant | undefined;
  at: number;
}

/**
 * The one place that decides what a caller may do in a project. A project the caller may not see is reported as
 * not found (404), one they see but may not act on as forbidden (403). A caller's role is the strongest of: owner
 * (the project's creator), their project membership, admin through an organization they own or administer, and
 * admin as instance admin. Memberships are cached for a couple of seconds, so a permission check on the hot path
 * costs a map lookup; member and organization changes clear the cache.
 */
export class ProjectAccess {
  private readonly grants = new Map<string, CachedGrant>();

  constructor(
    private readonly projects: ProjectLookup,
    private readonly repository: AccessRepository,
  ) {}

  /** The caller's role in the project, or null when they may not see it. */
  async roleOf(caller: Caller, project: ProjectOwnership): Promise<ProjectRole | null> {
    if (project.owner_id === caller.userId) return 'owner';
    const grant = await this.grantOf(caller.userId, project.id);
    const role = grant ? strongestRole(grant.member_role, projectRoleFromOrg(grant.org_role)) : null;
    return caller.isAdmin ? strongestRole(role, 'admin') : role;
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
  async project(caller: Caller, projectId: number, permission: Permission): Promise<ProjectRecord> {
    const project = await this.projects.find(projectId);
    await this.check(caller, project, permission, `Project ${projectId} not found`);
    return project!;
  }

  /**
   * The user whose assigned images are all the caller may see and edit in the project, or null when the caller is
   * not restricted: annotators are, in projects that keep annotators to their assignments.
   */
  async assignedOnlyUser(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<number | null> {
    if (role !== 'annotator') return null;
    const grant = await this.grantOf(caller.userId, project.id);
    return grant?.assigned_only ? caller.userId : null;
  }

  /**
   * Loads a project whose every image the caller must be able to read (version outputs, exports): an annotator kept
   * to their assignments sees the project but not the whole of it (403), nor does anyone below project admin while
   * the project keeps hidden ground truth (issue 29).
   */
  async wholeProject(caller: Caller, projectId: number, permission: Permission): Promise<ProjectRecord> {
    const project = await this.project(caller, projectId, permission);
    const role = (await this.roleOf(caller, project))!;
    if ((await this.assignedOnlyUser(caller, project, role)) !== null) {
      throw new ForbiddenError(`Annotators of project ${projectId} see only the images assigned to them, not the whole project`);
    }
    // The whole project would hold the reviewed labels of hidden ground truth (and say which images they are).
    if (await this.hidesGroundTruth(caller, project, role)) {
      throw new ForbiddenError(`Project ${projectId} keeps ground truth for quality control: only project admins read the whole project`);
    }
    return project;
  }

  /**
   * Whether the project hides ground truth from the caller (issue 29): everyone below project admin (who marks it) sees
   * each ground-truth image as an untouched image of the pool, so that nothing tells a ground-truth task from another.
   */
  async hidesGroundTruth(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<boolean> {
    if (roleAllows(role, 'project.update')) return false;
    return this.repository.hasGroundTruth(project.id);
  }

  /**
   * Refuses (403) a label write or a submission for review made outside quality-control tasks by someone the project
   * hides ground truth from (issue 29). On a ground-truth item it would change the reference or, answered differently,
   * name it; so it is refused on every item of the project alike, and the answer tells none from another. Those roles
   * label through their tasks (`quality-control/tasks/next`).
   */
  async assertLabelsThroughTasks(caller: Caller, project: ProjectOwnership, role: ProjectRole, items: 'images' | 'samples'): Promise<void> {
    const hides = items === 'images' ? await this.hidesGroundTruth(caller, project, role) : await this.hidesSampleGroundTruth(caller, project, role);
    if (hides) throw new ForbiddenError(`Project ${project.id} keeps ground truth for quality control: label its ${items} through your quality-control tasks`);
  }

  /** Which of the images are ground truth hidden from the caller (see hidesGroundTruth). */
  async hiddenAmong(caller: Caller, project: ProjectOwnership, role: ProjectRole, imageIds: readonly number[]): Promise<Set<number>> {
    if (roleAllows(role, 'project.update') || imageIds.length === 0) return new Set();
    return this.repository.groundTruthAmong(project.id, imageIds);
  }

  /** Whether the project hides ground-truth samples from the caller (as hidesGroundTruth for images). */
  async hidesSampleGroundTruth(caller: Caller, project: ProjectOwnership, role: ProjectRole): Promise<boolean> {
    if (roleAllows(role, 'project.update')) return false;
    return this.repository.hasSampleGroundTruth(project.id);
  }

  /** Which of the samples are ground truth hidden from the caller. */
  async hiddenSamplesAmong(caller: Caller, project: ProjectOwnership, role: ProjectRole, sampleIds: readonly number[]): Promise<Set<number>> {
    if (roleAllows(role, 'project.update') || sampleIds.length === 0) return new Set();
    return this.repository.sampleGroundTruthAmong(project.id, sampleIds);
  }

  /** Whose projects a listing shows: null when the caller sees every project (instance admins), else their user id. */
  listingViewer(caller: Caller): number | null {
    return caller.isAdmin ? null : caller.userId;
  }

  /** Forgets cached memberships after a change (of one project's members, or of anything when no id is given). */
  forget(projectId?: number): void {
    if (projectId === undefined) {
      this.grants.clear();
      return;
    }
    const suffix = `:${projectId}`;
    for (const key of this.grants.keys()) if (key.endsWith(suffix)) this.grants.delete(key);
  }

  private async grantOf(userId: number, projectId: number): Promise<ProjectGrant | undefined> {
    const key = `${userId}:${projectId}`;
    const now = Date.now();
    const cached = this.grants.get(key);
    if (cached && now - cached.at < GRANT_CACHE_MS) return cached.grant;
    const grant = await this.repository.findGrant(userId, projectId);
    if (this.grants.size >= GRANT_CACHE_MAX) this.grants.clear();
    this.grants.set(key, { grant, at: now });
    return grant;
  }
}
