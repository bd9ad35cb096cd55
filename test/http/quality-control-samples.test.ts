/**
 * Quality control of samples over HTTP (issue 29): ground-truth samples (class and text spans) dealt among the overlap
 * pool without being told apart, each answer kept apart, and the report: accuracy and token-level F1 against the
 * truth, Krippendorff's alpha among annotators; role rules as for images.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { withDraws } from '../helpers/random-draws.js';

type User = Client & { id: number; email: string };

describe('quality control of samples (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let a1: User;
  let a2: User;
  let viewer: User;
  let projectId: number;
  let g: number;
  let p1: number;
  let p2: number;
  const base = () => `/api/projects/${projectId}/quality-control/samples`;

  before(async () => {
    t = await startTestApp();
    [owner, a1, a2, viewer] = [await t.user(), await t.user(), await t.user(), await t.user()];
    projectId = (await owner.post('/api/projects', { name: 'qc samples', project_type: 'classification' })).body.id;
    for (const u of [a1, a2]) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    for (const name of ['city', 'x', 'y', 'z']) await owner.post(`/api/projects/${projectId}/classes`, { name });
    const created = await owner.post(`/api/projects/${projectId}/samples`, { items: [
      { modality: 'text', data: { text: 'New York is big' }, label: 'city', spans: [{ start: 0, end: 8, label: 'LOC' }] },
      { modality: 'text', data: { text: 'first pool text' } },
      { modality: 'text', data: { text: 'second pool text' } },
    ] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    [g, p1, p2] = created.body.items.map((s: { id: number }) => s.id);
  });
  after(() => t.close());

  it('marks only approved samples of the project as ground truth, for project admins', async () => {
    const refused = await owner.post(`${base()}/ground-truth`, { sample_ids: [g] });
    assert.equal(refused.status, 422);
    assert.match(refused.body.detail[0].msg, /unreviewed/);
    assert.equal((await owner.post(`/api/samples/${g}/submit`)).status, 200);
    assert.equal((await owner.post(`/api/samples/${g}/review`, { decision: 'approve' })).status, 200);
    assert.equal((await a1.post(`${base()}/ground-truth`, { sample_ids: [g] })).status, 403);
    const marked = await owner.post(`${base()}/ground-truth`, { sample_ids: [g] });
    assert.equal(marked.status, 201);
    assert.deepEqual(marked.body.map((m: { sample_id: number; label: string; spans: unknown }) => [m.sample_id, m.label, m.spans]), [[g, 'city', [{ start: 0, end: 8, label: 'LOC' }]]]);
    assert.equal((await a1.get(`${base()}/ground-truth`)).status, 403);
  });

  it('shows a ground-truth sample below project admin as an untouched one: no class, spans, review or history', async () => {
    const strip = (x: any) => ({ ...x, id: 0, data: null, created_at: null, updated_at: null });
    const [truth, pool] = [await a1.get(`/api/samples/${g}`), await a1.get(`/api/samples/${p1}`)];
    assert.deepEqual(strip(truth.body), strip(pool.body));
    assert.deepEqual([truth.body.label, truth.body.spans, truth.body.review_state], [null, null, 'unreviewed']);
    assert.deepEqual((await a1.get(`/api/samples/${g}/revisions`)).body, []);
    const ids = async (u: User, q: string) => (await u.get(`/api/projects/${projectId}/samples?${q}`)).body.map((x: { id: number }) => x.id);
    assert.deepEqual(await ids(a1, 'review_state=approved'), []);
    assert.deepEqual(await ids(a1, 'label=city'), []);
    assert.deepEqual(await ids(a1, 'review_state=unreviewed'), [g, p1, p2]);
    const listed = (await a1.get(`/api/projects/${projectId}/samples`)).body;
    assert.deepEqual(strip(listed[0]), strip(listed[1]));
    // Project admins still see it as it is.
    assert.deepEqual([(await owner.get(`/api/samples/${g}`)).body.review_state, await ids(owner, 'label=city')], ['approved', [g]]);
  });

  it('labelling a sample straight, or submitting it, answers as for a pool sample and changes neither', async () => {
    // Below project admin, samples with hidden ground truth are labelled through quality-control tasks only.
    for (const attempt of [(id: number) => a1.patch(`/api/samples/${id}`, { label: 'x' }), (id: number) => a1.post(`/api/samples/${id}/submit`)]) {
      const [a, b] = [await attempt(g), await attempt(p1)];
      assert.deepEqual([a.status, a.body.detail], [b.status, b.body.detail]);
      assert.equal(a.status, 403);
      assert.match(a.body.detail, /quality-control tasks/);
    }
    const [truth, pool] = [(await owner.get(`/api/samples/${g}`)).body, (await owner.get(`/api/samples/${p1}`)).body];
    assert.deepEqual([truth.label, truth.review_state, pool.label, pool.review_state], ['city', 'approved', null, 'unreviewed']);
  });

  it('deals ground truth among the pool alike, keeps each answer apart, and reports scores and agreement', async () => {
    assert.equal((await a1.post(`${base()}/tasks/next`)).status, 409, 'quality control is off');
    await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0.5 });
    assert.equal((await viewer.post(`${base()}/tasks/next`)).status, 403);
    const answers: Record<number, { label: string; spans?: unknown }> = {
      [g]: { label: 'city', spans: [{ start: 0, end: 3, label: 'LOC' }] },
      [p1]: { label: 'x' },
      [p2]: { label: 'y' },
    };
    const dealt: any[] = [];
    // a1: ground truth first (a draw under the share), then the pool; a2: the pool only.
    for (const [u, draws, mine] of [[a1, [0.1, 0.9], answers], [a2, [0.9], { ...answers, [p2]: { label: 'z' } }]] as const) {
      await withDraws([...draws], async () => {
        for (;;) {
          const next = await u.post(`${base()}/tasks/next`);
          assert.equal(next.status, 200, JSON.stringify(next.body));
          if (next.body.task === null) break;
          if (u === a1) dealt.push(next.body.task);
          const id = next.body.task.sample_id;
          assert.equal((await u.put(`${base()}/tasks/${id}`, mine[id])).status, 200);
          assert.equal((await u.post(`${base()}/tasks/${id}/submit`)).status, 200);
          assert.equal((await u.put(`${base()}/tasks/${id}`, { label: 'x' })).status, 409);
        }
      });
    }
    assert.deepEqual(dealt.map((d) => d.sample_id).sort(), [g, p1, p2].sort());
    assert.equal(dealt[0].sample_id, g);
    // A ground-truth task starts as empty as any other, with the same fields.
    const form = (d: any) => Object.entries(d).map(([k, v]) => [k, v === null ? 'null' : typeof v]);
    for (const d of dealt) assert.deepEqual(form(d), form(dealt[0]));
    assert.deepEqual([dealt[0].label, dealt[0].spans], [null, null]);
    assert.equal((await a2.get(`${base()}/tasks/${g}`)).status, 404, 'a2 was never dealt the ground truth');

    assert.equal((await a1.get(`${base()}/report`)).status, 403);
    const report = await owner.get(`${base()}/report`);
    assert.equal(report.status, 200);
    // a1 on the truth: class city = city → 1; spans LOC O O O vs LOC LOC O O → TP 1, FN 1 → F1 2/3.
    const first = report.body.annotators.find((r: { user_id: number }) => r.user_id === a1.id);
    assert.deepEqual([first.samples, first.class_accuracy, first.span_counts], [1, 1, { tp: 1, fp: 0, fn: 1 }]);
    assert.ok(Math.abs(first.span_f1 - 2 / 3) < 1e-12);
    assert.deepEqual(report.body.annotators.find((r: { user_id: number }) => r.user_id === a2.id).samples, 0);
    // Classes p1 (x, x), p2 (y, z): o_xx = 2, o_yz = o_zy = 1; n_x = 2, n_y = n_z = 1, n = 4; expected Σ n_v·n_k
    // (v ≠ k) = 10 → alpha = 1 − 3·2/10 = 0.4.
    assert.ok(Math.abs(report.body.class_alpha - 0.4) < 1e-12, String(report.body.class_alpha));
    assert.deepEqual(report.body.samples.map((r: { sample_id: number; class_unanimous: boolean }) => [r.sample_id, r.class_unanimous]), [[p1, true], [p2, false]]);
    assert.equal(report.body.span_alpha, null);

    // The same scores as CSV, a row per annotator with their email, and each one's agreement with the other: both
    // answered p1 and p2, so each one's pairs are all the pairs and their class alpha the project's 0.4.
    const csv = await owner.get(`${base()}/report/export`);
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /text\/csv/);
    assert.match(String(csv.headers['content-disposition']), new RegExp(`sample-annotators-${projectId}\\.csv`));
    assert.deepEqual(csv.raw.toString().split('\n'), [
      'user_id,email,samples,class_accuracy,span_f1,span_tp,span_fp,span_fn,segment_f1,segment_tp,segment_fp,segment_fn,label_jaccard,value_mae,preference_accuracy,rating_mae,transcript_wer,'
        + 'reviews_decided,rejection_rate,rework_rate,class_alpha,label_set_alpha,value_alpha,rating_alpha,preference_alpha,transcript_agreement',
      `${a1.id},${a1.email},1,1,0.666667,1,0,1,,0,0,0,,,,,,0,,,0.4,,,,,`,
      `${a2.id},${a2.email},0,,,0,0,0,,0,0,0,,,,,,0,,,0.4,,,,,`,
      '',
    ]);
    assert.equal((await a1.get(`${base()}/report/export`)).status, 403);
  });

  it('scores the time segments of audio clips: ground truth frozen, answers as segments, F1 per class', async () => {
    const clipProject = (await owner.post('/api/projects', { name: 'qc clips', project_type: 'classification' })).body.id;
    await owner.post(`/api/projects/${clipProject}/members`, { user_id: a1.id, role: 'annotator' });
    const now = new Date().toISOString();
    const clip = (n: number, spans: unknown, review_state: 'approved' | 'unreviewed') => t.versa.deps.db.insertInto('samples').values({
      project_id: clipProject, modality: 'audio', split: null, data: JSON.stringify({ file: `clip-${n}.wav`, duration_s: 60 }), label: null, labels: null,
      spans: spans === null ? null : JSON.stringify(spans), value: null, metadata: null, blob_key: null, sha256: null, review_state, assignee_id: null,
      review_comment: null, reviewed_by: null, reviewed_at: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const truth = [{ start_s: 0, end_s: 10, label: 'speech' }, { start_s: 40, end_s: 50, label: 'music' }];
    const g2 = (await clip(1, truth, 'approved')).id;
    await clip(2, null, 'unreviewed');
    const clipBase = `/api/projects/${clipProject}/quality-control/samples`;
    const marked = await owner.post(`${clipBase}/ground-truth`, { sample_ids: [g2] });
    assert.deepEqual(marked.body[0].spans, truth, 'the segments are frozen as the reference');
    await owner.put(`/api/projects/${clipProject}/quality-control/settings`, { ground_truth_share: 0.5 });
    const task = await withDraws([0.1], () => a1.post(`${clipBase}/tasks/next`));
    assert.equal(task.body.task.sample_id, g2);
    // speech [0, 8): IoU 0.8, a match; music [45, 60): IoU 0.25, no match; a segment that ends before it starts is 422.
    assert.equal((await a1.put(`${clipBase}/tasks/${g2}`, { spans: [{ start_s: 5, end_s: 2, label: 'speech' }] })).status, 422);
    const saved = await a1.put(`${clipBase}/tasks/${g2}`, { spans: [{ start_s: 0, end_s: 8, label: 'speech' }, { start_s: 45, end_s: 60, label: 'music' }] });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal((await a1.post(`${clipBase}/tasks/${g2}/submit`)).status, 200);
    const mine = (await owner.get(`${clipBase}/report`)).body.annotators[0];
    // TP 1 (speech), FP 1 and FN 1 (music) → F1 2 / 4 = 0.5.
    assert.deepEqual([mine.segment_counts, mine.segment_f1, mine.span_f1], [{ tp: 1, fp: 1, fn: 1 }, 0.5, null]);
    assert.deepEqual(mine.segment_per_class.map((c: { label: string; f1: number }) => [c.label, c.f1]), [['music', 0], ['speech', 1]]);
  });
});
