/**
 * Overlap dealing under concurrency (issue 29): annotators asking for their next task all at once, each several times,
 * never give an image more than `overlap` versions, never hold two open tasks, and never skip an image that still has
 * a free slot: when the queue runs dry, every image has exactly `overlap` versions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { drainTasks, submitHeld } from '../helpers/qc-dealing.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number };
const OVERLAP = 2;
const IMAGES = 6;
const ANNOTATORS = 5;
const REQUESTS_EACH = 3;

describe('overlap dealing is atomic (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  const annotators: User[] = [];
  let projectId: number;
  const images: number[] = [];
  const base = () => `/api/projects/${projectId}/quality-control`;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    for (let i = 0; i < ANNOTATORS; i++) annotators.push(await t.user());
    projectId = (await owner.post('/api/projects', { name: 'overlap race' })).body.id;
    for (const u of annotators) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    for (let i = 0; i < IMAGES; i++) images.push(await insertImageRow(t, projectId));
    assert.equal((await owner.put(`${base()}/settings`, { overlap: OVERLAP })).status, 200);
  });
  after(() => t.close());

  const tasksPerImage = async () => {
    const rows = await t.versa.deps.db.selectFrom('qc_tasks').select(['image_id', 'user_id', 'status']).where('project_id', '=', projectId).execute();
    const per = new Map<number, number>(images.map((id) => [id, 0]));
    for (const r of rows) per.set(r.image_id, per.get(r.image_id)! + 1);
    return { rows, per };
  };

  it('concurrent rounds of "next" fill every image to exactly the overlap, never past it', async () => {
    for (let round = 0; round < IMAGES * OVERLAP; round++) {
      // Every annotator asks several times at once; all of one annotator's answers name one task.
      const answers = await Promise.all(annotators.flatMap((u) => Array.from({ length: REQUESTS_EACH }, () => u.post(`${base()}/tasks/next`).then((res) => ({ u, res })))));
      for (const { res } of answers) assert.equal(res.status, 200, JSON.stringify(res.body));
      const byUser = new Map<number, Set<string>>();
      for (const { u, res } of answers) byUser.set(u.id, (byUser.get(u.id) ?? new Set()).add(JSON.stringify(res.body.task?.id ?? null)));
      for (const [user, ids] of byUser) assert.equal(ids.size, 1, `user ${user} was dealt ${[...ids].join(', ')} at once`);
      const { rows, per } = await tasksPerImage();
      for (const [image, n] of per) assert.ok(n <= OVERLAP, `image ${image} has ${n} versions (overlap ${OVERLAP})`);
      assert.ok(rows.filter((r) => r.status === 'open').length <= ANNOTATORS);
      const dealt = answers.filter(({ res }) => res.body.task !== null);
      if (dealt.length === 0) break;
      // Each annotator submits what they hold, then the next round asks again.
      await submitHeld(dealt, base(), 'image_id');
    }
    const { rows, per } = await tasksPerImage();
    assert.deepEqual([...per.values()], images.map(() => OVERLAP), 'no image skipped, none overfilled');
    assert.equal(rows.length, IMAGES * OVERLAP);
    assert.equal(new Set(rows.map((r) => `${r.image_id}:${r.user_id}`)).size, rows.length);
    for (const u of annotators) assert.deepEqual((await u.post(`${base()}/tasks/next`)).body, { task: null });
  });

  it('images uploaded after dealing began join the queue, and a new overlap deals every image again', async () => {
    for (let i = 0; i < 2; i++) images.push(await insertImageRow(t, projectId));
    await drainTasks(annotators, base(), 'image_id');
    assert.deepEqual([...(await tasksPerImage()).per.values()], images.map(() => OVERLAP));
    assert.equal((await owner.put(`${base()}/settings`, { overlap: OVERLAP + 1 })).status, 200);
    await drainTasks(annotators, base(), 'image_id');
    assert.deepEqual([...(await tasksPerImage()).per.values()], images.map(() => OVERLAP + 1));
    const queued = await t.versa.deps.db.selectFrom('qc_queue').select('image_id').where('project_id', '=', projectId).execute();
    assert.deepEqual(queued, [], 'full images leave the queue');
  });

  it('an image committed late with an id below the queue\'s mark is dealt (PostgreSQL commits out of id order)', async () => {
    // Simulate a transaction that took id X, then committed after another image with a higher id was queued: X's row
    // is taken out, a later image is queued past it, and X comes back with its own (lower) id.
    const db = t.versa.deps.db;
    const late = await insertImageRow(t, projectId);
    const row = await db.selectFrom('images').selectAll().where('id', '=', late).executeTakeFirstOrThrow();
    await db.deleteFrom('images').where('id', '=', late).execute();
    images.push(await insertImageRow(t, projectId));
    await drainTasks(annotators, base(), 'image_id');
    const mark = (await db.selectFrom('qc_settings').select('queued_through').where('project_id', '=', projectId).executeTakeFirstOrThrow()).queued_through;
    assert.ok(mark > late, `the queue's mark ${mark} is past the late id ${late}`);
    await db.insertInto('images').values(row).execute();
    images.push(late);
    await drainTasks(annotators, base(), 'image_id');
    assert.deepEqual([...(await tasksPerImage()).per.values()], images.map(() => OVERLAP + 1), 'the late image was dealt to every slot');
  });
});
