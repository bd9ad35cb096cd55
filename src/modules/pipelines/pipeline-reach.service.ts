import type { Caller } from '../../access/caller.js';
import type { OrgAccess } from '../../access/org-access.js';
import type { ProjectAccess, ProjectRecord } from '../../access/project-access.js';
import type { Permission } from '../../access/roles.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { Problem } from './pipeline-validation.logic.js';
import type { PipelinesRepository, ProjectOwners } from './pipelines.repository.js';
import type { PipelineRow } from './pipelines.schemas.js';
import { stepReferences } from './step-references.logic.js';

/**
 * Who owns a pipeline. A project's pipeline is read by the project's readers, changed by its admins and runs on it.
 * An organization's is read and run by its members, on the organization's projects they may run it on, and changed
 * by its owners and admins. One with neither (saved without an owner, or a global pipeline whose creator managed no
 * organization when owners came in) is its creator's alone. Instance admins reach every pipeline.
 */
export type PipelineOwner = { kind: 'project'; id: number } | { kind: 'org'; id: number } | { kind: 'creator'; id: number | null };

export type PipelineRecord = PipelineRow & { owner_id: number | null };

export function ownerOf(row: PipelineRow): PipelineOwner {
  if (row.project_id !== null) return { kind: 'project', id: row.project_id };
  if (row.org_id !== null) return { kind: 'org', id: row.org_id };
  return { kind: 'creator', id: row.created_by };
}

/** The access rules of pipelines: who sees, changes and runs one, and which records its steps may name. */
export class PipelineReach {
  constructor(
    private readonly repository: PipelinesRepository,
    private readonly access: ProjectAccess,
    private readonly orgs: OrgAccess,
  ) {}

  /** The owner of a new pipeline, once the caller may create one there (404 when hidden, 403 when not allowed). */
  async newOwner(caller: Caller, projectId: number | null | undefined, orgId: number | null | undefined, at: string[]): Promise<PipelineOwner> {
    if (projectId != null && orgId != null) throw ValidationError.at([...at, 'org_id'], 'A pipeline belongs to a project or to an organization, not both');
    if (projectId != null) {
      await this.access.project(caller, projectId, 'project.update');
      return { kind: 'project', id: projectId };
    }
    if (orgId != null) {
      await this.orgs.org(caller, orgId, 'org.manage');
      return { kind: 'org', id: orgId };
    }
    return { kind: 'creator', id: caller.userId };
  }

  /** The pipeline, when the caller may see it (404 otherwise, whoever owns it). */
  async visible(caller: Caller, id: number): Promise<PipelineRecord> {
    const row = await this.repository.find(id);
    if (!row) throw NotFoundError.of('Pipeline', id);
    const owner = ownerOf(row);
    const notFound = `Pipeline ${id} not found`;
    if (owner.kind === 'project') await this.access.check(caller, { id: owner.id, owner_id: row.owner_id! }, 'project.read', notFound);
    else if (owner.kind === 'org' && !(await this.orgs.roleOf(caller, owner.id))) throw new NotFoundError(notFound);
    else if (owner.kind === 'creator' && owner.id !== caller.userId && !caller.isAdmin) throw new NotFoundError(notFound);
    return row;
  }

  /** The pipeline, when the caller may change or delete it (403 when they only see it). */
  async changeable(caller: Caller, id: number): Promise<PipelineRecord> {
    const row = await this.visible(caller, id);
    const owner = ownerOf(row);
    if (owner.kind === 'project') await this.access.check(caller, { id: owner.id, owner_id: row.owner_id! }, 'project.update', `Pipeline ${id} not found`);
    else if (owner.kind === 'org') await this.orgs.check(caller, owner.id, true, 'org.manage');
    return row;
  }

  /** What a listing shows: one project's or organization's pipelines, or every pipeline the caller sees (null: all). */
  async listing(caller: Caller, query: { project_id?: number; org_id?: number }) {
    if (query.project_id !== undefined) {
      await this.access.project(caller, query.project_id, 'project.read');
      return { projectId: query.project_id };
    }
    if (query.org_id !== undefined) {
      await this.orgs.org(caller, query.org_id, 'org.read');
      return { orgId: query.org_id };
    }
    if (caller.isAdmin) return null;
    const projectIds: number[] = [];
    for (const p of await this.repository.pipelineProjects()) if (await this.access.roleOf(caller, p)) projectIds.push(p.id);
    return { projectIds, orgIds: await this.repository.orgIdsOf(caller.userId), creatorId: caller.userId };
  }

  /**
   * The project a run goes on, once the caller may run the pipeline there: its own project for a project's pipeline,
   * one of the organization's projects for an organization's, any project the caller may run it on for a creator's.
   * A run reads the whole project (select_images takes every image): an annotator kept to their assignments gets 403.
   */
  async runProject(caller: Caller, pipeline: PipelineRecord, requested: number | undefined, permission: Permission): Promise<ProjectRecord> {
    const owner = ownerOf(pipeline);
    const projectId = requested ?? (owner.kind === 'project' ? owner.id : null);
    if (projectId === null) throw ValidationError.at(['body', 'project_id'], 'This pipeline has no project of its own: give the project_id to run it on', 'missing');
    if (owner.kind === 'project' && projectId !== owner.id) throw ValidationError.at(['body', 'project_id'], `Pipeline ${pipeline.id} belongs to project ${owner.id}`);
    const project = await this.access.wholeProject(caller, projectId, permission);
    if (caller.scope === 'read-only') throw new ForbiddenError('A read-only token cannot run pipelines');
    if (owner.kind === 'org' && project.org_id !== owner.id) {
      throw ValidationError.at(['body', 'project_id'], `Pipeline ${pipeline.id} belongs to organization ${owner.id}; project ${projectId} is not one of its projects`);
    }
    return project;
  }

  /** Where a definition validated on its own may name records: the given project or organization, else the caller's projects. */
  async validationOwner(caller: Caller, query: { project_id?: number; org_id?: number }): Promise<PipelineOwner> {
    if (query.project_id !== undefined) {
      await this.access.project(caller, query.project_id, 'project.read');
      return { kind: 'project', id: query.project_id };
    }
    if (query.org_id !== undefined) {
      await this.orgs.org(caller, query.org_id, 'org.read');
      return { kind: 'org', id: query.org_id };
    }
    return { kind: 'creator', id: caller.userId };
  }

  /**
   * Models, versions and classes the steps name by id that are not the owner's: its project's, its organization's
   * projects', or (a creator's pipeline) projects the caller sees. A record that does not exist reads the same.
   */
  async referenceProblems(caller: Caller, definition: unknown, owner: PipelineOwner): Promise<Problem[]> {
    const references = stepReferences(definition);
    if (references.length === 0) return [];
    const projects = await this.repository.referencedProjects(references);
    const where = owner.kind === 'project' ? `project ${owner.id}` : owner.kind === 'org' ? `a project of organization ${owner.id}` : 'a project you can see';
    const problems: Problem[] = [];
    for (const ref of references) {
      const project = projects.get(`${ref.kind}:${ref.id}`);
      if (!project || !(await this.owns(caller, owner, project))) problems.push({ path: ref.path, message: `${ref.kind} ${ref.id} is not a ${ref.kind} of ${where}` });
    }
    return problems;
  }

  private async owns(caller: Caller, owner: PipelineOwner, project: ProjectOwners): Promise<boolean> {
    if (owner.kind === 'project') return project.id === owner.id;
    if (owner.kind === 'org') return project.org_id === owner.id;
    return (await this.access.roleOf(caller, project)) !== null;
  }
}
