import type { Caller } from '../../access/caller.js';
import type { OrgAccess } from '../../access/org-access.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ForbiddenError, HttpError, ValidationError } from '../../http/errors.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { deleteProjectFiles } from '../../storage/lifecycle.js';
import type { ProjectsRepository } from './projects.repository.js';
import { toProjectOut, type ProjectCreate, type ProjectOut, type ProjectUpdate } from './projects.schemas.js';

export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly access: ProjectAccess,
    private readonly orgs: OrgAccess,
    private readonly blobs: BlobStore,
  ) {}

  async list(caller: Caller, search?: string): Promise<ProjectOut[]> {
    return (await this.projects.list(this.access.listingViewer(caller), search)).map(toProjectOut);
  }

  async create(caller: Caller, input: ProjectCreate): Promise<ProjectOut> {
    if (input.org_id) await this.assertOrgManager(caller, input.org_id);
    const now = new Date().toISOString();
    const row = await this.projects.insert({
      owner_id: caller.userId,
      name: input.name.trim(),
      description: input.description ?? '',
      project_type: input.project_type ?? 'object_detection',
      location: input.location ?? '',
      org_id: input.org_id ?? null,
      assigned_only: input.assigned_only ? 1 : 0,
      multi_label: input.multi_label ? 1 : 0,
      created_at: now,
      updated_at: now,
    });
    return toProjectOut(row);
  }

  async get(caller: Caller, id: number): Promise<ProjectOut> {
    return toProjectOut(await this.access.project(caller, id, 'project.read'));
  }

  async update(caller: Caller, id: number, input: ProjectUpdate): Promise<ProjectOut> {
    const project = await this.access.project(caller, id, 'project.update');
    const { assigned_only, multi_label, org_id, ...fields } = input;
    if (org_id !== undefined && org_id !== project.org_id) {
      // Moving a project between organizations changes who administers it: only its owner (or the instance admin)
      // does that, and only into an organization they own or administer. Leaving one needs nothing more, so the
      // owner can always take back access an organization got.
      if (project.owner_id !== caller.userId && !caller.isAdmin) {
        throw new ForbiddenError(`Only the owner of project ${id} moves it between organizations`);
      }
      if (org_id !== null) await this.assertOrgManager(caller, org_id);
    }
    if (multi_label === false && project.multi_label === 1 && project.project_type === 'classification') {
      const several = await this.projects.imagesWithClasses(id);
      if (several > 0) {
        throw new ConflictError(`${several} image(s) of project ${id} hold more than one class; single-label keeps one per image: `
          + 'remove the extra classes first (nothing was changed)');
      }
    }
    const row = await this.projects.update(id, {
      ...fields,
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(org_id !== undefined ? { org_id } : {}),
      ...(assigned_only !== undefined ? { assigned_only: assigned_only ? 1 : 0 } : {}),
      ...(multi_label !== undefined ? { multi_label: multi_label ? 1 : 0 } : {}),
      updated_at: new Date().toISOString(),
    });
    this.access.forget(id);
    return toProjectOut(row);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.access.project(caller, id, 'project.delete');
    await this.projects.delete(id);
    await deleteProjectFiles(this.blobs, id);
  }

  /** Deletes the listed projects the caller may delete; the others are reported, not touched. */
  async bulkDelete(caller: Caller, ids: number[]): Promise<{ deleted: number; not_found: number[] }> {
    const notFound: number[] = [];
    let deleted = 0;
    for (const id of new Set(ids)) {
      try {
        await this.delete(caller, id);
        deleted++;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 404 && (err as { statusCode?: number }).statusCode !== 403) throw err;
        notFound.push(id);
      }
    }
    return { deleted, not_found: notFound };
  }

  /** Projects join an organization only by someone who manages it (an unknown or foreign one is a bad org_id). */
  private async assertOrgManager(caller: Caller, orgId: number): Promise<void> {
    try {
      await this.orgs.org(caller, orgId, 'org.manage');
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 404) throw ValidationError.at(['body', 'org_id'], `Organization ${orgId} not found`);
      throw err;
    }
  }

  stats(caller: Caller) {
    return this.projects.totals(this.access.listingViewer(caller));
  }
}
