import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/**
 * Migration 0026: suggestions are not annotations until accepted (issue 28). The counters earlier model runs moved
 * for suggestions are recomputed: images and projects count accepted annotations only.
 */
describe('migration 0026: counters count accepted annotations', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { project: number; other: number; labelled: number; suggestedOnly: number };
  const now = new Date().toISOString();

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'c@example.com', password_hash: 'x', display_name: 'c', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = async (name: string, counts: { image_count: number; annotated_image_count: number; annotation_count: number }) =>
      (await db.insertInto('projects').values({ owner_id: user.id, name, description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now, class_count: 1, ...counts })
        .returning('id').executeTakeFirstOrThrow()).id;
    // As counted before: every row, suggestion or not.
    const p = await project('p', { image_count: 2, annotated_image_count: 2, annotation_count: 3 });
    const other = await project('untouched', { image_count: 0, annotated_image_count: 0, annotation_count: 0 });
    const cls = await db.insertInto('classes').values({ project_id: p, name: 'cat', color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow();
    const image = async (sha: string, count: number) => (await db.insertInto('images').values({
      project_id: p, filename: `${sha}.png`, original_name: `${sha}.png`, width: 100, height: 80, split: 'train', sha256: sha, mime_type: 'image/png',
      size_bytes: 1, blob_key: `projects/${p}/images/${sha}.png`, thumbnail_key: `projects/${p}/thumbs/${sha}.webp`, annotation_count: count, created_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;
    const labelled = await image('aa', 2);
    const suggestedOnly = await image('bb', 1);
    const annotation = (imageId: number, status: 'accepted' | 'suggested') => ({
      image_id: imageId, project_id: p, class_id: cls.id, annotation_type: 'bbox', geometry: JSON.stringify({ x: 1, y: 1, width: 5, height: 5 }), confidence: 0.9, source: 'model:1', status, created_at: now, updated_at: now,
    });
    await db.insertInto('annotations').values([annotation(labelled, 'accepted'), annotation(labelled, 'suggested'), annotation(suggestedOnly, 'suggested')]).execute();
    return { project: p, other, labelled, suggestedOnly };
  }

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0021-training-admission', seed));
  });
  after(() => close());

  it('recounts images and projects from their accepted annotations', async () => {
    const images = await database.db.selectFrom('images').select(['id', 'annotation_count']).orderBy('id').execute();
    assert.deepEqual(images.map((i) => [i.id, Number(i.annotation_count)]), [[ids.labelled, 1], [ids.suggestedOnly, 0]]);
    const project = await database.db.selectFrom('projects').select(['annotation_count', 'annotated_image_count', 'image_count']).where('id', '=', ids.project).executeTakeFirstOrThrow();
    assert.deepEqual([project.annotation_count, project.annotated_image_count, project.image_count].map(Number), [1, 1, 2]);
    const other = await database.db.selectFrom('projects').select(['annotation_count', 'annotated_image_count']).where('id', '=', ids.other).executeTakeFirstOrThrow();
    assert.deepEqual([other.annotation_count, other.annotated_image_count].map(Number), [0, 0]);
  });
});
