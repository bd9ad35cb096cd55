import type { Db, Executor } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { LockOut } from './locks.schemas.js';

/** The holder of an image's lock as writes see it: who and until when. */
export interface LockHolder {
  user_id: number;
  email: string;
  expires_at: string;
}

/** An image's lock as a refused write names it. */
export type ImageLockHolder = LockHolder & { image_id: number };

/** Which images a bulk write touches: listed ones, every image of a project, or the images a class annotates. */
export type LockScope = { imageIds: readonly number[] } | { projectId: number } | { classId: number };

/** Most locks a bulk refusal reports (the detail names fewer). */
const MAX_REPORTED = 100;
const ID_CHUNK = 500;

export class LocksRepository {
  private readonly holder: PreparedQuery<{ imageId: number }, ImageLockHolder>;

  constructor(private readonly db: Db) {
    // Asked on every annotation write, so it is prepared once.
    this.holder = new PreparedQuery(db, ['imageId'], (p) =>
      db
        .selectFrom('image_locks')
        .innerJoin('users', 'users.id', 'image_locks.user_id')
        .select(['image_locks.image_id', 'image_locks.user_id', 'users.email', 'image_locks.expires_at'])
        .where('image_locks.image_id', '=', p.imageId),
    );
  }

  async findHolder(imageId: number, db: Executor = this.db): Promise<ImageLockHolder | undefined> {
    return (await this.holder.run({ imageId }, db)).rows[0];
  }

  /** Live locks held by users other than `userId` on the images of `scope`, by image id (at most MAX_REPORTED). */
  async heldByOthers(scope: LockScope, userId: number, now: string, db: Executor = this.db): Promise<ImageLockHolder[]> {
    const query = () =>
      db
        .selectFrom('image_locks')
        .innerJoin('users', 'users.id', 'image_locks.user_id')
        .select(['image_locks.image_id', 'image_locks.user_id', 'users.email', 'image_locks.expires_at'])
        .where('image_locks.user_id', '!=', userId)
        .where('image_locks.expires_at', '>', now)
        .orderBy('image_locks.image_id')
        .limit(MAX_REPORTED);
    if ('projectId' in scope) {
      return query().where('image_locks.image_id', 'in', (eb) => eb.selectFrom('images').select('images.id').where('images.project_id', '=', scope.projectId)).execute();
    }
    if ('classId' in scope) {
      return query().where('image_locks.image_id', 'in', (eb) => eb.selectFrom('annotations').select('annotations.image_id').where('annotations.class_id', '=', scope.classId)).execute();
    }
    const found: ImageLockHolder[] = [];
    const ids = [...new Set(scope.imageIds)];
    for (let i = 0; i < ids.length && found.length < MAX_REPORTED; i += ID_CHUNK) {
      found.push(...(await query().where('image_locks.image_id', 'in', ids.slice(i, i + ID_CHUNK)).execute()));
    }
    return found.sort((a, b) => a.image_id - b.image_id).slice(0, MAX_REPORTED);
  }

  find(imageId: number): Promise<LockOut | undefined> {
    return this.db
      .selectFrom('image_locks')
      .innerJoin('users', 'users.id', 'image_locks.user_id')
      .select(['image_locks.image_id', 'image_locks.user_id', 'users.email', 'users.display_name', 'image_locks.acquired_at', 'image_locks.expires_at'])
      .where('image_locks.image_id', '=', imageId)
      .executeTakeFirst();
  }

  /**
   * Takes the lock, or renews it for its holder, in one statement: the row is replaced only when it is the
   * caller's own or has expired, so two editors racing for a free image cannot both win. Returns false when
   * someone else holds it.
   */
  async acquire(imageId: number, userId: number, now: string, expiresAt: string): Promise<boolean> {
    const row = await this.db
      .insertInto('image_locks')
      .values({ image_id: imageId, user_id: userId, acquired_at: now, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('image_id')
          .doUpdateSet((eb) => ({
            acquired_at: eb.case().when('image_locks.user_id', '=', userId).then(eb.ref('image_locks.acquired_at')).else(eb.ref('excluded.acquired_at')).end(),
            user_id: eb.ref('excluded.user_id'),
            expires_at: eb.ref('excluded.expires_at'),
          }))
          .where((eb) => eb.or([eb('image_locks.user_id', '=', userId), eb('image_locks.expires_at', '<=', now)])),
      )
      .returning('image_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Removes the lock (only the given holder's unless `userId` is null); true when a row went. */
  async release(imageId: number, userId: number | null): Promise<boolean> {
    let query = this.db.deleteFrom('image_locks').where('image_id', '=', imageId);
    if (userId !== null) query = query.where('user_id', '=', userId);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
