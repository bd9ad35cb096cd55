import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ClassesTable } from '../../db/schema.js';
import type { ClassRow } from './classes.schemas.js';

export type ClassWithOwner = ClassRow & { owner_id: number };

export class ClassesRepository {
  constructor(private readonly db: Executor) {}

  /** A project's classes in creation order (the order exports number them in), each with its count of accepted annotations. */
  list(projectId: number): Promise<(ClassRow & { annotation_count: number })[]> {
    return this.db
      .selectFrom('classes')
      .selectAll('classes')
      .select((eb) =>
        eb
          .selectFrom('annotations')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('annotations.class_id', '=', 'classes.id')
          // Suggestions count once accepted, as the image and project counters do.
          .where('annotations.status', '=', 'accepted')
          .as('annotation_count'),
      )
      .where('project_id', '=', projectId)
      .orderBy('id')
      .execute() as Promise<(ClassRow & { annotation_count: number })[]>;
  }

  /** A class with the owner of its project, so that access is decided from one query. */
  findWithOwner(id: number, db: Executor = this.db): Promise<ClassWithOwner | undefined> {
    return db
      .selectFrom('classes')
      .innerJoin('projects', 'projects.id', 'classes.project_id')
      .selectAll('classes')
      .select('projects.owner_id')
      .where('classes.id', '=', id)
      .executeTakeFirst();
  }

  insert(values: Insertable<ClassesTable>, db: Executor = this.db): Promise<ClassRow> {
    return db.insertInto('classes').values(values).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, values: Updateable<ClassesTable>, db: Executor = this.db): Promise<ClassRow> {
    return db.updateTable('classes').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /** The class's annotations, or those of one type. */
  async countAnnotations(id: number, type?: string, db: Executor = this.db): Promise<number> {
    let query = db.selectFrom('annotations').select((eb) => eb.fn.countAll<number>().as('n')).where('class_id', '=', id);
    if (type !== undefined) query = query.where('annotation_type', '=', type);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  async findSkeleton(id: number): Promise<string | null | undefined> {
    return (await this.db.selectFrom('classes').select('skeleton').where('id', '=', id).executeTakeFirst())?.skeleton;
  }

  /**
   * Deletes the annotations of a class and takes the accepted ones (those the counters count) off their images'
   * counters. Returns how many annotations went, how many of them were counted, and how many images were left with
   * none counted, for the project's counters. Run it inside a transaction.
   */
  async deleteAnnotations(id: number, tx: Executor): Promise<{ annotations: number; counted: number; emptiedImages: number }> {
    const imagesOfClass = tx.selectFrom('annotations').select('image_id').where('class_id', '=', id).where('status', '=', 'accepted');
    await tx
      .updateTable('images')
      .set((eb) => ({
        annotation_count: eb(
          'annotation_count',
          '-',
          eb
            .selectFrom('annotations')
            .select(eb.fn.countAll<number>().as('n'))
            .whereRef('annotations.image_id', '=', 'images.id')
            .where('annotations.class_id', '=', id)
            .where('annotations.status', '=', 'accepted'),
        ),
      }))
      .where('id', 'in', imagesOfClass)
      .execute();
    const emptied = await tx
      .selectFrom('images')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('annotation_count', '=', 0)
      .where('id', 'in', imagesOfClass)
      .executeTakeFirstOrThrow();
    const counted = await tx.selectFrom('annotations').select((eb) => eb.fn.countAll<number>().as('n')).where('class_id', '=', id).where('status', '=', 'accepted').executeTakeFirstOrThrow();
    const deleted = await tx.deleteFrom('annotations').where('class_id', '=', id).executeTakeFirst();
    return { annotations: Number(deleted.numDeletedRows), counted: Number(counted.n), emptiedImages: Number(emptied.n) };
  }

  /** False when the class was already gone. */
  async delete(id: number, db: Executor = this.db): Promise<boolean> {
    const result = await db.deleteFrom('classes').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
