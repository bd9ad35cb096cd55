import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const box = (x = 10) => ({ x, y: 10, width: 20, height: 20 });

/**
 * Bulk writes and soft locks: every write that reaches an image another user has locked (bulk delete, split changes,
 * a cascading class delete) is refused whole with 409 naming the images and holders, and changes nothing. Deleting a
 * class's annotations records them in the history. Plus the corners of the list not covered elsewhere.
 */
describe('teams: bulk writes respect locks; nothing is lost silently', () => {
  let t: TestApp;
  let owner: User;
  let ann: User;
  let admin: User;
  let stranger: User;
  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
    ann = await t.user();
    admin = await t.user();
    stranger = await t.user();
  });
  after(() => t.close());

  async function setup(options: object = {}) {
    const projectId = (await owner.post('/api/projects', { name: 'p', ...options })).body.id as number;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: ann.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: admin.id, role: 'admin' });
    const cls = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const images = [await insertImageRow(t, projectId), await insertImageRow(t, projectId), await insertImageRow(t, projectId)];
    return { projectId, cls, images };
  }
  const count = async (table: 'images' | 'annotations' | 'revisions' | 'classes' | 'image_locks', projectId?: number) => {
    let query = t.versa.deps.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
    if (projectId !== undefined && table !== 'image_locks') query = query.where('project_id', '=', projectId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };
  const expire = (imageId: number) =>
    t.versa.deps.db.updateTable('image_locks').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('image_id', '=', imageId).execute();

  it('refuses a bulk delete touching a locked image, naming it and its holder, and deletes nothing', async () => {
    const { projectId, cls, images } = await setup();
    await owner.post(`/api/images/${images[0]}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box() });
    const lock = await ann.post(`/api/images/${images[1]}/lock`);
    const refused = await owner.post('/api/images/bulk-delete', { ids: images });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, new RegExp(`image ${images[1]} by ${ann.email} until ${lock.body.expires_at}`));
    assert.deepEqual(refused.body.locks, [{ image_id: images[1], user_id: ann.id, email: ann.email, expires_at: lock.body.expires_at }]);
    assert.equal(await count('images', projectId), 3);
    assert.equal(await count('annotations', projectId), 1);
    // Images the caller may not delete are not theirs to be told about: a stranger's request is not refused for them.
    const foreign = await stranger.post('/api/images/bulk-delete', { ids: [images[1]] });
    assert.equal(foreign.status, 200);
    assert.deepEqual(foreign.body.not_found, [images[1]]);
    // The holder's own lock does not stop them; an expired lock stops nobody.
    await owner.delete(`/api/images/${images[1]}/lock?force=true`);
    assert.equal((await admin.post(`/api/images/${images[2]}/lock`)).status, 200);
    await ann.post(`/api/images/${images[1]}/lock`);
    await expire(images[1]);
    const deleted = await admin.post('/api/images/bulk-delete', { ids: images });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(deleted.body.deleted, 3);
    assert.equal(deleted.body.deleted_annotations, 1);
    assert.equal(await count('images', projectId), 0);
  });

  it("refuses another user's split change on a locked image (PATCH) and any re-split of the project", async () => {
    const { projectId, images } = await setup();
    const lock = await ann.post(`/api/images/${images[0]}/lock`);
    const patched = await owner.patch(`/api/images/${images[0]}`, { split: 'train' });
    assert.equal(patched.status, 409);
    assert.match(patched.body.detail, new RegExp(`${ann.email} until ${lock.body.expires_at}`));
    assert.equal((await owner.get(`/api/images/${images[0]}`)).body.split, null);
    assert.equal((await ann.patch(`/api/images/${images[0]}`, { split: 'valid' })).status, 200);
    assert.equal((await owner.patch(`/api/images/${images[1]}`, { split: 'test' })).status, 200);

    const resplit = await owner.post(`/api/projects/${projectId}/splits?train=70&valid=20&test=10&seed=1`);
    assert.equal(resplit.status, 409);
    assert.deepEqual(resplit.body.locks.map((l: { image_id: number; email: string }) => [l.image_id, l.email]), [[images[0], ann.email]]);
    assert.match(resplit.body.detail, /nothing was changed/);
    const splits = await owner.get(`/api/projects/${projectId}/splits`);
    assert.deepEqual(splits.body.counts, { train: 0, valid: 1, test: 1 });
    assert.equal(splits.body.unassigned, 1);
    await ann.delete(`/api/images/${images[0]}/lock`);
    const done = await owner.post(`/api/projects/${projectId}/splits?train=70&valid=20&test=10&seed=1`);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal((await owner.get(`/api/projects/${projectId}/splits`)).body.unassigned, 0);
  });

  it("refuses a cascading class delete over another user's lock; when it goes ahead every deleted annotation gets a revision", async () => {
    const { projectId, cls, images } = await setup();
    const other = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'bus' })).body.id as number;
    const made = [
      (await owner.post(`/api/images/${images[0]}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box(1) })).body,
      (await owner.post(`/api/images/${images[1]}/annotations`, {
        class_id: cls, annotation_type: 'polygon', geometry: { points: [[1, 1], [30, 2], [15, 40]] }, confidence: 0.875, source: 'model:7',
      })).body,
      (await owner.post(`/api/images/${images[1]}/annotations`, { class_id: cls, annotation_type: 'classification', geometry: {}, source: 'yolo' })).body,
    ];
    await owner.post(`/api/images/${images[2]}/annotations`, { class_id: other, annotation_type: 'bbox', geometry: box() });
    // A lock on an image without annotations of the class does not matter.
    await ann.post(`/api/images/${images[2]}/lock`);
    const lock = await ann.post(`/api/images/${images[1]}/lock`);
    const revisionsBefore = await count('revisions', projectId);
    const refused = await owner.delete(`/api/classes/${cls}?cascade=true`);
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body.locks, [{ image_id: images[1], user_id: ann.id, email: ann.email, expires_at: lock.body.expires_at }]);
    assert.match(refused.body.detail, new RegExp(ann.email));
    assert.equal(await count('classes', projectId), 2);
    assert.equal(await count('annotations', projectId), 4);
    assert.equal(await count('revisions', projectId), revisionsBefore);

    await admin.delete(`/api/images/${images[1]}/lock?force=true`);
    const deleted = await admin.delete(`/api/classes/${cls}?cascade=true`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(deleted.body.deleted_annotations, 3);
    for (const annotation of made) {
      const history = await owner.get(`/api/annotations/${annotation.id}/revisions`);
      assert.deepEqual(history.body.map((r: { action: string; user_id: number }) => [r.action, r.user_id]), [['create', owner.id], ['delete', admin.id]]);
      const { class_id, annotation_type, geometry, confidence, source } = annotation;
      assert.deepEqual(history.body[1].before, { class_id, annotation_type, geometry, confidence, source });
      assert.equal(history.body[1].after, null);
    }
    const perImage = await owner.get(`/api/images/${images[1]}/revisions`);
    assert.deepEqual(perImage.body.map((r: { action: string }) => r.action), ['create', 'create', 'delete', 'delete']);
    // Its class is gone, so reverting to the state before the delete is a conflict, and changes nothing.
    const revert = await owner.post(`/api/annotations/${made[0].id}/revert`, { revision_id: (await owner.get(`/api/annotations/${made[0].id}/revisions`)).body[0].id });
    assert.equal(revert.status, 409);
    assert.equal(await count('annotations', projectId), 1);
  });

  it("refuses a revert on an image another user has locked, and a revert onto another annotation's revision is 404", async () => {
    const { cls, images } = await setup();
    const id = (await owner.post(`/api/images/${images[0]}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box(1) })).body.id as number;
    await owner.put(`/api/annotations/${id}`, { class_id: cls, annotation_type: 'bbox', geometry: box(40) });
    const first = (await owner.get(`/api/annotations/${id}/revisions`)).body[0].id as number;
    const lock = await ann.post(`/api/images/${images[0]}/lock`);
    const revisions = await count('revisions');
    const refused = await owner.post(`/api/annotations/${id}/revert`, { revision_id: first });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, new RegExp(`${ann.email} until ${lock.body.expires_at}`));
    assert.deepEqual((await owner.get(`/api/annotations/${id}`)).body.geometry, box(40));
    assert.equal(await count('revisions'), revisions);
    assert.equal((await owner.post(`/api/annotations/${id}/revert`, { revision_id: 2_000_000_000 })).status, 404);
  });

  it('an image outside an annotator\'s assignments cannot be locked or looked at (404), and no lock is taken', async () => {
    const { projectId, cls, images } = await setup({ assigned_only: true });
    await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[0]] });
    const locks = await count('image_locks');
    assert.equal((await ann.post(`/api/images/${images[1]}/lock`)).status, 404);
    assert.equal((await ann.get(`/api/images/${images[1]}/lock`)).status, 404);
    assert.equal((await stranger.post(`/api/images/${images[0]}/lock`)).status, 404);
    assert.equal(await count('image_locks'), locks);
    assert.equal((await ann.post(`/api/images/${images[0]}/lock`)).status, 200);
    // Progress per assignee follows the work.
    await ann.post(`/api/images/${images[0]}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: box() });
    await ann.post(`/api/projects/${projectId}/reviews`, { image_id: images[0] });
    const progress = await owner.get(`/api/projects/${projectId}/assignments/progress`);
    assert.deepEqual(
      progress.body.map((p: { user_id: number; assigned: number; annotated: number; pending: number }) => [p.user_id, p.assigned, p.annotated, p.pending]),
      [[ann.id, 1, 1, 1]],
    );
  });

  it("removing a member takes away their assignments and locks; a former member's lock blocks nobody", async () => {
    const { projectId, images } = await setup();
    await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [images[0]] });
    await ann.post(`/api/images/${images[0]}/lock`);
    assert.equal((await owner.delete(`/api/projects/${projectId}/members/${ann.id}`)).status, 204);
    assert.equal((await owner.get(`/api/images/${images[0]}/lock`)).body, null);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/assignments`)).body, []);
    assert.equal((await owner.patch(`/api/images/${images[0]}`, { split: 'train' })).status, 200);
    assert.equal((await ann.get('/api/assignments/mine')).body.filter((q: { project_id: number }) => q.project_id === projectId).length, 0);
  });
});
