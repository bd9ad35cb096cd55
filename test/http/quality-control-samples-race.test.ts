/**
 * Dealing samples under concurrency (issue 29), as test/http/quality-control-overlap-race does for images: annotators
 * asking for their next sample all at once, several times each, never give a sample more than `overlap` answers,
 * never hold two open tasks, and leave none with a free slot; dealing walks the stored queue (qc_sample_queue), which
 * also takes a sample committed late below its mark.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { drainTasks, submitHeld } from '../helpers/qc-dealing.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number };
const OVERLAP = 2;
const SAMPLES = 6;
const ANNOTATORS = 5;
const REQUESTS_EACH = 3;

describe('sample dealing is atomic and queued (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  const annotators: User[] = [];
  let projectId: number;
  const samples: number[] = [];
  const base = () => `/api/projects/${projectId}/quality-control/samples`;
  const addSamples = async (n: number) => {
    const res = await owner.post(`/api/projects/${projectId}/samples`, { items: Array.from({ length: n }, (_, i) => ({ modality: 'text', data: { text: `text ${samples.length + i}` } })) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.items.map((s: { id: number }) => s.id) as number[];
  };

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    for (let i = 0; i < ANNOTATORS; i++) annotators.push(await t.user());
    projectId = (await owner.post('/api/projects', { name: 'sample race', project_type: 'classification' })).body.id;
    for (const u of annotators) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    samples.push(...(await addSamples(SAMPLES)));
    assert.equal((await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: OVERLAP })).status, 200);
  });
  after(() => t.close());

  const answersPerSample = async () => {
    const rows = await t.versa.deps.db.selectFrom('qc_sample_tasks').select(['sample_id', 'user_id', 'status']).where('project_id', '=', projectId).execute();
    const per = new Map<number, number>(samples.map((id) => [id, 0]));
    for (const r of rows) per.set(r.sample_id, per.get(r.sample_id)! + 1);
    return { rows, per };
  };

  it('concurrent rounds of "next" fill every sample to exactly the overlap, never past it', async () => {
    for (let round = 0; round < SAMPLES * OVERLAP; round++) {
      const answers = await Promise.all(annotators.flatMap((u) => Array.from({ length: REQUESTS_EACH }, () => u.post(`${base()}/tasks/next`).then((res) => ({ u, res })))));
      for (const { res } of answers) assert.equal(res.status, 200, JSON.stringify(res.body));
      const byUser = new Map<number, Set<string>>();
      for (const { u, res } of answers) byUser.set(u.id, (byUser.get(u.id) ?? new Set()).add(JSON.stringify(res.body.task?.id ?? null)));
      for (const [user, ids] of byUser) assert.equal(ids.size, 1, `user ${user} was dealt ${[...ids].join(', ')} at once`);
      const { per } = await answersPerSample();
      for (const [sample, n] of per) assert.ok(n <= OVERLAP, `sample ${sample} has ${n} answers (overlap ${OVERLAP})`);
      const dealt = answers.filter(({ res }) => res.body.task !== null);
      if (dealt.length === 0) break;
      await submitHeld(dealt, base(), 'sample_id');
    }
    const { rows, per } = await answersPerSample();
    assert.deepEqual([...per.values()], samples.map(() => OVERLAP), 'no sample skipped, none overfilled');
    assert.equal(new Set(rows.map((r) => `${r.sample_id}:${r.user_id}`)).size, SAMPLES * OVERLAP);
    const queued = await t.versa.deps.db.selectFrom('qc_sample_queue').select('sample_id').where('project_id', '=', projectId).execute();
    assert.deepEqual(queued, [], 'full samples leave the stored queue');
  });

  it('samples added later, a sample committed late below the mark, and a new overlap are all dealt', async () => {
    const db = t.versa.deps.db;
    const [late, later] = await addSamples(2);
    const row = await db.selectFrom('samples').selectAll().where('id', '=', late).executeTakeFirstOrThrow();
    await db.deleteFrom('samples').where('id', '=', late).execute();
    samples.push(later);
    await drainTasks(annotators, base(), 'sample_id');
    const mark = (await db.selectFrom('qc_settings').select('samples_queued_through').where('project_id', '=', projectId).executeTakeFirstOrThrow()).samples_queued_through;
    assert.ok(mark >= later, `the queue's mark ${mark} is past the late id ${late}`);
    await db.insertInto('samples').values(row).execute();
    samples.push(late);
    await drainTasks(annotators, base(), 'sample_id');
    assert.deepEqual([...(await answersPerSample()).per.values()], samples.map(() => OVERLAP));
    assert.equal((await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: OVERLAP + 1 })).status, 200);
    await drainTasks(annotators, base(), 'sample_id');
    assert.deepEqual([...(await answersPerSample()).per.values()], samples.map(() => OVERLAP + 1));
  });
});
