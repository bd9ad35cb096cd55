import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProjectsRepository } from '../../src/modules/projects/projects.repository.js';
import { SamplesRepository } from '../../src/modules/samples/samples.repository.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('samples in teams: assignments, reviews, assigned-only projects', () => {
  let t: TestApp;
  let owner: User;
  let ann: User;
  let rev: User;
  let viewer: User;
  let stranger: User;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    ann = await t.user();
    rev = await t.user();
    viewer = await t.user();
    stranger = await t.user();
  });
  after(() => t.close());

  /** A project with an annotator, a reviewer and a viewer, and `n` text samples (ids in order). */
  async function setup(n = 4, assignedOnly = false) {
    const created = await owner.post('/api/projects', { name: 'sample teams', project_type: 'classification', assigned_only: assignedOnly });
    assert.equal(created.status, 201);
    const projectId = created.body.id as number;
    await owner.post(`/api/projects/${projectId}/members`, { user_id: ann.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: rev.id, role: 'reviewer' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    const items = Array.from({ length: n }, (_, i) => ({ modality: 'text', data: { text: `sample ${i}` }, label: 'pos' }));
    await owner.post(`/api/projects/${projectId}/classes`, { name: 'pos' });
    const res = await owner.post(`/api/projects/${projectId}/samples`, { items });
    assert.equal(res.status, 201);
    return { projectId, ids: (res.body.items as { id: number }[]).map((s) => s.id) };
  }

  const row = (id: number) => t.versa.deps.db.selectFrom('samples').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const revisionCount = async () =>
    Number((await t.versa.deps.db.selectFrom('sample_revisions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('answers 401 without credentials and 404 in a project the caller cannot see, changing nothing', async () => {
    const { projectId, ids } = await setup(1);
    const routes: [string, unknown][] = [
      [`/api/projects/${projectId}/samples/assign`, { user_id: ann.id, sample_ids: ids }],
      [`/api/samples/${ids[0]}/submit`, undefined],
      [`/api/samples/${ids[0]}/review`, { decision: 'approve' }],
    ];
    for (const [url, body] of routes) {
      assert.equal((await t.client().post(url, body)).status, 401, url);
      assert.equal((await stranger.post(url, body)).status, 404, url);
    }
    const sample = await row(ids[0]);
    assert.equal(sample.assignee_id, null);
    assert.equal(sample.review_state, 'unreviewed');
  });

  it('assigns by ids and by count, moves and withdraws assignments, and filters the listing by assignee', async () => {
    const { projectId, ids } = await setup(4);
    const url = `/api/projects/${projectId}/samples/assign`;
    const byIds = await owner.post(url, { user_id: ann.id, sample_ids: [ids[0], ids[2], ids[0]] });
    assert.equal(byIds.status, 200);
    assert.deepEqual(byIds.body, { user_id: ann.id, sample_ids: [ids[0], ids[2]] });
    const byCount = await owner.post(url, { user_id: rev.id, count: 1 });
    assert.deepEqual(byCount.body, { user_id: rev.id, sample_ids: [ids[1]] });
    // only_unassigned leaves samples that have an assignee as they are.
    const kept = await owner.post(url, { user_id: rev.id, sample_ids: [ids[0], ids[3]], only_unassigned: true });
    assert.deepEqual(kept.body.sample_ids, [ids[3]]);
    assert.equal((await row(ids[0])).assignee_id, ann.id);

    const mine = await ann.get(`/api/projects/${projectId}/samples?assignee=me`);
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.map((s: { id: number }) => s.id), [ids[0], ids[2]]);
    assert.equal(mine.headers['x-total-count'], '2');
    assert.equal(mine.body[0].assignee_id, ann.id);
    assert.equal(mine.body[0].review_state, 'unreviewed');
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/samples?assignee=${rev.id}`)).body.map((s: { id: number }) => s.id), [ids[1], ids[3]]);

    const withdrawn = await owner.post(url, { user_id: null, sample_ids: [ids[2]] });
    assert.deepEqual(withdrawn.body, { user_id: null, sample_ids: [ids[2]] });
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/samples?assignee=none`)).body.map((s: { id: number }) => s.id), [ids[2]]);
    assert.equal((await owner.get(`/api/projects/${projectId}/samples?assignee=someone`)).status, 422);

    const history = (await owner.get(`/api/samples/${ids[2]}/revisions`)).body as { action: string; before: unknown; after: unknown; user_id: number }[];
    assert.deepEqual(history.map((r) => [r.action, r.before, r.after, r.user_id]), [
      ['assign', { assignee_id: null }, { assignee_id: ann.id }, owner.id],
      ['assign', { assignee_id: ann.id }, { assignee_id: null }, owner.id],
    ]);
  });

  it('refuses bad assignments with 403 or 422 and changes nothing', async () => {
    const { projectId, ids } = await setup(2);
    const other = await setup(1);
    const url = `/api/projects/${projectId}/samples/assign`;
    const before = await revisionCount();
    const foreign = await owner.post(url, { user_id: ann.id, sample_ids: [ids[0], other.ids[0]] });
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'sample_ids', 1]);
    const missing = await owner.post(url, { user_id: ann.id, sample_ids: [999_999] });
    assert.equal(missing.status, 422);
    const nonMember = await owner.post(url, { user_id: stranger.id, sample_ids: [ids[0]] });
    assert.equal(nonMember.status, 422);
    assert.deepEqual(nonMember.body.detail[0].loc, ['body', 'user_id']);
    assert.equal((await owner.post(url, { user_id: viewer.id, count: 1 })).status, 422);
    assert.equal((await owner.post(url, { user_id: ann.id, sample_ids: [ids[0]], count: 1 })).status, 422);
    assert.equal((await owner.post(url, { user_id: ann.id })).status, 422);
    assert.equal((await owner.post(url, { user_id: null, count: 1 })).status, 422);
    assert.equal((await owner.post(url, { user_id: ann.id, count: 0 })).status, 422);
    assert.equal((await ann.post(url, { user_id: ann.id, sample_ids: [ids[0]] })).status, 403);
    assert.equal((await rev.post(url, { user_id: ann.id, count: 1 })).status, 403);
    assert.equal((await viewer.post(url, { user_id: ann.id, count: 1 })).status, 403);
    assert.equal((await row(ids[0])).assignee_id, null);
    assert.equal((await row(ids[1])).assignee_id, null);
    assert.equal(await revisionCount(), before);
  });

  it('changes nothing when a sample was reassigned between reading and writing its assignee', async () => {
    const { projectId, ids } = await setup(2);
    await owner.post(`/api/projects/${projectId}/samples/assign`, { user_id: ann.id, sample_ids: [ids[1]] });
    const repository = new SamplesRepository(t.versa.deps.db, new ProjectsRepository(t.versa.deps.db));
    const before = await revisionCount();
    // As a request that read both samples unassigned, before the assignment above, would write them.
    assert.equal(await repository.assign(projectId, [{ id: ids[0], before: null }, { id: ids[1], before: null }], rev.id, owner.id), false);
    assert.equal((await row(ids[0])).assignee_id, null);
    assert.equal((await row(ids[1])).assignee_id, ann.id);
    assert.equal(await revisionCount(), before);
  });

  it('shows an annotator of an assigned-only project only the samples assigned to them', async () => {
    const { projectId, ids } = await setup(3, true);
    await owner.post(`/api/projects/${projectId}/samples/assign`, { user_id: ann.id, sample_ids: [ids[1]] });
    const list = await ann.get(`/api/projects/${projectId}/samples`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((s: { id: number }) => s.id), [ids[1]]);
    assert.equal(list.headers['x-total-count'], '1');
    assert.deepEqual((await ann.get(`/api/projects/${projectId}/samples?assignee=${owner.id}`)).body, []);
    assert.equal((await ann.get(`/api/samples/${ids[1]}`)).status, 200);
    assert.equal((await ann.patch(`/api/samples/${ids[1]}`, { label: null })).status, 200);
    for (const [method, url, body] of [
      ['GET', `/api/samples/${ids[0]}`, undefined],
      ['PATCH', `/api/samples/${ids[0]}`, { label: null }],
      ['GET', `/api/samples/${ids[0]}/lock`, undefined],
      ['POST', `/api/samples/${ids[0]}/lock`, undefined],
      ['GET', `/api/samples/${ids[0]}/revisions`, undefined],
      ['GET', `/api/samples/${ids[0]}/file`, undefined],
      ['POST', `/api/samples/${ids[0]}/submit`, undefined],
    ] as const) {
      const res = await ann.request({ method, url, payload: body });
      assert.equal(res.status, 404, `${method} ${url}`);
    }
    assert.equal((await row(ids[0])).label, 'pos');
    assert.equal((await row(ids[0])).review_state, 'unreviewed');
    // Whole-project exports of the samples are refused to them, as for images.
    assert.equal((await ann.post(`/api/projects/${projectId}/adapters/prepare`, { adapter: 'hub' })).status, 403);
    // Reviewers and admins are not restricted.
    assert.equal((await rev.get(`/api/projects/${projectId}/samples`)).headers['x-total-count'], '3');
    assert.equal((await rev.get(`/api/samples/${ids[0]}`)).status, 200);
  });

  it('submits for review; reviewers approve, reject or ask for changes with a comment', async () => {
    const { projectId, ids } = await setup(2);
    const sid = ids[0];
    const submitted = await ann.post(`/api/samples/${sid}/submit`);
    assert.equal(submitted.status, 200);
    assert.equal(submitted.body.review_state, 'pending');
    assert.equal((await ann.post(`/api/samples/${sid}/submit`)).status, 409);
    assert.equal((await viewer.post(`/api/samples/${ids[1]}/submit`)).status, 403);

    assert.equal((await viewer.post(`/api/samples/${sid}/review`, { decision: 'approve' })).status, 403);
    assert.equal((await ann.post(`/api/samples/${sid}/review`, { decision: 'approve' })).status, 403);
    const noComment = await rev.post(`/api/samples/${sid}/review`, { decision: 'changes', comment: '  ' });
    assert.equal(noComment.status, 422);
    assert.deepEqual(noComment.body.detail[0].loc, ['body', 'comment']);
    assert.equal((await rev.post(`/api/samples/${sid}/review`, { decision: 'maybe' })).status, 422);
    assert.equal((await row(sid)).review_state, 'pending');

    const changes = await rev.post(`/api/samples/${sid}/review`, { decision: 'changes', comment: 'Wrong class' });
    assert.equal(changes.status, 200);
    assert.equal(changes.body.review_state, 'changes');
    assert.equal(changes.body.review_comment, 'Wrong class');
    assert.equal(changes.body.reviewed_by, rev.id);
    const stored = await row(sid);
    assert.equal(stored.review_state, 'changes');
    assert.equal(stored.review_comment, 'Wrong class');
    assert.equal(stored.reviewed_by, rev.id);
    // A decided sample is not pending: another decision is 409 until it is submitted again.
    assert.equal((await rev.post(`/api/samples/${sid}/review`, { decision: 'approve' })).status, 409);
    assert.equal((await rev.post(`/api/samples/${ids[1]}/review`, { decision: 'approve' })).status, 409);

    assert.equal((await ann.post(`/api/samples/${sid}/submit`)).body.review_state, 'pending');
    const approved = await owner.post(`/api/samples/${sid}/review`, { decision: 'approve' });
    assert.equal(approved.body.review_state, 'approved');
    assert.equal(approved.body.review_comment, null);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/samples?review_state=approved`)).body.map((s: { id: number }) => s.id), [sid]);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/samples?review_state=unreviewed`)).body.map((s: { id: number }) => s.id), [ids[1]]);
    assert.equal((await owner.get(`/api/projects/${projectId}/samples?review_state=done`)).status, 422);

    await ann.post(`/api/samples/${ids[1]}/submit`);
    assert.equal((await rev.post(`/api/samples/${ids[1]}/review`, { decision: 'reject', comment: 'Not a sentence' })).body.review_state, 'rejected');

    const history = (await owner.get(`/api/samples/${sid}/revisions`)).body as { action: string; after: Record<string, unknown>; user_id: number }[];
    assert.deepEqual(history.map((r) => [r.action, r.after.review_state, r.user_id]), [
      ['submit', 'pending', ann.id],
      ['review', 'changes', rev.id],
      ['submit', 'pending', ann.id],
      ['review', 'approved', owner.id],
    ]);
    assert.equal(history[1].after.review_comment, 'Wrong class');
  });

  it('answers 404 for a missing sample and 422 for a malformed id', async () => {
    assert.equal((await owner.post('/api/samples/999999/submit')).status, 404);
    assert.equal((await owner.post('/api/samples/999999/review', { decision: 'approve' })).status, 404);
    assert.equal((await owner.post('/api/samples/abc/submit')).status, 422);
    assert.equal((await owner.post('/api/samples/0/review', { decision: 'approve' })).status, 422);
    assert.equal((await owner.post('/api/projects/999999/samples/assign', { user_id: ann.id, count: 1 })).status, 404);
  });
});
