import type { Db, Executor } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { AnnotationsRepository } from '../annotations/annotations.repository.js';
import type { AnnotationRow } from '../annotations/annotations.schemas.js';
import type { LabelMode } from '../annotations/single-label.logic.js';
import type { ClassesRepository } from '../classes/classes.repository.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';

/** An image a model will run on: where its bytes are and its (oriented) size. */
export interface ImageToAnnotate {
  id: number;
  project_id: number;
  blob_key: string;
  sha256: string;
  width: number;
  height: number;
  annotation_count: number;
}

export interface NewAnnotation {
  image_id: number;
  project_id: number;
  class_id: number;
  annotation_type: string;
  geometry: object;
  confidence: number | null;
  source: string;
  status: 'accepted' | 'suggested';
}

/** What a re-run compares its detections with, and what it replaces. */
export type ExistingAnnotation = Pick<AnnotationRow, 'image_id' | 'class_id' | 'annotation_type' | 'geometry'>;

/** The ids of the project's images assigned to a user. */
const assignedImages = (db: Db, projectId: number, userId: number) =>
  db.selectFrom('assignments').select('assignments.image_id').where('assignments.project_id', '=', projectId).where('assignments.user_id', '=', userId);

const IMAGE_COLUMNS = ['id', 'project_id', 'blob_key', 'sha256', 'width', 'height', 'annotation_count'] as const;
const ID_CHUNK = 1000;

/**
 * Reads images and classes and writes model output. Annotations and classes go through their own modules'
 * repositories, so the image and project counters move exactly as when a person annotates.
 */
export class AutoAnnotateRepository {
  constructor(
    private readonly db: Db,
    private readonly annotations: AnnotationsRepository,
    private readonly classRows: ClassesRepository,
    private readonly projects: ProjectsRepository,
  ) {}

  /**
   * The project's images in id order: the listed ones (those not in the project are left out) or all of them; only
   * those assigned to `assignedTo` when given (annotators of assigned-only projects).
   */
  async images(projectId: number, imageIds: number[] | undefined, onlyUnannotated: boolean, assignedTo?: number): Promise<ImageToAnnotate[]> {
    const query = () => {
      let q = this.db.selectFrom('images').select(IMAGE_COLUMNS).where('project_id', '=', projectId);
      if (onlyUnannotated) q = q.where('annotation_count', '=', 0);
      if (assignedTo !== undefined) q = q.where('id', 'in', assignedImages(this.db, projectId, assignedTo));
      return q.orderBy('id');
    };
    if (!imageIds) return query().execute();
    const found: ImageToAnnotate[] = [];
    const unique = [...new Set(imageIds)];
    for (let i = 0; i < unique.length; i += ID_CHUNK) {
      found.push(...(await query().where('id', 'in', unique.slice(i, i + ID_CHUNK)).execute()));
    }
    return found.sort((a, b) => a.id - b.id);
  }

  /** Ids of the listed images that are in the project (and assigned to `assignedTo` when given), whatever their annotations. */
  async imageIdsInProject(projectId: number, imageIds: number[], assignedTo?: number): Promise<Set<number>> {
    const found = new Set<number>();
    const unique = [...new Set(imageIds)];
    for (let i = 0; i < unique.length; i += ID_CHUNK) {
      let query = this.db.selectFrom('images').select('id').where('project_id', '=', projectId).where('id', 'in', unique.slice(i, i + ID_CHUNK));
      if (assignedTo !== undefined) query = query.where('id', 'in', assignedImages(this.db, projectId, assignedTo));
      const rows = await query.execute();
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  image(imageId: number): Promise<ImageToAnnotate | undefined> {
    return this.db.selectFrom('images').select(IMAGE_COLUMNS).where('id', '=', imageId).executeTakeFirst();
  }

  async classes(projectId: number, db: Executor = this.db): Promise<{ id: number; name: string; skeleton: string | null }[]> {
    return db.selectFrom('classes').select(['id', 'name', 'skeleton']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /**
   * Creates a class with the project's counter, or returns the one a concurrent request created under that name.
   */
  async ensureClass(projectId: number, name: string, color: string, skeleton: string | null = null): Promise<{ id: number; created: boolean }> {
    try {
      const row = await this.db.transaction().execute(async (tx) => {
        const inserted = await this.classRows.insert({ project_id: projectId, name, color, skeleton, created_at: new Date().toISOString() }, tx);
        await this.projects.bumpCounters(projectId, { class_count: 1 }, tx);
        return inserted;
      });
      return { id: row.id, created: true };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await this.db.selectFrom('classes').select('id').where('project_id', '=', projectId).where('name', '=', name).executeTakeFirstOrThrow();
      return { id: existing.id, created: false };
    }
  }

  /** Creates a class and counts it, inside the caller's transaction. */
  async insertClass(projectId: number, name: string, color: string, tx: Executor, skeleton: string | null = null): Promise<number> {
    const row = await this.classRows.insert({ project_id: projectId, name, color, skeleton, created_at: new Date().toISOString() }, tx);
    await this.projects.bumpCounters(projectId, { class_count: 1 }, tx);
    return row.id;
  }

  /** Inserts annotations and moves every counter (accepted ones count), in the caller's transaction; returns the new ids in order. */
  async insertAnnotations(rows: NewAnnotation[], now: string, tx: Executor): Promise<number[]> {
    const ids: number[] = [];
    for (const row of rows) {
      ids.push(await this.annotations.insert({ ...row, geometry: JSON.stringify(row.geometry), created_at: now, updated_at: now }, tx));
      await this.annotations.countStatusChange(row, null, row.status, tx);
    }
    return ids;
  }

  /** The accepted annotations of these images: a re-run skips detections that match one of them. */
  accepted(imageIds: readonly number[], tx: Executor): Promise<ExistingAnnotation[]> {
    return this.annotations.accepted(imageIds, tx);
  }

  /**
   * Deletes the image's open suggestions from `source` (a re-run of the same model replaces them) and moves the
   * counters; returns the deleted rows for their revisions.
   */
  async deleteSuggestions(imageId: number, source: string, tx: Executor): Promise<AnnotationRow[]> {
    const rows = await this.annotations.suggestions(imageId, source, tx);
    for (const row of rows) {
      await this.annotations.delete(row.id, tx);
      await this.annotations.countStatusChange(row, row.status, null, tx);
    }
    return rows;
  }

  /** Whether the image already has a classification, after taking its class lock (see AnnotationsRepository). */
  async hasClass(imageId: number, tx: Executor): Promise<boolean> {
    return (await this.annotations.otherClass(imageId, null, tx)) !== undefined;
  }

  /** Whether the project is single-label (see single-label.logic.ts). */
  labelMode(projectId: number): Promise<LabelMode | undefined> {
    return this.db.selectFrom('projects').select(['project_type', 'multi_label']).where('id', '=', projectId).executeTakeFirst();
  }

  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
