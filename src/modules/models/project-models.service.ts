import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { ModelsRepository } from './models.repository.js';
import { toModelOut, type ProjectModelOut } from './models.schemas.js';
import type { ModelsService } from './models.service.js';
import { classKey } from '../classes/class-key.logic.js';

/**
 * The models a project can use: its own, and on request the production models of the owner's or organization's
 * other projects, so a team labels a new batch with the model it already promoted instead of uploading it again.
 */
export class ProjectModelsService {
  constructor(
    private readonly models: ModelsService,
    private readonly repository: ModelsRepository,
    private readonly access: ProjectAccess,
  ) {}

  async list(caller: Caller, projectId: number, includeShared: boolean): Promise<ProjectModelOut[]> {
    const own: ProjectModelOut[] = await this.models.listForProject(caller, projectId);
    if (!includeShared) return own;
    const project = await this.access.project(caller, projectId, 'project.read');
    const candidates = await this.repository.sharedWith(project);
    // Another project's model is data of that project: only those whose project the caller can read are listed.
    const readable = new Map<number, boolean>();
    const rows = [];
    for (const row of candidates) {
      if (!readable.has(row.project_id)) readable.set(row.project_id, (await this.access.roleOf(caller, { id: row.project_id, owner_id: row.owner_id })) !== null);
      if (readable.get(row.project_id)) rows.push(row);
    }
    const events = await this.repository.events(rows.map((r) => r.id));
    const have = new Set((await this.repository.classNames(projectId)).map(classKey));
    const shared = rows.map((row): ProjectModelOut => {
      const names = JSON.parse(row.class_names) as string[];
      return {
        ...toModelOut(row, events.get(row.id) ?? []),
        shared: { project_id: row.project_id, project_name: row.project_name, matched: names.filter((n) => have.has(classKey(n))), unmatched: names.filter((n) => !have.has(classKey(n))) },
      };
    });
    return [...own, ...shared];
  }
}
