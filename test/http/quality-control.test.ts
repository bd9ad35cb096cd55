/**
 * Labelling quality control over HTTP (issue 29): ground truth mixed invisibly into annotators' tasks, overlap with
 * each version kept apart, agreement, the disagreement queue, consensus decisions written through the annotation
 * log, analytics with CSV, and who may see what.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { withDraws } from '../helpers/random-draws.js';

type User = Client & { id: number; email: string };
const box = (class_id: number, x: number, y: number, w: number, h: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width: w, height: h } });

describe('quality control (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let reviewer: User;
  let viewer: User;
  const annotators: User[] = [];
  let projectId: number;
  let c1: number;
  let c2: number;
  const base = () => `/api/projects/${projectId}/quality-control`;

  async function approvedImage(shapes: ReturnType<typeof box>[]): Promise<number> {
    const id = await insertImageRow(t, projectId);
    for (const s of shapes) assert.equal((await owner.post(`/api/images/${id}/annotations`, s)).status, 201);
    const review = await owner.post(`/api/projects/${projectId}/reviews`, { image_id: id });
    assert.equal((await owner.post(`/api/reviews/${review.body.id}/decide`, { decision: 'approve' })).status, 200);
    return id;
  }

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    reviewer = await t.user();
    viewer = await t.user();
    for (let i = 0; i < 3; i++) annotators.push(await t.user());
    projectId = (await owner.post('/api/projects', { name: 'qc' })).body.id;
    for (const u of annotators) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    c1 = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    c2 = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'bus' })).body.id;
  });
  after(() => t.close());

  it('settings: admins only, bounded', async () => {
    assert.equal((await annotators[0].get(`${base()}/settings`)).status, 403);
    assert.equal((await reviewer.put(`${base()}/settings`, { overlap: 3 })).status, 403);
    const bad = await owner.put(`${base()}/settings`, { overlap: 6 });
    assert.equal(bad.status, 422);
    assert.deepEqual((await owner.get(`${base()}/settings`)).body, { overlap: 1, ground_truth_share: 0, agreement_threshold: 0.7, annotators_see_scores: false, ground_truth_in_training: false });
    assert.equal((await annotators[0].post(`${base()}/tasks/next`)).status, 409);
  });

  let g1: number;
  let g2: number;
  let p1: number;
  let p2: number;
  let p3: number;

  it('ground truth needs approved images of the project and freezes their labels', async () => {
    g1 = await approvedImage([box(c1, 10, 10, 50, 50), box(c2, 100, 100, 40, 40)]);
    g2 = await approvedImage([box(c1, 200, 50, 60, 60)]);
    p1 = await insertImageRow(t, projectId);
    p2 = await insertImageRow(t, projectId);
    p3 = await insertImageRow(t, projectId);
    const refused = await owner.post(`${base()}/ground-truth`, { image_ids: [g1, p1] });
    assert.equal(refused.status, 422);
    assert.match(refused.body.detail[0].msg, /unreviewed/);
    assert.deepEqual((await owner.get(`${base()}/ground-truth`)).body, []);
    assert.equal((await annotators[0].post(`${base()}/ground-truth`, { image_ids: [g1] })).status, 403);
    const marked = await owner.post(`${base()}/ground-truth`, { image_ids: [g1, g2] });
    assert.equal(marked.status, 201);
    assert.deepEqual(marked.body.map((g: { image_id: number; shapes: unknown[] }) => [g.image_id, g.shapes.length]), [[g1, 2], [g2, 1]]);
  });

  it('hidden ground-truth images are indistinguishable in every answer an annotator gets (ids, order, fields)', async () => {
    await owner.put(`${base()}/settings`, { overlap: 3, ground_truth_share: 0.5 });
    await owner.patch(`/api/projects/${projectId}`, { assigned_only: true });
    const ann = annotators[0];
    // Draws alternate: pool, ground truth, pool, ground truth, pool (a draw below the share deals ground truth).
    const dealt: any[] = [];
    const answers: { gt: boolean; body: any; status: number; kind: string }[] = [];
    const record = (kind: string, res: { status: number; body: any }, imageId: number) => answers.push({ kind, status: res.status, body: res.body, gt: imageId === g1 || imageId === g2 });
    await withDraws([0.9, 0.1], async () => {
      for (;;) {
        const next = await ann.post(`${base()}/tasks/next`);
        assert.equal(next.status, 200);
        if (next.body.task === null) break;
        const task = next.body.task;
        dealt.push(task);
        record('next', next, task.image_id);
        record('get', await ann.get(`${base()}/tasks/${task.image_id}`), task.image_id);
        record('bad class', await ann.put(`${base()}/tasks/${task.image_id}`, { shapes: [box(999_999, 1, 1, 5, 5)] }), task.image_id);
        record('lock', await ann.get(`/api/images/${task.image_id}/lock`), task.image_id);
        record('save', await ann.put(`${base()}/tasks/${task.image_id}`, { shapes: [] }), task.image_id);
        record('submit', await ann.post(`${base()}/tasks/${task.image_id}/submit`), task.image_id);
        record('submit again', await ann.post(`${base()}/tasks/${task.image_id}/submit`), task.image_id);
      }
    });
    const kinds = dealt.map((d) => d.image_id === g1 || d.image_id === g2);
    assert.deepEqual(kinds, [false, true, false, true, false], 'both ground-truth images were dealt between pool images');
    // Fields: the same keys in the same order, the same types, for every kind of answer.
    const shape = (v: unknown): unknown => (Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : v === null ? 'null' : typeof v);
    for (const kind of new Set(answers.map((a) => a.kind))) {
      const of = answers.filter((a) => a.kind === kind);
      const forms = new Set(of.map((a) => JSON.stringify([a.status, shape(a.body)])));
      assert.equal(forms.size, 1, `${kind}: ${[...forms].join(' vs ')}`);
      // Messages differ only by the image id they name.
      const details = new Set(of.filter((a) => a.body?.detail).map((a) => JSON.stringify(a.body.detail).replace(/image \d+/gi, 'image N').replace(/"loc":\[[^\]]*\]/g, '')));
      assert.ok(details.size <= 1, `${kind}: ${[...details].join(' vs ')}`);
    }
    // A fresh ground-truth task does not carry the reviewed labels: it starts empty, like any other.
    for (const d of dealt) assert.deepEqual(d.shapes, []);
    // Order and ids: the list is the dealing order, ids from one sequence.
    const listed = await ann.get(`${base()}/tasks`);
    assert.deepEqual(listed.body.map((x: { image_id: number }) => x.image_id), dealt.map((d) => d.image_id));
    const ids = listed.body.map((x: { id: number }) => x.id);
    assert.deepEqual(ids, [...ids].sort((a: number, b: number) => a - b));
    // The project-wide answers an annotator might probe are closed to them alike.
    for (const path of ['ground-truth', 'agreement', 'annotators', 'settings']) assert.equal((await ann.get(`${base()}/${path}`)).status, 403);
    await owner.patch(`/api/projects/${projectId}`, { assigned_only: false });
  });

  it('scores annotators on ground truth, measures agreement, queues disagreements and merges by weight', async () => {
    const [a1, a2, a3] = annotators;
    // Annotator 1 (all done above) submitted empty versions; set the others' work by image.
    const versions: Record<number, Record<number, ReturnType<typeof box>[]>> = {
      [a2.id]: { [g1]: [box(c1, 10, 10, 50, 50)], [g2]: [box(c1, 200, 50, 60, 60)], [p1]: [box(c1, 300, 300, 40, 40)], [p2]: [box(c1, 10, 10, 50, 50)], [p3]: [] },
      [a3.id]: { [g1]: [box(c1, 10, 10, 50, 50), box(c1, 100, 100, 40, 40)], [g2]: [box(c1, 200, 50, 60, 60)], [p1]: [box(c1, 300, 300, 40, 40)], [p2]: [box(c1, 10, 10, 50, 50)], [p3]: [] },
    };
    for (const u of [a2, a3]) {
      await withDraws([0], async () => {
        for (;;) {
          const next = await u.post(`${base()}/tasks/next`);
          if (next.body.task === null) break;
          const imageId = next.body.task.image_id;
          assert.equal((await u.put(`${base()}/tasks/${imageId}`, { shapes: versions[u.id][imageId] })).status, 200);
          assert.equal((await u.post(`${base()}/tasks/${imageId}/submit`)).status, 200);
        }
      });
    }
    // Another annotator's version is not theirs to read.
    assert.equal((await a2.get(`${base()}/tasks/${p1}`)).status, 200);
    assert.equal((await viewer.get(`${base()}/tasks/${p1}`)).status, 403);

    const analytics = await owner.get(`${base()}/annotators`);
    assert.equal(analytics.status, 200);
    const of = (u: User) => analytics.body.find((r: { user_id: number }) => r.user_id === u.id);
    // A row per annotator who labelled; the owner, who submitted and approved the reference labels themselves, is none.
    assert.deepEqual(analytics.body.map((r: { user_id: number }) => r.user_id), annotators.map((u) => u.id).sort((x, y) => x - y));
    // a1 drew nothing on 3 reference objects: F1 0. a2 missed one of three: TP 2, FN 1 → 4/5. a3 gave the bus the
    // car's class: car TP 2, FP 1; bus FN 1 → 4/6; its pairs agree in class 2 of 3.
    assert.deepEqual([of(a1).ground_truth.f1, of(a1).ground_truth.images], [0, 2]);
    assert.equal(of(a2).ground_truth.f1, 0.8);
    assert.equal(of(a2).ground_truth.recall, 2 / 3);
    assert.ok(Math.abs(of(a3).ground_truth.f1 - 2 / 3) < 1e-12);
    assert.ok(Math.abs(of(a3).ground_truth.class_accuracy - 2 / 3) < 1e-12);
    assert.deepEqual([of(a2).tasks_submitted, of(a2).objects], [5, 4]);
    assert.equal(of(a2).over_time.length, 1);

    const agreement = await owner.get(`${base()}/agreement`);
    // p1 and p2: a1 empty, a2 and a3 agree → pairwise F1 (0 + 0 + 1)/3 on each; p3: all three empty, F1 1.
    assert.deepEqual(agreement.body.map((r: { image_id: number; annotators: number[]; f1: number; below_threshold: boolean }) => [r.image_id, r.annotators.length, Number(r.f1.toFixed(12)), r.below_threshold]),
      [[p1, 3, Number((1 / 3).toFixed(12)), true], [p2, 3, Number((1 / 3).toFixed(12)), true], [p3, 3, 1, false]]);
    assert.deepEqual((await owner.get(`${base()}/agreement?below_threshold=false`)).body.map((r: { image_id: number }) => r.image_id), [p3]);
    assert.equal((await reviewer.get(`${base()}/agreement`)).status, 403);
    const queue = await reviewer.get(`${base()}/disagreements`);
    assert.equal(queue.status, 200);
    assert.equal(queue.body.length, 2);
    const entry = queue.body.find((q: { image_id: number }) => q.image_id === p2);
    assert.equal(entry.versions.length, 3);
    assert.deepEqual(entry.proposal, [box(c1, 10, 10, 50, 50)]);
    assert.equal((await annotators[0].get(`${base()}/disagreements`)).status, 403);

    // The merge writes the accepted labels through the annotations (revisions kept) and leaves the queue.
    const decided = await reviewer.post(`${base()}/consensus`, { image_id: p2, method: 'merge' });
    assert.equal(decided.status, 201, JSON.stringify(decided.body));
    assert.deepEqual(decided.body.after, [box(c1, 10, 10, 50, 50)]);
    assert.deepEqual(decided.body.before, []);
    assert.equal(decided.body.weights[String(a2.id)], 0.8);
    const accepted = await owner.get(`/api/images/${p2}/annotations`);
    const list = accepted.body;
    assert.deepEqual(list.map((a: { class_id: number; geometry: unknown }) => [a.class_id, a.geometry]), [[c1, { x: 10, y: 10, width: 50, height: 50 }]]);
    const revisions = await owner.get(`/api/annotations/${list[0].id}/revisions`);
    assert.equal(revisions.body[0].user_id, reviewer.id);
    assert.deepEqual((await reviewer.get(`${base()}/disagreements`)).body.map((q: { image_id: number }) => q.image_id), [p1]);
    // Picking a version replaces what was accepted, and the record says what it replaced.
    const picked = await reviewer.post(`${base()}/consensus`, { image_id: p2, method: 'pick', user_id: a1.id });
    assert.equal(picked.status, 201);
    assert.deepEqual([picked.body.before.length, picked.body.after.length], [1, 0]);
    assert.equal(((await owner.get(`/api/images/${p2}/annotations`)).body).length, 0);
    assert.equal((await reviewer.get(`${base()}/decisions?image_id=${p2}`)).body.length, 2);
    // Refusals change nothing.
    assert.equal((await reviewer.post(`${base()}/consensus`, { image_id: g1 })).status, 422);
    assert.equal((await reviewer.post(`${base()}/consensus`, { image_id: p1, method: 'pick', user_id: viewer.id })).status, 422);
    // The second shape lies outside the image: the first, already written, is taken back.
    const outside = await reviewer.post(`${base()}/consensus`, { image_id: p1, method: 'edit', shapes: [box(c1, 1, 1, 20, 20), box(c1, 700, 10, 20, 20)] });
    assert.equal(outside.status, 422);
    assert.equal(((await owner.get(`/api/images/${p1}/annotations`)).body).length, 0);
    assert.equal((await annotators[0].post(`${base()}/consensus`, { image_id: p1 })).status, 403);
    assert.equal((await reviewer.get(`${base()}/decisions?image_id=${p1}`)).body.length, 0);

    const csv = await owner.get(`${base()}/annotators/export`);
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /text\/csv/);
    const lines = csv.raw.toString().trim().split('\n');
    assert.match(lines[0], /^user_id,email,tasks_submitted,active_seconds/);
    assert.ok(lines.some((l) => l.startsWith(`${a2.id},${a2.email},5,`) && l.includes(',0.8,')));
    assert.equal((await reviewer.get(`${base()}/annotators/export`)).status, 403);
  });

  it('versions leave ground-truth images out unless the lead lets them train', async () => {
    const sources = async (name: string) => {
      const version = await owner.post(`/api/projects/${projectId}/versions`, { name });
      assert.equal(version.status, 201, JSON.stringify(version.body));
      const rows = await t.versa.deps.db.selectFrom('version_sources').select('source_image_id').where('version_id', '=', version.body.id).execute();
      return new Set(rows.map((r) => r.source_image_id));
    };
    const without = await sources('without ground truth');
    assert.deepEqual([without.has(g1), without.has(g2), without.has(p1)], [false, false, true]);
    await owner.put(`${base()}/settings`, { ground_truth_in_training: true });
    const withGt = await sources('with ground truth');
    assert.deepEqual([withGt.has(g1), withGt.has(g2), withGt.has(p1)], [true, true, true]);
  });

  it('annotators see their own scores only when the project allows it', async () => {
    const a2 = annotators[1];
    assert.deepEqual((await a2.get(`${base()}/my-scores`)).body, { visible: false, scores: null });
    await owner.put(`${base()}/settings`, { annotators_see_scores: true });
    const mine = await a2.get(`${base()}/my-scores`);
    assert.equal(mine.body.visible, true);
    assert.equal(mine.body.scores.user_id, a2.id);
    assert.equal(mine.body.scores.ground_truth.f1, 0.8);
  });
});
