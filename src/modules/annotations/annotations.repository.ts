import type { Insertable, Updateable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import { lockImageClass } from '../../db/write-locks.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { AnnotationsTable } from '../../db/schema.js';
import type { PageQuery } from '../../http/pagination.js';
import type { AnnotationRow } from './annotations.schemas.js';
import type { ImageClass } from './single-label.logic.js';

/** An image about to receive an annotation: who owns its project, its size, and whether the class is in it. */
export interface ImageTarget {
  project_id: number;
  owner_id: number;
  width: number;
  height: number;
  /** The requested class's id when it belongs to the image's project, else null. */
  class_id: number | null;
  /** That class's skeleton and attribute specs (JSON text, null when it declares none). */
  skeleton: string | null;
  attributes: string | null;
  /** Whether the project is single-label (see single-label.logic.ts). */
  project_type: string;
  multi_label: number;
}

/** An annotation about to be replaced: the same facts, reached from the annotation. */
export interface AnnotationTarget extends ImageTarget {
  image_id: number;
}

/** Every column of a new annotation but its id. */
type NewAnnotation = Required<Omit<Insertable<AnnotationsTable>, 'id' | 'attributes' | 'group_id'>> & Pick<Insertable<AnnotationsTable>, 'attributes' | 'group_id'>;

/**
 * Queries of the annotation hot paths (create and delete) are prepared once per database: annotating must sustain
 * thousands of writes a second, and building each query anew costs as much as running it.
 */
export class AnnotationsRepository {
  private readonly imageTarget: PreparedQuery<{ imageId: number; classId: number }, ImageTarget>;
  private readonly insertOne: PreparedQuery<NewAnnotation, { id: number }>;
  private readonly bumpImage: PreparedQuery<{ imageId: number; delta: number }, { annotation_count: number }>;
  private readonly bumpProject: PreparedQuery<{ projectId: number; annotations: number; annotatedImages: number }, unknown>;

  constructor(private readonly db: Db) {
    this.imageTarget = new PreparedQuery(db, ['imageId', 'classId'], (p) =>
      db
        .selectFrom('images')
        .innerJoin('projects', 'projects.id', 'images.project_id')
        .leftJoin('classes', (join) => join.on('classes.id', '=', p.classId).onRef('classes.project_id', '=', 'images.project_id'))
        .select(['images.project_id', 'projects.owner_id', 'images.width', 'images.height', 'classes.id as class_id', 'classes.skeleton', 'classes.attributes', 'projects.project_type', 'projects.multi_label'])
        .where('images.id', '=', p.imageId),
    );
    const columns = ['image_id', 'project_id', 'class_id', 'annotation_type', 'geometry', 'confidence', 'source', 'status', 'created_at', 'updated_at', 'attributes', 'group_id'] as const;
    this.insertOne = new PreparedQuery(db, columns, (p) =>
      db.insertInto('annotations').values(p).returning('id'),
    );
    this.bumpImage = new PreparedQuery(db, ['imageId', 'delta'], (p) =>
      db
        .updateTable('images')
        .set((eb) => ({ annotation_count: eb('annotation_count', '+', p.delta) }))
        .where('id', '=', p.imageId)
        .returning('annotation_count'),
    );
    this.bumpProject = new PreparedQuery(db, ['projectId', 'annotations', 'annotatedImages'], (p) =>
      db
        .updateTable('projects')
        .set((eb) => ({
          annotation_count: eb('annotation_count', '+', p.annotations),
          annotated_image_count: eb('annotated_image_count', '+', p.annotatedImages),
        }))
        .where('id', '=', p.projectId),
    );
  }

  /** One query for everything the create path must know before writing. */
  async findImageTarget(imageId: number, classId: number): Promise<ImageTarget | undefined> {
    return (await this.imageTarget.run({ imageId, classId })).rows[0];
  }

  findAnnotationTarget(id: number, classId: number): Promise<AnnotationTarget | undefined> {
    return this.db
      .selectFrom('annotations')
      .innerJoin('images', 'images.id', 'annotations.image_id')
      .innerJoin('projects', 'projects.id', 'annotations.project_id')
      .leftJoin('classes', (join) => join.on('classes.id', '=', classId).onRef('classes.project_id', '=', 'annotations.project_id'))
      .select(['annotations.image_id', 'annotations.project_id', 'projects.owner_id', 'images.width', 'images.height', 'classes.id as class_id', 'classes.skeleton', 'classes.attributes', 'projects.project_type', 'projects.multi_label'])
      .where('annotations.id', '=', id)
      .executeTakeFirst();
  }

  /** An image with its project's owner and its annotation counter (the total of its annotation list). */
  findImage(imageId: number): Promise<{ project_id: number; owner_id: number; annotation_count: number } | undefined> {
    return this.db
      .selectFrom('images')
      .innerJoin('projects', 'projects.id', 'images.project_id')
      .select(['images.project_id', 'projects.owner_id', 'images.annotation_count'])
      .where('images.id', '=', imageId)
      .executeTakeFirst();
  }

  find(id: number): Promise<(AnnotationRow & { owner_id: number }) | undefined> {
    return this.db
      .selectFrom('annotations')
      .innerJoin('projects', 'projects.id', 'annotations.project_id')
      .selectAll('annotations')
      .select('projects.owner_id')
      .where('annotations.id', '=', id)
      .executeTakeFirst();
  }

  /** The row as the transaction sees it (the state a revision records as `before`). */
  findIn(id: number, db: Executor): Promise<AnnotationRow | undefined> {
    return db.selectFrom('annotations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Puts a deleted annotation back under its old id (reverting a delete). */
  async reinsert(values: Insertable<AnnotationsTable> & { id: number }, db: Executor): Promise<void> {
    await db.insertInto('annotations').values(values).execute();
  }

  listForImage(imageId: number, page: PageQuery): Promise<AnnotationRow[]> {
    let query = this.db.selectFrom('annotations').selectAll().where('image_id', '=', imageId);
    if (page.after !== undefined) query = query.where('id', '>', page.after);
    query = query.orderBy('id').limit(page.limit);
    if (page.offset) query = query.offset(page.offset);
    return query.execute();
  }

  /** The image's suggestions (of one source when given), oldest first, as the transaction sees them. */
  suggestions(imageId: number, source: string | undefined, db: Executor = this.db): Promise<AnnotationRow[]> {
    let query = db.selectFrom('annotations').selectAll().where('image_id', '=', imageId).where('status', '=', 'suggested');
    if (source !== undefined) query = query.where('source', '=', source);
    return query.orderBy('id').execute();
  }

  /** The accepted annotations of these images (what a model re-run must not add again). */
  async accepted(imageIds: readonly number[], db: Executor = this.db): Promise<Pick<AnnotationRow, 'image_id' | 'class_id' | 'annotation_type' | 'geometry'>[]> {
    const rows: Pick<AnnotationRow, 'image_id' | 'class_id' | 'annotation_type' | 'geometry'>[] = [];
    for (let i = 0; i < imageIds.length; i += 1000) {
      rows.push(
        ...(await db
          .selectFrom('annotations')
          .select(['image_id', 'class_id', 'annotation_type', 'geometry'])
          .where('image_id', 'in', imageIds.slice(i, i + 1000))
          .where('status', '=', 'accepted')
          .execute()),
      );
    }
    return rows;
  }

  /**
   * The image's first classification other than `exceptId`, as the transaction sees it, after taking the image's
   * class lock (so a concurrent single-label write waits for this one to commit).
   */
  async otherClass(imageId: number, exceptId: number | null, tx: Executor): Promise<ImageClass | undefined> {
    await lockImageClass(tx, imageId);
    let query = tx
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.id', 'annotations.status', 'classes.name'])
      .where('annotations.image_id', '=', imageId)
      .where('annotations.annotation_type', '=', 'classification');
    if (exceptId !== null) query = query.where('annotations.id', '!=', exceptId);
    return query.orderBy('annotations.id').executeTakeFirst();
  }

  async insert(values: NewAnnotation, db: Executor = this.db): Promise<number> {
    return (await this.insertOne.run(values, db)).rows[0].id;
  }

  update(id: number, values: Updateable<AnnotationsTable>, db: Executor = this.db): Promise<AnnotationRow | undefined> {
    return db.updateTable('annotations').set(values).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Deletes one annotation; returns the deleted row, or undefined when it was already gone. */
  delete(id: number, db: Executor = this.db): Promise<AnnotationRow | undefined> {
    return db.deleteFrom('annotations').where('id', '=', id).returningAll().executeTakeFirst();
  }

  /**
   * Moves the counters for an annotation whose status goes `from` → `to` (null: it does not exist before or after).
   * Only accepted annotations count: a suggestion is not an annotation until someone accepts it.
   */
  async countStatusChange(row: { image_id: number; project_id: number }, from: string | null, to: string | null, tx: Executor): Promise<void> {
    const delta = (to === 'accepted' ? 1 : 0) - (from === 'accepted' ? 1 : 0);
    if (delta !== 0) await this.bumpCounters(row.image_id, row.project_id, delta as 1 | -1, tx);
  }

  /**
   * Moves the image's and the project's counters by `delta` annotations. The image's new count, read from the row
   * it updates (locked until the transaction ends), says whether the image just became annotated or unannotated.
   */
  async bumpCounters(imageId: number, projectId: number, delta: 1 | -1, tx: Executor): Promise<void> {
    const image = (await this.bumpImage.run({ imageId, delta }, tx)).rows[0];
    if (!image) throw new Error(`image ${imageId} vanished inside a transaction`);
    const count = Number(image.annotation_count);
    const annotatedImages = delta === 1 ? (count === 1 ? 1 : 0) : count === 0 ? -1 : 0;
    await this.bumpProject.run({ projectId, annotations: delta, annotatedImages }, tx);
  }
}
