import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/**
 * Migration 0017 adds the stored generated columns box_x/y/w/h to annotations (issue 14: the quality report and the
 * profile read boxes as numbers). On SQLite that is a rebuild of the annotations table: it must keep every row, the
 * rows that refer to annotations, the foreign keys and the id counter; on both databases every later write, by any
 * path, gets its box computed from the geometry.
 */
describe('migration 0017: annotations carry their box', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { project: number; image: number; cls: number; box: number; mask: number; polygon: number; label: number; deleted: number };

  const now = new Date().toISOString();
  const annotation = (ids: { project: number; image: number; cls: number }, annotation_type: string, geometry: object) => ({
    image_id: ids.image, project_id: ids.project, class_id: ids.cls, annotation_type, geometry: JSON.stringify(geometry), confidence: null, source: 'manual', created_at: now, updated_at: now,
  });

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'b@example.com', password_hash: 'x', display_name: 'b', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = await db.insertInto('projects').values({ owner_id: user.id, name: 'p', description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow();
    const cls = await db.insertInto('classes').values({ project_id: project.id, name: 'cat', color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow();
    const image = await db.insertInto('images').values({
      project_id: project.id, filename: 'a.png', original_name: 'a.png', width: 100, height: 80, split: 'train', sha256: 'aa', mime_type: 'image/png',
      size_bytes: 1, blob_key: 'projects/1/images/aa.png', thumbnail_key: 'projects/1/thumbs/aa.webp', annotation_count: 4, created_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const base = { project: project.id, image: image.id, cls: cls.id };
    const [box, mask, polygon, label, deleted] = await db.insertInto('annotations').values([
      annotation(base, 'bbox', { x: 1.5, y: 2, width: 30, height: 40 }),
      annotation(base, 'mask', { rle: { size: [80, 100], counts: [8000] }, bbox: { x: 5, y: 6, width: 7, height: 8 } }),
      annotation(base, 'polygon', { points: [[0, 0], [10, 0], [10, 10]] }),
      annotation(base, 'classification', {}),
      annotation(base, 'bbox', { x: 0, y: 0, width: 1, height: 1 }),
    ]).returning('id').execute();
    await db.insertInto('revisions').values({ annotation_id: box.id, image_id: image.id, project_id: project.id, action: 'create', before: null, after: '{}', user_id: user.id, created_at: now }).execute();
    // The highest id goes: the rebuilt table must not hand it out again.
    await db.deleteFrom('annotations').where('id', '=', deleted.id).execute();
    return { ...base, box: box.id, mask: mask.id, polygon: polygon.id, label: label.id, deleted: deleted.id };
  }

  const boxOf = async (id: number) => {
    const row = await database.db.selectFrom('annotations').select(['box_x', 'box_y', 'box_w', 'box_h']).where('id', '=', id).executeTakeFirstOrThrow();
    return [row.box_x, row.box_y, row.box_w, row.box_h];
  };

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0016-remeasure-images', seed));
  });
  after(() => close());

  it('computes the box of every existing bbox and mask, and none for polygons and classifications', async () => {
    assert.deepEqual(await boxOf(ids.box), [1.5, 2, 30, 40]);
    assert.deepEqual(await boxOf(ids.mask), [5, 6, 7, 8]);
    assert.deepEqual(await boxOf(ids.polygon), [null, null, null, null]);
    assert.deepEqual(await boxOf(ids.label), [null, null, null, null]);
    const revisions = await database.db.selectFrom('revisions').select('annotation_id').execute();
    assert.deepEqual(revisions.map((r) => r.annotation_id), [ids.box], 'the revision still names its annotation');
  });

  it('computes the box of every later insert and geometry update, and goes on counting ids after the deleted one', async () => {
    const db = database.db;
    const added = await db.insertInto('annotations').values(annotation(ids, 'bbox', { x: 10, y: 20, width: 3, height: 4 })).returning('id').executeTakeFirstOrThrow();
    assert.ok(added.id > ids.deleted, `the id counter goes on after the deleted annotation's (${added.id} > ${ids.deleted})`);
    assert.deepEqual(await boxOf(added.id), [10, 20, 3, 4]);
    await db.updateTable('annotations').set({ geometry: JSON.stringify({ x: 11, y: 21, width: 5, height: 6 }) }).where('id', '=', added.id).execute();
    assert.deepEqual(await boxOf(added.id), [11, 21, 5, 6]);
    await db.updateTable('annotations').set({ annotation_type: 'polygon', geometry: JSON.stringify({ points: [[0, 0], [1, 0], [1, 1]] }) }).where('id', '=', added.id).execute();
    assert.deepEqual(await boxOf(added.id), [null, null, null, null]);
  });

  it('keeps the foreign keys: deleting the image takes its annotations along', async () => {
    const db = database.db;
    await db.deleteFrom('images').where('id', '=', ids.image).execute();
    assert.equal((await db.selectFrom('annotations').select('id').execute()).length, 0);
  });
});
