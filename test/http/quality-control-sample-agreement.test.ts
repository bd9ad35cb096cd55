/**
 * Agreement among annotators on sample values (issue 29), end to end: two annotators answer the same overlapped
 * samples (tabular numbers, LLM ratings and preferences, multi-label classes, transcripts) through their tasks, and the
 * samples report and its CSV give Krippendorff's alpha per kind of value, per project and per annotator (figures
 * worked by hand in the comments; the unit tests hold the definitions).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number; email: string };

describe('quality-control sample agreement on values (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let a1: User;
  let a2: User;
  let projectId: number;
  const answers = new Map<number, [object, object]>();
  const base = () => `/api/projects/${projectId}/quality-control/samples`;

  before(async () => {
    t = await startTestApp();
    [owner, a1, a2] = [await t.user(), await t.user(), await t.user()];
    projectId = (await owner.post('/api/projects', { name: 'qc agreement', project_type: 'classification', multi_label: true })).body.id;
    for (const u of [a1, a2]) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    for (const name of ['x', 'y', 'z']) await owner.post(`/api/projects/${projectId}/classes`, { name });
    const created = await owner.post(`/api/projects/${projectId}/samples`, { items: [
      { modality: 'tabular', data: { row: { rooms: 1 } } },
      { modality: 'tabular', data: { row: { rooms: 2 } } },
      { modality: 'llm', data: { prompt: 'p1', chosen: 'a', rejected: 'b' } },
      { modality: 'llm', data: { prompt: 'p2', chosen: 'a', rejected: 'b' } },
      { modality: 'text', data: { text: 'one' } },
      { modality: 'text', data: { text: 'two' } },
    ] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const [n1, n2, l1, l2, m1, m2] = created.body.items.map((s: { id: number }) => s.id);
    // Numbers [1,2] [3,3] → 8/11 (interval). Ratings [4,4] [9,9] → 1. Preferences [chosen, tie] [rejected, rejected]:
    // n 4, observed 2, expected 4² − (1 + 1 + 4) = 10 → 1 − 3·2/10 = 2/5. Class sets [{x,y},{x}] [{z},{z}]: δ ½,
    // observed 1, expected 2·(½ + 2 + 2) = 9 → 2/3.
    answers.set(n1, [{ value: 1 }, { value: 2 }]);
    answers.set(n2, [{ value: 3 }, { value: 3 }]);
    answers.set(l1, [{ value: { rating: 4, preference: 'chosen' } }, { value: { rating: 4, preference: 'tie' } }]);
    answers.set(l2, [{ value: { rating: 9, preference: 'rejected' } }, { value: { rating: 9, preference: 'rejected' } }]);
    answers.set(m1, [{ label: ['x', 'y'] }, { label: ['x'] }]);
    answers.set(m2, [{ label: ['z'] }, { label: ['z'] }]);
    await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0 });
  });
  after(() => t.close());

  it('gives alpha per kind of value, per project and per annotator, in the report and its CSV', async () => {
    for (const [i, u] of [a1, a2].entries()) {
      for (;;) {
        const task = (await u.post(`${base()}/tasks/next`)).body.task;
        if (task === null) break;
        const saved = await u.put(`${base()}/tasks/${task.sample_id}`, answers.get(task.sample_id)![i]);
        assert.equal(saved.status, 200, JSON.stringify(saved.body));
        assert.equal((await u.post(`${base()}/tasks/${task.sample_id}/submit`)).status, 200);
      }
    }
    const report = await owner.get(`${base()}/report`);
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const close = (actual: number | null, expected: number, what: string) => assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
    close(report.body.value_alpha, 8 / 11, 'value_alpha');
    close(report.body.rating_alpha, 1, 'rating_alpha');
    close(report.body.preference_alpha, 2 / 5, 'preference_alpha');
    close(report.body.label_set_alpha, 2 / 3, 'label_set_alpha');
    assert.equal(report.body.transcript_agreement, null);
    for (const u of [a1, a2]) {
      const row = report.body.annotators.find((r: { user_id: number }) => r.user_id === u.id);
      close(row.value_alpha, 8 / 11, 'annotator value_alpha'); // two annotators: each one's pairs are all the pairs
      close(row.preference_alpha, 2 / 5, 'annotator preference_alpha');
    }
    const csv = (await owner.get(`${base()}/report/export`)).raw.toString().trim().split('\n');
    assert.match(csv[0], /,class_alpha,label_set_alpha,value_alpha,rating_alpha,preference_alpha,transcript_agreement$/);
    assert.equal(csv.length, 3);
    for (const line of csv.slice(1)) assert.match(line, /,0\.666667,0\.727273,1,0\.4,$/);
  });
});
