import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migratedTestDatabase } from '../helpers/test-app.js';

/** Migration 0052 (issue 29): sample tasks already submitted wait for review; open ones have no review yet. */
describe('migration 0052: sample task reviews', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  let ids: { submitted: number; open: number };
  const now = new Date().toISOString();

  async function seed(db: Db) {
    const user = await db.insertInto('users').values({ email: 'r@example.com', password_hash: 'x', display_name: 'r', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
    const project = (await db.insertInto('projects').values({ owner_id: user.id, name: 'p', description: '', project_type: 'classification', location: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    const sample = async (text: string) => (await (db as any).insertInto('samples').values({ project_id: project, modality: 'text', split: null, data: JSON.stringify({ text }), label: null, labels: null, spans: null, value: null, metadata: null, blob_key: null, sha256: null, assignee_id: null, review_comment: null, reviewed_by: null, reviewed_at: null, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id as number;
    const task = async (sampleId: number, status: 'open' | 'submitted') => (await db.insertInto('qc_sample_tasks').values({ project_id: project, sample_id: sampleId, user_id: user.id, label: 'a', spans: null, status, created_at: now, updated_at: now, submitted_at: status === 'submitted' ? now : null }).returning('id').executeTakeFirstOrThrow()).id;
    return { submitted: await task(await sample('one'), 'submitted'), open: await task(await sample('two'), 'open') };
  }

  before(async () => {
    ({ database, seeded: ids, close } = await migratedTestDatabase('0051-qc-sample-values', seed));
  });
  after(() => close());

  it('makes submitted sample tasks pending, round 0, and starts an empty record', async () => {
    const rows = await database.db.selectFrom('qc_sample_tasks').select(['id', 'review_state', 'review_comment', 'review_round']).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.id, r.review_state, r.review_comment, Number(r.review_round)]), [[ids.submitted, 'pending', null, 0], [ids.open, null, null, 0]]);
    assert.deepEqual(await database.db.selectFrom('qc_sample_task_reviews').selectAll().execute(), []);
  });
});
