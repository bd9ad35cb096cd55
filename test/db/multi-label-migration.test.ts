import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/**
 * Migration 0042 (issue 30, item 7): classification projects are single-label unless an image already holds two
 * classes, which keeps the editor's toggling (multi-label).
 */
describe('migration 0042: multi_label', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { tagged: number; single: number; detection: number };
  const now = new Date().toISOString();

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'm@example.com', password_hash: 'x', display_name: 'm', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = async (name: string, type: string) =>
      (await db.insertInto('projects').values({ owner_id: user.id, name, description: '', project_type: type, location: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    const tagged = await project('tagged', 'classification');
    const single = await project('single', 'classification');
    const detection = await project('boxes', 'object_detection');
    for (const p of [tagged, single, detection]) {
      const cls = async (name: string) => (await db.insertInto('classes').values({ project_id: p, name, color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
      const [a, b] = [await cls('a'), await cls('b')];
      const image = async (sha: string) => (await db.insertInto('images').values({
        project_id: p, filename: `${sha}.png`, original_name: `${sha}.png`, width: 10, height: 10, split: null, sha256: sha, mime_type: 'image/png',
        size_bytes: 1, blob_key: `projects/${p}/images/${sha}.png`, thumbnail_key: `projects/${p}/thumbs/${sha}.webp`, created_at: now,
      }).returning('id').executeTakeFirstOrThrow()).id;
      const [one, two] = [await image(`${p}-1`), await image(`${p}-2`)];
      const label = (imageId: number, classId: number, type = p === detection ? 'bbox' : 'classification') => ({
        image_id: imageId, project_id: p, class_id: classId, annotation_type: type, geometry: type === 'bbox' ? JSON.stringify({ x: 1, y: 1, width: 5, height: 5 }) : '{}',
        confidence: null, source: 'manual', status: 'accepted' as const, created_at: now, updated_at: now,
      });
      // tagged: one image with two classes; single: each image one class; detection: two classes on one image (boxes).
      const rows = p === single ? [label(one, a), label(two, b)] : [label(one, a), label(one, b)];
      await db.insertInto('annotations').values(rows).execute();
    }
    return { tagged, single, detection };
  }

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0039-fine-hashes', seed));
  });
  after(() => close());

  it('marks only classification projects with a two-class image multi-label', async () => {
    const rows = await database.db.selectFrom('projects').select(['id', 'multi_label']).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.id, Number(r.multi_label)]), [[ids.tagged, 1], [ids.single, 0], [ids.detection, 0]]);
  });
});
