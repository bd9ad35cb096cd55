import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { Transactions } from '../../db/transactions.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { ClassSpecError, parseAttributeSpecs, parseSkeleton, skeletonSize } from '../../imaging/class-specs.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import type { ClassesRepository, ClassWithOwner } from './classes.repository.js';
import { toClassOut, type ClassCreate, type ClassOut, type ClassUpdate } from './classes.schemas.js';

/**
 * Colours for classes created without one, taken in turn by class index: 48 distinct colours (16 hues in three
 * lightness bands, neighbours far apart), so projects with up to 48 classes never repeat one (chess had two oranges).
 * web/src/editor/palette.ts holds the same list.
 */
export const CLASS_PALETTE = [
  '#ec1313', '#932110', '#ec9679', '#13ec9b', '#109372', '#79ecde', '#ec13b6', '#931062',
  '#ec79b3', '#2eec13', '#109310', '#79ec87', '#7f13ec', '#621093', '#cf79ec', '#d1ec13',
  '#729310', '#c1ec79', '#1349ec', '#102193', '#7979ec', '#ec6413', '#935210', '#ecc179',
  '#13ecec', '#108393', '#79cfec', '#ec1364', '#931031', '#ec7987', '#13ec49', '#109341',
  '#79ecb3', '#d113ec', '#931093', '#ec79de', '#80ec13', '#419310', '#96ec79', '#2e13ec',
  '#311093', '#a479ec', '#ecb613', '#938310', '#ecec79', '#139bec', '#105293', '#79a4ec',
] as const;

export const paletteColor = (index: number): string => CLASS_PALETTE[index % CLASS_PALETTE.length];

export class ClassesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly classes: ClassesRepository,
    private readonly projects: ProjectsRepository,
    private readonly access: ProjectAccess,
    /** A cascading delete removes annotations: it respects other users' locks and records each as a revision. */
    private readonly teams: { locks: LockGuard; revisions: RevisionsRepository },
  ) {}

  async list(caller: Caller, projectId: number): Promise<ClassOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    const rows = await this.classes.list(projectId);
    return rows.map((row) => toClassOut(row, Number(row.annotation_count)));
  }

  async create(caller: Caller, projectId: number, input: ClassCreate): Promise<ClassOut> {
    const project = await this.access.project(caller, projectId, 'classes.write');
    const name = input.name.trim();
    const color = input.color?.toLowerCase() ?? paletteColor(project.class_count);
    try {
      const row = await this.transactions.run(async (tx) => {
        const inserted = await this.classes.insert({ project_id: projectId, name, color, created_at: new Date().toISOString(), ...classSpecs(input) }, tx);
        await this.projects.bumpCounters(projectId, { class_count: 1 }, tx);
        return inserted;
      });
      return toClassOut(row, 0);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(name, projectId);
      throw err;
    }
  }

  async update(caller: Caller, classId: number, input: ClassUpdate): Promise<ClassOut> {
    const found = await this.writable(caller, classId);
    // Unknown members are stripped by validation, so `{"colour": …}` arrives here empty.
    if (Object.values(input).every((v) => v === undefined)) throw ValidationError.at(['body'], 'Send name, color, skeleton, attributes and/or modalities');
    const name = input.name?.trim();
    const specs = classSpecs(input);
    if (specs.skeleton !== undefined) await this.assertSkeletonFits(classId, specs.skeleton);
    try {
      const row = await this.classes.update(classId, {
        ...(name !== undefined ? { name } : {}),
        ...(input.color !== undefined ? { color: input.color.toLowerCase() } : {}),
        ...specs,
      });
      return toClassOut(row, await this.classes.countAnnotations(classId));
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(name!, found.project_id);
      throw err;
    }
  }

  /** A class's keypoint annotations keep their points: a new skeleton must have as many (409 otherwise). */
  private async assertSkeletonFits(classId: number, skeleton: string | null): Promise<void> {
    const used = await this.classes.countAnnotations(classId, 'keypoints');
    if (used === 0) return;
    const points = skeletonSize(skeleton) ?? 0;
    const current = (await this.classes.findSkeleton(classId)) ?? null;
    const before = skeletonSize(current);
    if (points !== before) {
      throw new ConflictError(`${used} keypoint annotations of the class hold ${before ?? 'their'} points each; a skeleton with ${points} points would not fit them (edit or delete them first)`);
    }
  }

  /**
   * Deletes a class. One in use is refused with 409 and its annotation count, unless `cascade`, which deletes those
   * annotations too and keeps the image and project counters right, records a `delete` revision for each (the image's
   * history shows what went, when and by whom), and is refused with 409 naming the
   * images and holders when another user has locked an image with such an annotation. Returns the number of
   * annotations deleted when cascading, null otherwise.
   */
  async delete(caller: Caller, classId: number, cascade: boolean): Promise<{ deleted_annotations: number } | null> {
    const found = await this.writable(caller, classId);
    const used = await this.classes.countAnnotations(classId);
    if (used > 0 && !cascade) {
      throw new ConflictError(
        `Class '${found.name}' is used by ${used} annotation${used === 1 ? '' : 's'}; delete them first, or repeat with ?cascade=true to delete them with the class`,
        { annotation_count: used },
      );
    }
    try {
      const deletedAnnotations = await this.transactions.run(async (tx) => {
        if (cascade) {
          await this.teams.locks.assertNoneLocked(caller, { classId }, tx);
          await this.teams.revisions.insertDeletesOfClass(classId, caller.userId, new Date().toISOString(), tx);
        }
        const removed = cascade ? await this.classes.deleteAnnotations(classId, tx) : { annotations: 0, counted: 0, emptiedImages: 0 };
        if (!(await this.classes.delete(classId, tx))) throw NotFoundError.of('Class', classId);
        await this.projects.bumpCounters(
          found.project_id,
          { class_count: -1, annotation_count: -removed.counted, annotated_image_count: -removed.emptiedImages },
          tx,
        );
        return removed.annotations;
      });
      return cascade ? { deleted_annotations: deletedAnnotations } : null;
    } catch (err) {
      // An annotation created with this class between the count and the delete keeps the class alive.
      if (isForeignKeyViolation(err)) throw new ConflictError(`Class '${found.name}' gained annotations while being deleted; try again`);
      throw err;
    }
  }

  private async writable(caller: Caller, classId: number): Promise<ClassWithOwner> {
    const found = await this.classes.findWithOwner(classId);
    await this.access.check(caller, found && { id: found.project_id, owner_id: found.owner_id }, 'classes.write', `Class ${classId} not found`);
    return found!;
  }
}

function duplicateName(name: string, projectId: number): ConflictError {
  return new ConflictError(`A class named '${name}' already exists in project ${projectId}`);
}

/** The skeleton and attribute specs a request sets, as the JSON text the row stores (absent when not sent). */
function classSpecs(input: ClassCreate | ClassUpdate): { skeleton?: string | null; attributes?: string | null; modalities?: string | null } {
  const parsed = <T>(field: string, parse: () => T): T => {
    try {
      return parse();
    } catch (err) {
      if (err instanceof ClassSpecError) throw ValidationError.at(['body', field, ...err.path], err.message);
      throw err;
    }
  };
  const { skeleton, attributes, modalities } = input;
  return {
    ...(modalities !== undefined ? { modalities: modalities === null ? null : JSON.stringify(modalities) } : {}),
    ...(skeleton !== undefined ? { skeleton: skeleton === null ? null : JSON.stringify(parsed('skeleton', () => parseSkeleton(skeleton))) } : {}),
    ...(attributes !== undefined ? { attributes: attributes.length === 0 ? null : JSON.stringify(parsed('attributes', () => parseAttributeSpecs(attributes))) } : {}),
  };
}
