import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { isForeignKeyViolation } from '../../src/db/errors.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/**
 * Migration 0015 replaces the unique constraint on images (project_id, sha256) by a plain index (issue 18). On SQLite
 * that is a rebuild of the images table, which a dozen tables refer to with `on delete cascade`: it must keep every
 * row that refers to an image, the foreign keys, the other constraints and indexes, and the id counter.
 */
describe('migration 0015: two images of a project may share their bytes', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { user: number; project: number; cls: number; kept: number; other: number; deleted: number };

  const now = new Date().toISOString();
  const image = (projectId: number, name: string, sha256: string) => ({
    project_id: projectId, filename: name, original_name: name, width: 10, height: 10, split: 'train', sha256, mime_type: 'image/png',
    size_bytes: 1, blob_key: `projects/${projectId}/images/${sha256}.png`, thumbnail_key: `projects/${projectId}/thumbs/${sha256}.webp`,
    annotation_count: 1, created_at: now,
  });

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'm@example.com', password_hash: 'x', display_name: 'm', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = await db.insertInto('projects').values({ owner_id: user.id, name: 'p', description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow();
    const cls = await db.insertInto('classes').values({ project_id: project.id, name: 'cat', color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow();
    const [kept, other, deleted] = await db.insertInto('images').values([image(project.id, 'a.png', 'aa'), image(project.id, 'b.png', 'bb'), image(project.id, 'c.png', 'cc')])
      .returning('id').execute();
    for (const imageId of [kept.id, other.id]) {
      await db.insertInto('annotations').values({ image_id: imageId, project_id: project.id, class_id: cls.id, annotation_type: 'bbox', geometry: '{}', confidence: null, source: 'manual', created_at: now, updated_at: now }).execute();
    }
    await db.insertInto('assignments').values({ project_id: project.id, image_id: other.id, user_id: user.id, assigned_by: null, created_at: now }).execute();
    // The highest id goes: the rebuilt table must not hand it out again.
    await db.deleteFrom('images').where('id', '=', deleted.id).execute();
    return { user: user.id, project: project.id, cls: cls.id, kept: kept.id, other: other.id, deleted: deleted.id };
  }

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0014-sample-teams', async (db) => {
      const seeded = await seed(db);
      const refused = await db.insertInto('images').values(image(seeded.project, 'copy.png', 'aa')).execute().catch((e: unknown) => e);
      assert.ok(refused instanceof Error, 'before the migration, the same bytes twice in a project are refused');
      return seeded;
    }));
  });
  after(() => close());

  it('keeps every image and every row that refers to one', async () => {
    const db = database.db;
    const images = await db.selectFrom('images').select(['id', 'filename', 'sha256', 'annotation_count', 'review_state']).orderBy('id').execute();
    assert.deepEqual(images.map((i) => [i.id, i.filename, i.sha256, i.annotation_count, i.review_state]), [
      [ids.kept, 'a.png', 'aa', 1, 'unreviewed'],
      [ids.other, 'b.png', 'bb', 1, 'unreviewed'],
    ]);
    assert.equal((await db.selectFrom('annotations').select('id').execute()).length, 2);
    assert.equal((await db.selectFrom('assignments').select('id').execute()).length, 1);
  });

  it('takes a second image of the same bytes, and still refuses a second image of the same stored name', async () => {
    const db = database.db;
    const copy = await db.insertInto('images').values(image(ids.project, 'copy.png', 'aa')).returning('id').executeTakeFirstOrThrow();
    assert.ok(copy.id > ids.deleted, `the id counter goes on after the deleted image's (${copy.id} > ${ids.deleted})`);
    const sameName = await db.insertInto('images').values(image(ids.project, 'copy.png', 'dd')).execute().catch((e: unknown) => e);
    assert.ok(sameName instanceof Error && /unique|duplicate/i.test(sameName.message), String(sameName));
    assert.equal((await db.selectFrom('images').select('id').where('project_id', '=', ids.project).where('sha256', '=', 'aa').execute()).length, 2);
  });

  it('keeps the foreign keys: rows refer to images that exist, and deleting an image takes its rows along', async () => {
    const db = database.db;
    const dangling = await db.insertInto('annotations')
      .values({ image_id: 999_999, project_id: ids.project, class_id: ids.cls, annotation_type: 'bbox', geometry: '{}', confidence: null, source: 'manual', created_at: now, updated_at: now })
      .execute().catch((e: unknown) => e);
    assert.ok(isForeignKeyViolation(dangling), String(dangling));
    await db.deleteFrom('images').where('id', '=', ids.other).execute();
    assert.equal((await db.selectFrom('assignments').select('id').execute()).length, 0, 'the assignment went with its image');
    assert.deepEqual((await db.selectFrom('annotations').select('image_id').execute()).map((a) => a.image_id), [ids.kept]);
  });
});
