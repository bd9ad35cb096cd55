import type { Insertable } from 'kysely';
import type { Caller } from '../../access/caller.js';
import type { RevisionsTable } from '../../db/schema.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import type { WriteBatcher } from '../../db/write-batcher.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { Page, PageQuery } from '../../http/pagination.js';
import { ClassSpecError, parseAttributes, skeletonSize, type AttributeValue } from '../../imaging/class-specs.js';
import { GeometryError, parseGeometry, type KeypointsGeometry } from '../../imaging/geometry.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { AnnotationsRepository, ImageTarget } from './annotations.repository.js';
import { stateText, toAnnotationOut, type AnnotationCreate, type AnnotationOut, type AnnotationRow, type PredictionsDecisionOut } from './annotations.schemas.js';
import type { Executor, Tx } from '../../db/database.js';
import { isSingleLabel, secondClassConflict } from './single-label.logic.js';

/**
 * Where annotation writes append their revisions, in the write's own transaction. Owned here so that annotations
 * never import the revisions module (which reads annotations to revert them); the revisions repository implements it.
 */
export interface RevisionWriter {
  insert(values: Required<Omit<Insertable<RevisionsTable>, 'id'>>, db: Executor): Promise<void>;
}

export class AnnotationsService {
  constructor(
    /** Creates and deletes go through group commit; see WriteBatcher. */
    private readonly writes: WriteBatcher,
    private readonly annotations: AnnotationsRepository,
    private readonly access: ProjectAccess,
    /** Another user's live lock on the image refuses the write (checked inside the write's transaction). */
    private readonly locks: LockGuard,
    /** Every change writes a revision in the same unit of work. */
    private readonly revisions: RevisionWriter,
    /** Annotators of assigned-only projects read and write only their images. */
    private readonly scope: AssignmentScope,
  ) {}

  async listForImage(caller: Caller, imageId: number, page: PageQuery): Promise<Page<AnnotationOut>> {
    const image = await this.annotations.findImage(imageId);
    const project = image && { id: image.project_id, owner_id: image.owner_id };
    const role = await this.access.check(caller, project, 'project.read', `Image ${imageId} not found`);
    await this.scope.assertImage(caller, project!, role, imageId, `Image ${imageId} not found`);
    // Hidden ground truth (issue 29) shows no labels, like an untouched image.
    if (await this.scope.hides(caller, project!, role, imageId)) return { items: [], total: 0 };
    const rows = await this.annotations.listForImage(imageId, page);
    return { items: rows.map(toAnnotationOut), total: image!.annotation_count };
  }

  async get(caller: Caller, id: number): Promise<AnnotationOut> {
    const row = await this.annotations.find(id);
    const project = row && { id: row.project_id, owner_id: row.owner_id };
    const role = await this.access.check(caller, project, 'project.read', `Annotation ${id} not found`);
    await this.scope.assertImage(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    await this.scope.assertLabelsVisible(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    return toAnnotationOut(row!);
  }

  /**
   * The hot path of annotating: one query for the image, its project's owner and the class, then one unit of work
   * that inserts the annotation and moves the image and project counters with it, committed together.
   */
  async create(caller: Caller, imageId: number, input: AnnotationCreate, via: 'direct' | 'consensus' = 'direct'): Promise<AnnotationOut> {
    const target = await this.annotations.findImageTarget(imageId, input.class_id);
    const image = await this.writable(caller, target, imageId, `Image ${imageId} not found`, input, via === 'direct' ? 'new' : 'decided');
    const geometry = validGeometry(input, image);
    const attributes = validAttributes(input, image);
    const now = new Date().toISOString();
    const out: AnnotationOut = {
      id: 0,
      image_id: imageId,
      class_id: input.class_id,
      annotation_type: input.annotation_type,
      geometry,
      confidence: input.confidence ?? null,
      source: input.source ?? 'manual',
      status: input.status ?? 'accepted',
      attributes: attributes ?? {},
      group_id: input.group_id ?? null,
      created_at: now,
      updated_at: now,
    };
    try {
      const row = {
        image_id: imageId,
        project_id: image.project_id,
        class_id: out.class_id,
        annotation_type: out.annotation_type,
        geometry: JSON.stringify(geometry),
        confidence: out.confidence,
        source: out.source,
        status: out.status,
        created_at: now,
        updated_at: now,
        attributes: attributes && JSON.stringify(attributes),
        group_id: out.group_id,
      };
      const after = stateText(row);
      out.id = await this.writes.run(async (tx) => {
        await this.locks.assertWritable(caller, imageId, tx);
        if (row.annotation_type === 'classification') await this.assertOneClass(image, imageId, null, tx);
        const id = await this.annotations.insert(row, tx);
        await this.annotations.countStatusChange(row, null, row.status, tx);
        await this.revisions.insert(
          { annotation_id: id, image_id: imageId, project_id: image.project_id, action: 'create', before: null, after, user_id: caller.userId, created_at: now },
          tx,
        );
        return id;
      });
    } catch (err) {
      throw deletedMeanwhile(err);
    }
    return out;
  }

  /**
   * Replaces an annotation's class, type, geometry, confidence and source; it stays on its image. A person editing a
   * suggestion takes it over: it becomes accepted unless the body says `status: "suggested"`.
   */
  async replace(caller: Caller, id: number, input: AnnotationCreate): Promise<AnnotationOut> {
    const target = await this.annotations.findAnnotationTarget(id, input.class_id);
    const image = await this.writable(caller, target, target?.image_id, `Annotation ${id} not found`, input, 'existing');
    const changes = {
      class_id: input.class_id,
      annotation_type: input.annotation_type,
      geometry: JSON.stringify(validGeometry(input, image)),
      confidence: input.confidence ?? null,
      source: input.source ?? 'manual',
      status: input.status ?? 'accepted',
      attributes: (() => {
        const attributes = validAttributes(input, image);
        return attributes && JSON.stringify(attributes);
      })(),
      group_id: input.group_id ?? null,
      updated_at: new Date().toISOString(),
    };
    let row;
    try {
      row = await this.writes.run(async (tx) => {
        const before = await this.annotations.findIn(id, tx);
        if (!before) throw NotFoundError.of('Annotation', id);
        await this.locks.assertWritable(caller, before.image_id, tx);
        if (changes.annotation_type === 'classification' && before.annotation_type !== 'classification') await this.assertOneClass(image, before.image_id, id, tx);
        const updated = (await this.annotations.update(id, changes, tx))!;
        await this.annotations.countStatusChange(updated, before.status, updated.status, tx);
        await this.revisions.insert(
          {
            annotation_id: id,
            image_id: before.image_id,
            project_id: before.project_id,
            action: 'update',
            before: stateText(before),
            after: stateText(updated),
            user_id: caller.userId,
            created_at: changes.updated_at,
          },
          tx,
        );
        return updated;
      });
    } catch (err) {
      throw deletedMeanwhile(err);
    }
    return toAnnotationOut(row);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    const row = await this.annotations.find(id);
    const project = row && { id: row.project_id, owner_id: row.owner_id };
    const role = await this.access.check(caller, project, 'annotations.write', `Annotation ${id} not found`);
    await this.scope.assertImage(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    await this.scope.assertLabelsVisible(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    await this.writes.run(async (tx) => {
      await this.locks.assertWritable(caller, row!.image_id, tx);
      const deleted = await this.annotations.delete(id, tx);
      // Deleted by a concurrent request: that request moved the counters and wrote the revision.
      if (!deleted) throw NotFoundError.of('Annotation', id);
      await this.annotations.countStatusChange(deleted, deleted.status, null, tx);
      await this.revisions.insert(
        {
          annotation_id: id,
          image_id: deleted.image_id,
          project_id: deleted.project_id,
          action: 'delete',
          before: stateText(deleted),
          after: null,
          user_id: caller.userId,
          created_at: new Date().toISOString(),
        },
        tx,
      );
    });
  }

  /** Accepts one suggestion: it becomes a person's annotation (an `update` revision records the change of status). */
  async accept(caller: Caller, id: number): Promise<AnnotationOut> {
    const row = await this.decidable(caller, id);
    const accepted = await this.writes.run(async (tx) => {
      await this.locks.assertWritable(caller, row.image_id, tx);
      const [updated] = await this.setAccepted([await this.stillSuggested(id, tx)], caller, tx);
      return updated;
    });
    return toAnnotationOut(accepted);
  }

  /** Rejects one suggestion: it is deleted (a `delete` revision keeps it, so it can be reverted). */
  async reject(caller: Caller, id: number): Promise<void> {
    const row = await this.decidable(caller, id);
    await this.writes.run(async (tx) => {
      await this.locks.assertWritable(caller, row.image_id, tx);
      await this.deleteRows([await this.stillSuggested(id, tx)], caller, tx);
    });
  }

  /** Accepts (or rejects) every suggestion on an image, or those of one source, in one transaction. */
  async decideAll(caller: Caller, imageId: number, decision: 'accept' | 'reject', source: string | undefined): Promise<PredictionsDecisionOut> {
    const image = await this.annotations.findImage(imageId);
    const project = image && { id: image.project_id, owner_id: image.owner_id };
    const role = await this.access.check(caller, project, 'annotations.write', `Image ${imageId} not found`);
    await this.scope.assertImage(caller, project!, role, imageId, `Image ${imageId} not found`);
    return this.writes.run(async (tx) => {
      await this.locks.assertWritable(caller, imageId, tx);
      const rows = await this.annotations.suggestions(imageId, source, tx);
      if (decision === 'reject') {
        await this.deleteRows(rows, caller, tx);
        return { image_id: imageId, count: rows.length, annotations: [] };
      }
      const accepted = await this.setAccepted(rows, caller, tx);
      return { image_id: imageId, count: accepted.length, annotations: accepted.map(toAnnotationOut) };
    });
  }

  /** The annotation's row when the caller may decide on it; 409 when it is not a suggestion. */
  private async decidable(caller: Caller, id: number): Promise<AnnotationRow> {
    const row = await this.annotations.find(id);
    const project = row && { id: row.project_id, owner_id: row.owner_id };
    const role = await this.access.check(caller, project, 'annotations.write', `Annotation ${id} not found`);
    await this.scope.assertImage(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    await this.scope.assertLabelsVisible(caller, project!, role, row!.image_id, `Annotation ${id} not found`);
    if (row!.status !== 'suggested') throw new ConflictError(`Annotation ${id} is not a suggestion (it is already accepted)`);
    return row!;
  }

  private async stillSuggested(id: number, tx: Executor): Promise<AnnotationRow> {
    const row = await this.annotations.findIn(id, tx);
    if (!row) throw NotFoundError.of('Annotation', id);
    if (row.status !== 'suggested') throw new ConflictError(`Annotation ${id} is not a suggestion (it is already accepted)`);
    return row;
  }

  private async setAccepted(rows: AnnotationRow[], caller: Caller, tx: Executor): Promise<AnnotationRow[]> {
    const now = new Date().toISOString();
    const out: AnnotationRow[] = [];
    for (const before of rows) {
      const updated = (await this.annotations.update(before.id, { status: 'accepted', updated_at: now }, tx))!;
      await this.annotations.countStatusChange(updated, before.status, updated.status, tx);
      await this.revisions.insert(
        { annotation_id: before.id, image_id: before.image_id, project_id: before.project_id, action: 'update', before: stateText(before), after: stateText(updated), user_id: caller.userId, created_at: now },
        tx,
      );
      out.push(updated);
    }
    return out;
  }

  private async deleteRows(rows: AnnotationRow[], caller: Caller, tx: Executor): Promise<void> {
    const now = new Date().toISOString();
    for (const row of rows) {
      await this.annotations.delete(row.id, tx);
      await this.annotations.countStatusChange(row, row.status, null, tx);
      await this.revisions.insert(
        { annotation_id: row.id, image_id: row.image_id, project_id: row.project_id, action: 'delete', before: stateText(row), after: null, user_id: caller.userId, created_at: now },
        tx,
      );
    }
  }

  /**
   * 409 when the write would give an image of a single-label project a second class (issue 30): a class is changed
   * with PUT, as the editor's class key does, never added beside another.
   */
  private async assertOneClass(target: ImageTarget, imageId: number, exceptId: number | null, tx: Tx): Promise<void> {
    if (!isSingleLabel(target)) return;
    const other = await this.annotations.otherClass(imageId, exceptId, tx);
    if (other) throw secondClassConflict(target.project_id, imageId, other);
  }

  /**
   * 404 when the image (or annotation) is hidden or missing, 403 without the right, 422 for a foreign class. `what`:
   * a new annotation drawn straight on the image, one a consensus decision writes, or an existing one.
   */
  private async writable(caller: Caller, target: ImageTarget | undefined, imageId: number | undefined, notFound: string, input: AnnotationCreate, what: 'new' | 'decided' | 'existing'): Promise<ImageTarget> {
    const project = target && { id: target.project_id, owner_id: target.owner_id };
    const role = await this.access.check(caller, project, 'annotations.write', notFound);
    await this.scope.assertImage(caller, project!, role, imageId!, notFound);
    // An existing annotation of hidden ground truth is a reviewed label: not there for the caller (issue 29).
    if (what === 'existing') await this.scope.assertLabelsVisible(caller, project!, role, imageId!, notFound);
    // Below project admin, a project with hidden ground truth is labelled through quality-control tasks only.
    if (what === 'new') await this.access.assertLabelsThroughTasks(caller, project!, role, 'images');
    if (target!.class_id === null) {
      throw ValidationError.at(['body', 'class_id'], `Class ${input.class_id} is not a class of project ${target!.project_id}`);
    }
    return target!;
  }
}

/** The geometry to store; keypoints must hold one point per point of their class's skeleton. */
function validGeometry(input: AnnotationCreate, target: ImageTarget): object {
  let geometry: object;
  try {
    geometry = parseGeometry(input.annotation_type, input.geometry as Record<string, unknown>, target);
  } catch (err) {
    if (err instanceof GeometryError) throw ValidationError.at(['body', 'geometry', ...err.path], err.message);
    throw err;
  }
  if (input.annotation_type === 'keypoints' && target.skeleton !== null) {
    const expected = skeletonSize(target.skeleton);
    const got = (geometry as KeypointsGeometry).points.length;
    if (got !== expected) throw ValidationError.at(['body', 'geometry', 'points'], `the class's skeleton has ${expected} points; ${got} were sent`);
  }
  return geometry;
}

/** The attribute values to store (null when none), each checked against the class's specs. */
function validAttributes(input: AnnotationCreate, target: ImageTarget): Record<string, AttributeValue> | null {
  if (input.attributes === undefined || Object.keys(input.attributes).length === 0) return null;
  try {
    return parseAttributes(input.attributes, target.attributes === null ? [] : JSON.parse(target.attributes));
  } catch (err) {
    if (err instanceof ClassSpecError) throw ValidationError.at(['body', 'attributes', ...err.path], err.message);
    throw err;
  }
}

/** The image or class went away between the checks and the write (PostgreSQL reports it as a foreign key). */
function deletedMeanwhile(err: unknown): unknown {
  return isForeignKeyViolation(err) ? new ConflictError('The image or class was deleted while the annotation was being saved') : err;
}
