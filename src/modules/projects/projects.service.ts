import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { ProjectsRepository } from './projects.repository.js';
import { toProjectOut, type ProjectCreate, type ProjectOut, type ProjectUpdate } from './projects.schemas.js';

/** Blob keys of everything a project owns start with this prefix, so deleting a project removes its files. */
export const projectBlobPrefix = (projectId: number) => `projects/${projectId}`;

export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
  ) {}

  async list(caller: Caller, search?: string): Promise<ProjectOut[]> {
    return (await this.projects.list(this.access.listingOwner(caller), search)).map(toProjectOut);
  }

  async create(caller: Caller, input: ProjectCreate): Promise<ProjectOut> {
    const now = new Date().toISOString();
    const row = await this.projects.insert({
      owner_id: caller.userId,
      name: input.name.trim(),
      description: input.description ?? '',
      project_type: input.project_type ?? 'object_detection',
      location: input.location ?? '',
      created_at: now,
      updated_at: now,
    });
    return toProjectOut(row);
  }

  async get(caller: Caller, id: number): Promise<ProjectOut> {
    return toProjectOut(await this.access.project(caller, id, 'project.read'));
  }

  async update(caller: Caller, id: number, input: ProjectUpdate): Promise<ProjectOut> {
    await this.access.project(caller, id, 'project.update');
    const row = await this.projects.update(id, {
      ...input,
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      updated_at: new Date().toISOString(),
    });
    return toProjectOut(row);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.access.project(caller, id, 'project.delete');
    await this.projects.delete(id);
    await this.blobs.deletePrefix(projectBlobPrefix(id));
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

  stats(caller: Caller) {
    return this.projects.totals(this.access.listingOwner(caller));
  }
}
