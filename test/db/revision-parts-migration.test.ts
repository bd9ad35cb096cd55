import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { PART_BITS, PROJECT_PART } from '../../src/db/migrations/0019-project-revision-parts.js';
import { ProfileRepository } from '../../src/modules/profile/profile.repository.js';
import { DatasetProfiler } from '../../src/modules/profile/dataset-profile.service.js';
import { ProjectRevisionsRepository } from '../../src/modules/profile/project-revisions.repository.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/**
 * Migration 0019 splits migration 0018's project revision into parts: a database that already holds images must come
 * out with a revision for every image part they lie in (the profile is summed over the parts that have one), and
 * with the new triggers in place of the old.
 */
describe('migration 0019: project revisions per part', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { project: number; images: number[]; cls: number };
  const now = new Date().toISOString();

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'm@example.com', password_hash: 'x', display_name: 'm', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = (await db.insertInto('projects').values({ owner_id: user.id, name: 'p', description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    const cls = (await db.insertInto('classes').values({ project_id: project, name: 'cat', color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    const images: number[] = [];
    for (const id of [7, 1_500, 1_501, 9_000]) {
      await db.insertInto('images').values({
        id, project_id: project, filename: `${id}.png`, original_name: `${id}.png`, width: 100, height: 80, split: 'train', sha256: `s${id}`, mime_type: 'image/png',
        size_bytes: 1, blob_key: `b/${id}`, thumbnail_key: `t/${id}`, annotation_count: 1, created_at: now,
      }).execute();
      await db.insertInto('annotations').values({ image_id: id, project_id: project, class_id: cls, annotation_type: 'bbox', geometry: JSON.stringify({ x: 1, y: 2, width: 30, height: 40 }), confidence: null, source: 'manual', created_at: now, updated_at: now }).execute();
      images.push(id);
    }
    return { project, images, cls };
  }

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0018-project-revisions', seed));
  });
  after(() => close());

  it('gives every part that holds images a revision, and the profile counts them all', async () => {
    const parts = await new ProjectRevisionsRepository(database.db).parts(ids.project);
    assert.deepEqual([...parts.keys()].sort((a, b) => a - b), [PROJECT_PART, ...new Set(ids.images.map((id) => id >> PART_BITS))]);
    const profile = await new DatasetProfiler(new ProfileRepository(database.db), new ProjectRevisionsRepository(database.db)).profile(ids.project, 'image');
    assert.equal(profile.totals.images, 4);
    assert.equal(profile.totals.annotations, 4);
  });

  it('advances a part with the new triggers', async () => {
    const revisions = new ProjectRevisionsRepository(database.db);
    const before = await revisions.parts(ids.project);
    await database.db.updateTable('images').set({ split: 'valid' }).where('id', '=', 1_500).execute();
    const after = await revisions.parts(ids.project);
    assert.ok(after.get(1_500 >> PART_BITS)! > before.get(1_500 >> PART_BITS)!);
    assert.equal(after.get(7 >> PART_BITS), before.get(7 >> PART_BITS));
    assert.equal(after.get(PROJECT_PART), before.get(PROJECT_PART));
  });
});
