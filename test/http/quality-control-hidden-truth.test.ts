/**
 * Hidden ground truth over every annotator-visible route (issue 29): an annotator asking about a ground-truth image
 * (approved, with reviewed labels, revisions and a review) gets the same answer as for an untouched image of the pool:
 * same fields and values (but the image's own id, name and hash), same listing order and filter results; the reviewed
 * labels, their history and their review are nowhere. Project admins, who mark ground truth, still see it all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { withDraws } from '../helpers/random-draws.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number };
const box = (class_id: number, x: number, y: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width: 40, height: 40 } });

describe('hidden ground truth is indistinguishable for annotators (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let annotator: User;
  let reviewer: User;
  let projectId: number;
  let classId: number;
  let gt: number;
  let pool: number;
  const gtAnnotations: number[] = [];

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    annotator = await t.user();
    reviewer = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'hidden truth' })).body.id;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' });
    classId = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    // Ground truth first, then an untouched image: ids in one sequence, so order says nothing either.
    gt = await insertImageRow(t, projectId);
    pool = await insertImageRow(t, projectId);
    for (const s of [box(classId, 10, 10), box(classId, 100, 100)]) gtAnnotations.push((await owner.post(`/api/images/${gt}/annotations`, s)).body.id);
    await owner.put(`/api/annotations/${gtAnnotations[1]}`, box(classId, 120, 100));
    const review = await owner.post(`/api/projects/${projectId}/reviews`, { image_id: gt });
    assert.equal((await owner.post(`/api/reviews/${review.body.id}/decide`, { decision: 'approve' })).status, 200);
    assert.equal((await owner.post(`/api/projects/${projectId}/quality-control/ground-truth`, { image_ids: [gt] })).status, 201);
    assert.equal((await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0.5 })).status, 200);
  });
  after(() => t.close());

  /** The answer with what is the image's own (id, stored name, hash, upload time) replaced by placeholders. */
  async function normalised(imageId: number, body: unknown): Promise<unknown> {
    const row = await t.versa.deps.db.selectFrom('images').select(['filename', 'original_name', 'sha256', 'created_at']).where('id', '=', imageId).executeTakeFirstOrThrow();
    const walk = (v: unknown, key?: string): unknown => {
      if (Array.isArray(v)) return v.map((x) => walk(x));
      if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
      if (typeof v === 'number' && v === imageId && (key === 'id' || key === 'image_id')) return '<image id>';
      if (typeof v === 'string') {
        return v.replaceAll(row.filename, '<file>').replaceAll(row.original_name, '<name>').replaceAll(row.sha256, '<sha>').replaceAll(row.created_at, '<time>')
          .replace(new RegExp(`/images/${imageId}(?=/|$)`), '/images/<image id>');
      }
      return v;
    };
    return walk(body);
  }

  /** Asks `route(image)` of both images as the user; the answers must match once normalised. */
  async function same(user: User, label: string, route: (imageId: number) => string): Promise<{ status: number; body: any }> {
    const [a, b] = [await user.get(route(gt)), await user.get(route(pool))];
    assert.equal(a.status, b.status, `${label}: status ${a.status} vs ${b.status}`);
    assert.deepEqual(await normalised(gt, a.body), await normalised(pool, b.body), `${label}: the ground-truth image's answer differs`);
    return a;
  }

  it('the image, its labels, history and reviews look untouched', async () => {
    const image = await same(annotator, 'image', (id) => `/api/images/${id}`);
    assert.equal(image.status, 200);
    assert.equal(image.body.review_state, 'unreviewed');
    assert.equal(image.body.annotation_count, 0);
    assert.deepEqual((await same(annotator, 'annotations', (id) => `/api/images/${id}/annotations`)).body, []);
    assert.deepEqual((await same(annotator, 'image revisions', (id) => `/api/images/${id}/revisions`)).body, []);
    assert.equal((await same(annotator, 'lock', (id) => `/api/images/${id}/lock`)).status, 200);
    assert.equal((await same(annotator, 'reviews of the image', (id) => `/api/projects/${projectId}/reviews?image_id=${id}`)).status, 200);
    assert.deepEqual((await annotator.get(`/api/projects/${projectId}/reviews`)).body, []);
    // A reviewer is below project admin: the same veil.
    assert.equal((await same(reviewer, 'image (reviewer)', (id) => `/api/images/${id}`)).body.review_state, 'unreviewed');
  });

  it('the reviewed labels and their history do not exist for the annotator (404 like a missing one)', async () => {
    const missing = 2_000_000_000;
    for (const id of gtAnnotations) {
      for (const path of [`/api/annotations/${id}`, `/api/annotations/${id}/revisions`]) {
        const [a, b] = [await annotator.get(path), await annotator.get(path.replace(String(id), String(missing)))];
        assert.deepEqual([a.status, a.body.detail.replace(String(id), 'N')], [b.status, b.body.detail.replace(String(missing), 'N')], path);
      }
      assert.equal((await annotator.put(`/api/annotations/${id}`, box(classId, 1, 1))).status, 404);
      assert.equal((await annotator.delete(`/api/annotations/${id}`)).status, 404);
      assert.equal((await annotator.post(`/api/annotations/${id}/revert`, { revision_id: 1 })).status, 404);
    }
    assert.equal((await owner.get(`/api/images/${gt}/annotations`)).body.length, 2, 'nothing was changed');
  });

  it('listings show it in its place, and filters treat it as unreviewed and unlabelled', async () => {
    const list = await annotator.get(`/api/projects/${projectId}/images`);
    assert.deepEqual(list.body.map((i: { id: number }) => i.id), [gt, pool]);
    assert.deepEqual(await normalised(gt, list.body[0]), await normalised(pool, list.body[1]));
    const filters = ['review_state=unreviewed', 'review_state=approved', 'annotated=true', 'annotated=false', `class_id=${classId}`, 'attribute=occluded:true'];
    for (const filter of filters) {
      const url = (id: number) => `/api/projects/${projectId}/images?ids=${id}&${filter}`;
      await same(annotator, filter, url);
      assert.equal((await annotator.get(url(gt))).headers['x-total-count'], (await annotator.get(url(pool))).headers['x-total-count'], filter);
    }
    const unreviewed = await annotator.get(`/api/projects/${projectId}/images?review_state=unreviewed`);
    assert.deepEqual([unreviewed.headers['x-total-count'], unreviewed.body.map((i: { id: number }) => i.id)], ['2', [gt, pool]]);
    const ranked = await annotator.get(`/api/projects/${projectId}/next-to-label?strategy=random&seed=7`);
    assert.equal(ranked.status, 200);
    assert.equal(ranked.body.unlabelled, 2);
    const entries = ranked.body.items.map((r: { image: { id: number } }) => r.image);
    assert.deepEqual(await normalised(gt, entries.find((i: { id: number }) => i.id === gt)), await normalised(pool, entries.find((i: { id: number }) => i.id === pool)));
  });

  it('whole-project reads that would carry the reviewed labels are for project admins only', async () => {
    for (const res of [await annotator.get(`/api/projects/${projectId}/canonical`), await annotator.post(`/api/projects/${projectId}/export`, { format: 'coco' })]) {
      assert.equal(res.status, 403);
      assert.match(res.body.detail, /ground truth/);
    }
  });

  it('labelling it straight, or submitting it for review, answers as for a pool image and changes neither', async () => {
    // Below project admin, a project with hidden ground truth is labelled through quality-control tasks: a write or a
    // submission outside them is refused on every image alike (on ground truth it would change or name the reference).
    const attempts = (imageId: number) => [
      () => annotator.post(`/api/images/${imageId}/annotations`, box(classId, 5, 5)),
      () => annotator.post(`/api/projects/${projectId}/reviews`, { image_id: imageId }),
      () => annotator.post(`/api/projects/${projectId}/reviews/batch`, { image_ids: [imageId] }),
    ];
    const [onTruth, onPool] = [attempts(gt), attempts(pool)];
    for (const [i, attempt] of onTruth.entries()) {
      const [a, b] = [await attempt(), await onPool[i]()];
      assert.deepEqual([a.status, await normalised(gt, a.body)], [b.status, await normalised(pool, b.body)], `attempt ${i}`);
      assert.equal(a.status, 403);
      assert.match(a.body.detail, /quality-control tasks/);
    }
    // What follows looks alike too, and neither image changed.
    assert.equal((await same(annotator, 'image after', (id) => `/api/images/${id}`)).body.annotation_count, 0);
    assert.deepEqual((await same(annotator, 'annotations after', (id) => `/api/images/${id}/annotations`)).body, []);
    const truth = (await owner.get(`/api/images/${gt}`)).body;
    assert.deepEqual([truth.review_state, truth.annotation_count], ['approved', 2]);
    assert.deepEqual([(await owner.get(`/api/images/${pool}`)).body.review_state, (await owner.get(`/api/projects/${projectId}/reviews?image_id=${pool}`)).body.length], ['unreviewed', 0]);
    // Their tasks still deal both, and the decision path (a reviewer's consensus) is not a direct write.
    assert.equal((await annotator.post(`/api/projects/${projectId}/quality-control/tasks/next`)).status, 200);
  });

  it('task reviews answer alike on a ground-truth task and a pool task (review state, comment, round, queue entries)', async () => {
    const second = await t.user();
    await owner.post(`/api/projects/${projectId}/members`, { user_id: second.id, role: 'annotator' });
    const base = `/api/projects/${projectId}/quality-control`;
    // A draw under the share deals ground truth, one over it the pool image.
    for (const [draw, want] of [[0.1, gt], [0.9, pool]] as const) {
      const next = await withDraws([draw], () => second.post(`${base}/tasks/next`));
      assert.equal(next.body.task.image_id, want);
      assert.equal((await second.put(`${base}/tasks/${want}`, { shapes: [box(classId, 30, 30)] })).status, 200);
      assert.equal((await second.post(`${base}/tasks/${want}/submit`)).status, 200);
    }
    const reviewFields = (task: Record<string, unknown>) => ({ keys: Object.keys(task), status: task.status, review_state: task.review_state, review_comment: task.review_comment, review_round: task.review_round, shapes: task.shapes });
    const alike = async (label: string) => {
      const [a, b] = [(await second.get(`${base}/tasks/${gt}`)).body, (await second.get(`${base}/tasks/${pool}`)).body];
      assert.deepEqual(reviewFields(a), reviewFields(b), label);
      return a;
    };
    assert.equal((await alike('submitted')).review_state, 'pending');
    // What a reviewer below project admin sees of the two submissions differs only in ids and times.
    const entry = (p: Record<string, unknown>) => ({ ...p, task_id: '<id>', image_id: '<id>', submitted_at: '<time>' });
    const pending = (await reviewer.get(`${base}/task-reviews/pending?user_id=${second.id}`)).body as Record<string, unknown>[];
    assert.deepEqual(pending.map((p) => p.image_id), [gt, pool]);
    assert.deepEqual(entry(pending[0]), entry(pending[1]));
    for (const imageId of [gt, pool]) {
      assert.equal((await reviewer.post(`${base}/task-reviews`, { image_id: imageId, user_id: second.id, decision: 'changes_requested', comment: 'Tighter' })).status, 201);
    }
    assert.equal((await alike('given back')).review_comment, 'Tighter');
    const record = (await reviewer.get(`${base}/task-reviews?user_id=${second.id}`)).body as Record<string, unknown>[];
    const decision = (r: Record<string, unknown>) => ({ ...r, id: '<id>', task_id: '<id>', image_id: '<id>', created_at: '<time>' });
    assert.deepEqual(decision(record[0]), decision(record[1]));
    for (const imageId of [gt, pool]) assert.equal((await second.post(`${base}/tasks/${imageId}/submit`)).status, 200);
    assert.equal((await alike('resubmitted')).review_round, 1);
  });

  it('project admins still see the reviewed labels', async () => {
    const image = (await owner.get(`/api/images/${gt}`)).body;
    assert.deepEqual([image.review_state, image.annotation_count], ['approved', 2]);
    assert.equal((await owner.get(`/api/images/${gt}/revisions`)).body.length, 3);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/images?review_state=approved`)).body.map((i: { id: number }) => i.id), [gt]);
  });
});
