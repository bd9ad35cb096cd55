/**
 * Quality-control sample tasks beyond one class and spans (issue 29): tabular rows (a target class or a numeric
 * target), LLM records (rating and preferred response), multi-label classes and audio transcripts are answered in the
 * annotator's task (the sample is never written), checked by the sample's own rules, frozen as ground truth, and
 * scored in the report as sample-value-scores.logic.ts defines (figures worked by hand in the comments).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { withDraws } from '../helpers/random-draws.js';

type User = Client & { id: number; email: string };

describe('quality-control sample tasks: tabular, LLM, multi-label and transcripts (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let a1: User;
  let projectId: number;
  const ids: Record<'tabClass' | 'tabValue' | 'llm' | 'multi' | 'audio' | 'pool', number> = { tabClass: 0, tabValue: 0, llm: 0, multi: 0, audio: 0, pool: 0 };
  const base = () => `/api/projects/${projectId}/quality-control/samples`;

  before(async () => {
    t = await startTestApp();
    [owner, a1] = [await t.user(), await t.user()];
    projectId = (await owner.post('/api/projects', { name: 'qc values', project_type: 'classification' })).body.id;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: a1.id, role: 'annotator' });
    for (const name of ['yes', 'no', 'x', 'y', 'z']) await owner.post(`/api/projects/${projectId}/classes`, { name });
    const created = await owner.post(`/api/projects/${projectId}/samples`, { items: [
      { modality: 'tabular', data: { row: { age: 41, city: 'Oslo' } }, label: 'yes' },
      { modality: 'tabular', data: { row: { rooms: 3 } }, value: 10 },
      { modality: 'llm', data: { prompt: 'Name a colour', chosen: 'Blue', rejected: 'Seven' }, value: { rating: 7, preference: 'chosen' } },
      { modality: 'text', data: { text: 'a multi-label text' }, label: ['x', 'y'] },
      { modality: 'text', data: { text: 'a pool text' } },
    ] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    [ids.tabClass, ids.tabValue, ids.llm, ids.multi, ids.pool] = created.body.items.map((s: { id: number }) => s.id);
    const now = new Date().toISOString();
    ids.audio = (await t.versa.deps.db.insertInto('samples').values({
      project_id: projectId, modality: 'audio', split: null, data: JSON.stringify({ file: 'clip.wav', duration_s: 5 }), label: null, labels: null, spans: null,
      value: JSON.stringify('The cat sat on the mat.'), metadata: null, blob_key: null, sha256: null, review_state: 'unreviewed', assignee_id: null,
      review_comment: null, reviewed_by: null, reviewed_at: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;
    for (const id of [ids.tabClass, ids.tabValue, ids.llm, ids.multi, ids.audio]) {
      assert.equal((await owner.post(`/api/samples/${id}/submit`)).status, 200);
      assert.equal((await owner.post(`/api/samples/${id}/review`, { decision: 'approve' })).status, 200);
    }
  });
  after(() => t.close());

  it('freezes every class, and the value, of a ground-truth sample', async () => {
    const marked = await owner.post(`${base()}/ground-truth`, { sample_ids: [ids.tabClass, ids.tabValue, ids.llm, ids.multi, ids.audio] });
    assert.equal(marked.status, 201, JSON.stringify(marked.body));
    const by = new Map(marked.body.map((m: { sample_id: number; label: unknown; value: unknown }) => [m.sample_id, [m.label, m.value]]));
    assert.deepEqual(by.get(ids.tabClass), ['yes', null]);
    assert.deepEqual(by.get(ids.tabValue), [null, 10]);
    assert.deepEqual(by.get(ids.llm), [null, { rating: 7, preference: 'chosen' }]);
    assert.deepEqual(by.get(ids.multi), [['x', 'y'], null]);
    assert.deepEqual(by.get(ids.audio), [null, 'The cat sat on the mat.']);
  });

  it('keeps tabular, LLM, multi-label and transcript answers in the task (never the sample), refuses what the modality does not take, and scores them', async () => {
    await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: 1, ground_truth_share: 0.5 });
    const before = await Promise.all(Object.values(ids).map(async (id) => (await owner.get(`/api/samples/${id}`)).body));
    const answers: Record<number, object> = {
      [ids.tabClass]: { label: 'yes' }, // = truth: accuracy 1
      [ids.tabValue]: { value: 13 }, // |10 − 13| = 3
      [ids.llm]: { value: { rating: 5, preference: 'chosen' } }, // preference agrees: 1; |7 − 5| = 2
      [ids.multi]: { label: ['x', 'z'] }, // {x, y} vs {x, z}: 1 / 3
      [ids.audio]: { value: 'the cat sat on mat' }, // 6 reference words, "the" deleted: WER 1 / 6
    };
    const refused: Record<number, object> = {
      [ids.tabClass]: { spans: [{ start: 0, end: 1, label: 'x' }] },
      [ids.tabValue]: { value: 'ten' },
      [ids.llm]: { value: { rating: 5, preference: 'neither' } },
      [ids.audio]: { value: { rating: 3 } },
    };
    const dealt: number[] = [];
    await withDraws([0], async () => {
      for (;;) {
        const next = await a1.post(`${base()}/tasks/next`);
        assert.equal(next.status, 200, JSON.stringify(next.body));
        const task = next.body.task;
        if (task === null || task.sample_id === ids.pool) break;
        const id: number = task.sample_id;
        dealt.push(id);
        assert.deepEqual([task.label, task.spans, task.value], [null, null, null], 'a ground-truth task starts empty');
        if (refused[id]) {
          const bad = await a1.put(`${base()}/tasks/${id}`, refused[id]);
          assert.equal(bad.status, 422, JSON.stringify(bad.body));
          assert.ok(bad.body.detail);
        }
        const saved = await a1.put(`${base()}/tasks/${id}`, answers[id]);
        assert.equal(saved.status, 200, JSON.stringify(saved.body));
        for (const [k, v] of Object.entries(answers[id])) assert.deepEqual(saved.body[k], v, `sample ${id}: ${k}`);
        assert.deepEqual((await a1.get(`${base()}/tasks/${id}`)).body, saved.body);
        assert.equal((await a1.post(`${base()}/tasks/${id}/submit`)).status, 200);
      }
    });
    assert.deepEqual(dealt.sort((a, b) => a - b), [ids.tabClass, ids.tabValue, ids.llm, ids.multi, ids.audio].sort((a, b) => a - b));
    const afterwards = await Promise.all(Object.values(ids).map(async (id) => (await owner.get(`/api/samples/${id}`)).body));
    assert.deepEqual(afterwards, before, 'the samples themselves are unchanged');

    const report = await owner.get(`${base()}/report`);
    assert.equal(report.status, 200);
    const mine = report.body.annotators.find((r: { user_id: number }) => r.user_id === a1.id);
    assert.equal(mine.samples, 5);
    assert.equal(mine.class_accuracy, 1);
    assert.equal(mine.value_mae, 3);
    assert.equal(mine.preference_accuracy, 1);
    assert.equal(mine.rating_mae, 2);
    assert.ok(Math.abs(mine.label_jaccard - 1 / 3) < 1e-12, String(mine.label_jaccard));
    assert.ok(Math.abs(mine.transcript_wer - 1 / 6) < 1e-12, String(mine.transcript_wer));
    const csv = (await owner.get(`${base()}/report/export`)).raw.toString().split('\n');
    assert.match(csv[0], /,label_jaccard,value_mae,preference_accuracy,rating_mae,transcript_wer,reviews_decided,rejection_rate,rework_rate,class_alpha,/);
    assert.match(csv[1], /,0\.333333,3,1,2,0\.166667,0,,,/);
  });
});
