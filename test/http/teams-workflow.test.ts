import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const box = (x = 10) => ({ x, y: 10, width: 20, height: 20 });

describe('teams: assignments, reviews, locks, revisions', () => {
  let t: TestApp;
  let owner: User;
  let ann: User;
  let rev: User;
  let viewer: User;
  let stranger: User;
  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
    ann = await t.user();
    rev = await t.user();
    viewer = await t.user();
    stranger = await t.user();
  });
  after(() => t.close());

  async function setup() {
    const projectId = (await owner.post('/api/projects', { name: 'p' })).body.id as number;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: ann.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: rev.id, role: 'reviewer' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    const cls = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const images = [await insertImageRow(t, projectId), await insertImageRow(t, projectId), await insertImageRow(t, projectId)];
    return { projectId, cls, images };
  }
  const count = async (table: 'assignments' | 'reviews' | 'revisions' | 'annotations') =>
    Number((await t.versa.deps.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('assigns images and a share of the unlabelled queue; reports progress and my queue', async () => {
    const { projectId, images } = await setup();
    const given = await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[0]] });
    assert.equal(given.status, 201);
    assert.deepEqual(given.body.map((a: { image_id: number }) => a.image_id), [images[0]]);
    const share = await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, count: 1 });
    assert.deepEqual(share.body.map((a: { image_id: number }) => a.image_id), [images[1]]);
    const before = await count('assignments');
    const nonMember = await owner.post(`/api/projects/${projectId}/assignments`, { user_id: stranger.id, image_ids: [images[2]] });
    assert.equal(nonMember.status, 422);
    assert.deepEqual(nonMember.body.detail[0].loc, ['body', 'user_id']);
    assert.equal((await owner.post(`/api/projects/${projectId}/assignments`, { user_id: viewer.id, image_ids: [images[2]] })).status, 422);
    const foreign = await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[2], 999999] });
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'image_ids', 1]);
    assert.equal((await ann.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[2]] })).status, 403);
    assert.equal((await stranger.get(`/api/projects/${projectId}/assignments`)).status, 404);
    assert.equal((await t.client().get('/api/assignments/mine')).status, 401);
    assert.equal(await count('assignments'), before);
    const mine = await ann.get('/api/assignments/mine');
    assert.deepEqual(mine.body.filter((q: { project_id: number }) => q.project_id === projectId).map((q: { image_id: number; reason: string }) => [q.image_id, q.reason]), [[images[0], 'assigned'], [images[1], 'assigned']]);
    const progress = await owner.get(`/api/projects/${projectId}/assignments/progress`);
    assert.deepEqual(progress.body.map((p: { user_id: number; assigned: number }) => [p.user_id, p.assigned]), [[ann.id, 2]]);
  });

  it('runs the review loop: submit, 409 on a second decision, changes send the image back to the queue', async () => {
    const { projectId, images } = await setup();
    await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[0]] });
    const submitted = await ann.post(`/api/projects/${projectId}/reviews`, { image_id: images[0], comment: 'done' });
    assert.equal(submitted.status, 201);
    assert.equal(submitted.body.status, 'pending');
    assert.equal((await ann.post(`/api/projects/${projectId}/reviews`, { image_id: images[0] })).status, 409);
    const pending = await rev.get(`/api/projects/${projectId}/images?review_state=pending`);
    assert.deepEqual(pending.body.map((i: { id: number }) => i.id), [images[0]]);
    assert.equal(pending.headers['x-total-count'], '1');
    const reviewId = submitted.body.id as number;
    assert.equal((await ann.post(`/api/reviews/${reviewId}/decide`, { decision: 'approve' })).status, 403);
    const noComment = await rev.post(`/api/reviews/${reviewId}/decide`, { decision: 'changes' });
    assert.equal(noComment.status, 422);
    assert.equal((await rev.post(`/api/reviews/${reviewId}/decide`, { decision: 'maybe' })).status, 422);
    const decided = await rev.post(`/api/reviews/${reviewId}/decide`, { decision: 'changes', comment: 'box too loose' });
    assert.equal(decided.status, 200);
    assert.equal(decided.body.status, 'changes');
    assert.equal(decided.body.decided_by, rev.id);
    assert.ok(decided.body.decided_at);
    assert.equal((await rev.post(`/api/reviews/${reviewId}/decide`, { decision: 'approve' })).status, 409);
    assert.equal((await rev.get(`/api/reviews/${reviewId}`)).body.status, 'changes');
    const queue = (await ann.get('/api/assignments/mine')).body.filter((q: { project_id: number }) => q.project_id === projectId);
    assert.deepEqual(queue.map((q: { image_id: number; reason: string; review_comment: string }) => [q.image_id, q.reason, q.review_comment]), [[images[0], 'returned', 'box too loose']]);
    // Resubmitted and approved: it leaves the queue, approval records who.
    const again = await ann.post(`/api/projects/${projectId}/reviews`, { image_id: images[0] });
    const approved = await owner.post(`/api/reviews/${again.body.id}/decide`, { decision: 'approve' });
    assert.equal(approved.body.decided_by, owner.id);
    assert.equal((await owner.get(`/api/images/${images[0]}`)).body.review_state, 'approved');
    assert.equal((await ann.get('/api/assignments/mine')).body.filter((q: { project_id: number }) => q.project_id === projectId).length, 0);
    // Batch: all or nothing.
    const reviewsBefore = await count('reviews');
    const batch = await ann.post(`/api/projects/${projectId}/reviews/batch`, { image_ids: [images[1], images[2], 999999] });
    assert.equal(batch.status, 422);
    assert.deepEqual(batch.body.detail[0].loc, ['body', 'image_ids', 2]);
    assert.equal(await count('reviews'), reviewsBefore);
    assert.equal((await ann.post(`/api/projects/${projectId}/reviews/batch`, { image_ids: [images[1], images[2]] })).status, 201);
    assert.equal((await viewer.post(`/api/projects/${projectId}/reviews`, { image_id: images[0] })).status, 403);
    assert.equal((await stranger.get(`/api/projects/${projectId}/reviews`)).status, 404);
    assert.equal((await stranger.post(`/api/reviews/${reviewId}/decide`, { decision: 'approve' })).status, 404);
    assert.equal((await t.client().post(`/api/reviews/${reviewId}/decide`, { decision: 'approve' })).status, 401);
    assert.equal((await rev.get(`/api/projects/${projectId}/reviews?status=pending`)).body.length, 2);
  });

  it('locks an image: others get 409 naming the holder, locks expire, admins break them', async () => {
    const { cls, images } = await setup();
    const image = images[0];
    const body = { class_id: cls, annotation_type: 'bbox', geometry: box() };
    const annotation = (await owner.post(`/api/images/${image}/annotations`, body)).body.id as number;
    const lock = await ann.post(`/api/images/${image}/lock`);
    assert.equal(lock.status, 200);
    assert.equal(lock.body.user_id, ann.id);
    assert.equal((await rev.get(`/api/images/${image}/lock`)).body.user_id, ann.id);
    const taken = await rev.post(`/api/images/${image}/lock`);
    assert.equal(taken.status, 409);
    assert.match(taken.body.detail, new RegExp(ann.email));
    const before = await count('annotations');
    const blocked = await rev.post(`/api/images/${image}/annotations`, body);
    assert.equal(blocked.status, 409);
    assert.match(blocked.body.detail, new RegExp(`${ann.email} until ${lock.body.expires_at}`));
    assert.equal((await rev.put(`/api/annotations/${annotation}`, body)).status, 409);
    assert.equal((await rev.delete(`/api/annotations/${annotation}`)).status, 409);
    assert.equal((await owner.delete(`/api/images/${image}`)).status, 409);
    assert.equal(await count('annotations'), before);
    // The holder writes freely and renews.
    assert.equal((await ann.post(`/api/images/${image}/annotations`, body)).status, 201);
    const renewed = await ann.post(`/api/images/${image}/lock`);
    assert.ok(renewed.body.expires_at >= lock.body.expires_at);
    assert.equal((await rev.delete(`/api/images/${image}/lock`)).status, 409);
    assert.equal((await rev.delete(`/api/images/${image}/lock?force=true`)).status, 403);
    assert.equal((await owner.delete(`/api/images/${image}/lock?force=true`)).status, 204);
    assert.equal((await rev.get(`/api/images/${image}/lock`)).body, null);
    // An expired lock no longer blocks anyone.
    await ann.post(`/api/images/${image}/lock`);
    await t.versa.deps.db.updateTable('image_locks').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('image_id', '=', image).execute();
    assert.equal((await rev.get(`/api/images/${image}/lock`)).body, null);
    assert.equal((await rev.post(`/api/images/${image}/annotations`, body)).status, 201);
    assert.equal((await rev.post(`/api/images/${image}/lock`)).status, 200);
    assert.equal((await rev.delete(`/api/images/${image}/lock`)).status, 204);
    // Hidden image: 404; viewer: 403; anonymous: 401.
    assert.equal((await stranger.post(`/api/images/${image}/lock`)).status, 404);
    assert.equal((await viewer.post(`/api/images/${image}/lock`)).status, 403);
    assert.equal((await t.client().post(`/api/images/${image}/lock`)).status, 401);
    assert.equal((await owner.get('/api/images/0/lock')).status, 422);
  });

  it('records a revision for every change and reverts, recreating a deleted annotation', async () => {
    const { cls, images } = await setup();
    const image = images[0];
    const created = await ann.post(`/api/images/${image}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box(1) });
    const id = created.body.id as number;
    await ann.put(`/api/annotations/${id}`, { class_id: cls, annotation_type: 'bbox', geometry: box(50) });
    assert.equal((await ann.delete(`/api/annotations/${id}`)).status, 204);
    const history = await viewer.get(`/api/annotations/${id}/revisions`);
    assert.equal(history.status, 200);
    assert.deepEqual(history.body.map((r: { action: string }) => r.action), ['create', 'update', 'delete']);
    assert.equal(history.body[0].before, null);
    assert.deepEqual(history.body[1].before.geometry, box(1));
    assert.deepEqual(history.body[1].after.geometry, box(50));
    assert.equal(history.body[2].after, null);
    assert.equal(history.body[2].user_id, ann.id);
    const counters = async () => (await owner.get(`/api/images/${image}`)).body.annotation_count;
    assert.equal(await counters(), 0);
    // Revert the deleted annotation to its first state: it comes back under its id, as a new revision.
    const reverted = await ann.post(`/api/annotations/${id}/revert`, { revision_id: history.body[0].id });
    assert.equal(reverted.status, 201);
    assert.equal(reverted.body.action, 'revert');
    const back = await ann.get(`/api/annotations/${id}`);
    assert.equal(back.status, 200);
    assert.deepEqual(back.body.geometry, box(1));
    assert.equal(await counters(), 1);
    const again = await ann.post(`/api/annotations/${id}/revert`, { revision_id: history.body[1].id });
    assert.deepEqual(again.body.after.geometry, box(50));
    assert.deepEqual((await ann.get(`/api/annotations/${id}`)).body.geometry, box(50));
    // Another annotation's revision is 404, and nothing changes.
    const other = (await ann.post(`/api/images/${image}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box(7) })).body.id as number;
    const otherRevision = (await ann.get(`/api/annotations/${other}/revisions`)).body[0].id as number;
    const revisions = await count('revisions');
    assert.equal((await ann.post(`/api/annotations/${id}/revert`, { revision_id: otherRevision })).status, 404);
    assert.equal((await viewer.post(`/api/annotations/${id}/revert`, { revision_id: history.body[0].id })).status, 403);
    assert.equal((await stranger.get(`/api/annotations/${id}/revisions`)).status, 404);
    assert.equal((await stranger.post(`/api/annotations/${id}/revert`, { revision_id: history.body[0].id })).status, 404);
    assert.equal((await ann.post(`/api/annotations/${id}/revert`, {})).status, 422);
    assert.equal((await t.client().get(`/api/annotations/${id}/revisions`)).status, 401);
    assert.equal(await count('revisions'), revisions);
    const perImage = await owner.get(`/api/images/${image}/revisions`);
    assert.equal(perImage.body.length, 6);
    assert.equal(perImage.headers['x-total-count'], '6');
    assert.equal((await stranger.get(`/api/images/${image}/revisions`)).status, 404);
  });
});
