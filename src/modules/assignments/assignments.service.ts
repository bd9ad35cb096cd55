import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import type { AnyItemWorkflow } from '../workflow/item-workflow.service.js';
import type { AssignmentsRepository } from './assignments.repository.js';
import { toAssignmentOut, type AssignmentCreate, type AssignmentOut, type ProgressOut, type QueueItemOut } from './assignments.schemas.js';

export class AssignmentsService {
  constructor(
    private readonly assignments: AssignmentsRepository,
    private readonly access: ProjectAccess,
    /** Who may be assigned work: the rule samples share. */
    private readonly workflow: AnyItemWorkflow,
  ) {}

  /** Gives images to a member who can annotate; 422 for a non-member or an image outside the project. */
  async assign(caller: Caller, projectId: number, input: AssignmentCreate): Promise<AssignmentOut[]> {
    const project = await this.access.project(caller, projectId, 'assignments.write');
    if ((input.image_ids === undefined) === (input.count === undefined)) throw ValidationError.at(['body'], 'Send exactly one of image_ids and count');
    await this.workflow.assertAssignable(project, input.user_id);
    let imageIds: number[];
    if (input.image_ids) {
      imageIds = [...new Set(input.image_ids)];
      const found = await this.assignments.imagesInProject(projectId, imageIds);
      const missing = input.image_ids.findIndex((id) => !found.has(id));
      if (missing >= 0) throw ValidationError.at(['body', 'image_ids', missing], `Image ${input.image_ids[missing]} is not an image of project ${projectId}`);
    } else {
      imageIds = await this.assignments.unlabelledQueue(projectId, input.count!);
    }
    if (imageIds.length === 0) return [];
    const rows = await this.assignments.assign(projectId, input.user_id, imageIds, caller.userId, new Date().toISOString());
    return rows.map(toAssignmentOut);
  }

  /** An annotator kept to their assignments sees only their own, as the image list shows them only their images. */
  async list(caller: Caller, projectId: number, userId?: number): Promise<AssignmentOut[]> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const restrictedTo = await this.access.assignedOnlyUser(caller, project, (await this.access.roleOf(caller, project))!);
    if (restrictedTo !== null && userId !== undefined && userId !== restrictedTo) return [];
    return (await this.assignments.list(projectId, restrictedTo ?? userId)).map(toAssignmentOut);
  }

  async progress(caller: Caller, projectId: number): Promise<ProgressOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    return this.assignments.progress(projectId);
  }

  async remove(caller: Caller, assignmentId: number): Promise<void> {
    const row = await this.assignments.find(assignmentId);
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, 'assignments.write', `Assignment ${assignmentId} not found`);
    await this.assignments.delete(assignmentId);
  }

  /** The caller's queue across projects: assigned images still to do, and submitted images sent back. */
  async mine(caller: Caller): Promise<QueueItemOut[]> {
    const items = await this.assignments.queue(caller.userId);
    // Membership can end while rows remain (an org role lost); show only projects still visible.
    const visible = new Map<number, boolean>();
    const out: QueueItemOut[] = [];
    for (const item of items) {
      if (!visible.has(item.project_id)) {
        visible.set(item.project_id, await this.access.project(caller, item.project_id, 'project.read').then(() => true, (err: unknown) => {
          if (err instanceof NotFoundError) return false;
          throw err;
        }));
      }
      if (visible.get(item.project_id)) out.push(item);
    }
    return out;
  }
}
