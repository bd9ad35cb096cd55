/**
 * The review step on sample tasks (issue 29), as on image tasks: a reviewer lists pending sample answers with the
 * sample's content and the annotator's class and spans, accepts or requests changes with a comment; an answer given
 * back is dealt to its annotator first with the comment, reworked, resubmitted (round 2) and reviewed again; each
 * decision is recorded with the answer it was made on; two reviewers deciding at once get one 201 and one 409;
 * annotators cannot review, nobody reviews their own answer; the samples report counts the reviews in rejection and
 * rework rates (JSON and CSV).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number; email: string };
const loc = (start: number, end: number) => ({ start, end, label: 'LOC' });

describe('quality-control sample task reviews (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let reviewer: User;
  let a: User;
  let b: User;
  let projectId: number;
  const base = () => `/api/projects/${projectId}/quality-control/samples`;

  before(async () => {
    t = await startTestApp();
    [owner, reviewer, a, b] = [await t.user(), await t.user(), await t.user(), await t.user()];
    projectId = (await owner.post('/api/projects', { name: 'sample task reviews', project_type: 'classification' })).body.id;
    for (const u of [a, b]) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' });
    for (const name of ['city', 'town']) await owner.post(`/api/projects/${projectId}/classes`, { name });
    const created = await owner.post(`/api/projects/${projectId}/samples`, { items: [
      { modality: 'text', data: { text: 'New York is big' } },
      { modality: 'text', data: { text: 'Paris is old' } },
      { modality: 'text', data: { text: 'Rome is warm' } },
    ] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await owner.put(`/api/projects/${projectId}/quality-control/settings`, { overlap: 2 })).status, 200);
  });
  after(() => t.close());

  /** Deals the user a sample, saves the answer and submits it; the sample id. */
  async function answer(user: User, body: { label: string; spans: ReturnType<typeof loc>[] }): Promise<number> {
    const next = await user.post(`${base()}/tasks/next`);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    const id = next.body.task.sample_id as number;
    assert.deepEqual([next.body.task.review_state, next.body.task.review_comment, next.body.task.review_round], [null, null, 0]);
    assert.equal((await user.put(`${base()}/tasks/${id}`, body)).status, 200);
    const submitted = await user.post(`${base()}/tasks/${id}/submit`);
    assert.deepEqual([submitted.status, submitted.body.status, submitted.body.review_state], [200, 'submitted', 'pending']);
    return id;
  }

  it('reviews, gives back, resubmits and accepts; records each decision; the report counts them', async () => {
    const x = await answer(a, { label: 'city', spans: [loc(0, 3)] });
    const y = await answer(a, { label: 'town', spans: [] });
    const bx = await answer(b, { label: 'city', spans: [loc(0, 5)] });

    // Annotators cannot review, nor read the queue or the record.
    for (const user of [a, b]) {
      assert.equal((await user.get(`${base()}/task-reviews/pending`)).status, 403);
      assert.equal((await user.get(`${base()}/task-reviews`)).status, 403);
      assert.equal((await user.post(`${base()}/task-reviews`, { sample_id: bx, user_id: b.id, decision: 'accepted' })).status, 403);
    }

    // The reviewer sees every pending answer, oldest first, with the sample's text and the annotator's class and spans.
    const pending = await reviewer.get(`${base()}/task-reviews/pending`);
    assert.equal(pending.status, 200);
    assert.deepEqual(pending.body.map((p: { sample_id: number; user_id: number; round: number }) => [p.sample_id, p.user_id, p.round]), [[x, a.id, 1], [y, a.id, 1], [bx, b.id, 1]]);
    const first = pending.body[0];
    assert.deepEqual([first.modality, typeof first.data.text, first.label, first.spans, first.email, first.last_comment], ['text', 'string', 'city', [loc(0, 3)], a.email, null]);
    // The image queue is apart: no sample answer in it.
    assert.deepEqual((await reviewer.get(`/api/projects/${projectId}/quality-control/task-reviews/pending`)).body, []);

    // A change request needs a comment (422, nothing changed); an unknown task is 404.
    const bare = await reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'changes_requested', comment: '  ' });
    assert.equal(bare.status, 422);
    assert.deepEqual(bare.body.detail[0].loc, ['body', 'comment']);
    assert.equal((await reviewer.get(`${base()}/task-reviews/pending`)).body.length, 3);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: b.id + 1000, decision: 'accepted' })).status, 404);

    const back = await reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'changes_requested', comment: 'New York is two words' });
    assert.equal(back.status, 201, JSON.stringify(back.body));
    assert.deepEqual([back.body.decision, back.body.round, back.body.comment, back.body.reviewed_by, back.body.label, back.body.spans], ['changes_requested', 1, 'New York is two words', reviewer.id, 'city', [loc(0, 3)]]);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'accepted' })).status, 409, 'decided once');

    // The task comes back to its annotator first (a new sample is still free), open, with the comment.
    const again = await a.post(`${base()}/tasks/next`);
    assert.deepEqual([again.body.task.sample_id, again.body.task.status, again.body.task.review_state, again.body.task.review_comment, again.body.task.review_round], [x, 'open', 'changes_requested', 'New York is two words', 1]);
    assert.equal((await reviewer.get(`${base()}/task-reviews/pending`)).body.length, 2);

    // Rework and resubmit: pending again, round 2, with the comment it answers.
    assert.equal((await a.put(`${base()}/tasks/${x}`, { spans: [loc(0, 8)] })).status, 200);
    assert.equal((await a.post(`${base()}/tasks/${x}/submit`)).body.review_state, 'pending');
    const resubmitted = (await reviewer.get(`${base()}/task-reviews/pending?user_id=${a.id}`)).body;
    assert.deepEqual(resubmitted.map((p: { sample_id: number; round: number; last_comment: string | null }) => [p.sample_id, p.round, p.last_comment]), [[x, 2, 'New York is two words'], [y, 1, null]]);
    assert.deepEqual([resubmitted[0].label, resubmitted[0].spans], ['city', [loc(0, 8)]]);

    // Two reviewers deciding the same answer at once: one decision, the other 409.
    const raced = await Promise.all([
      reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'accepted', comment: 'Good' }),
      owner.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'changes_requested', comment: 'Again' }),
    ]);
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 409]);
    const winner = raced.find((r) => r.status === 201)!.body;
    if (winner.decision === 'changes_requested') {
      // The owner won: rework once more and accept round 3, so both orders end alike below.
      assert.equal((await a.post(`${base()}/tasks/${x}/submit`)).status, 200);
      assert.equal((await reviewer.post(`${base()}/task-reviews`, { sample_id: x, user_id: a.id, decision: 'accepted', comment: 'Good' })).status, 201);
    }
    const xRounds = winner.decision === 'accepted' ? 2 : 3;

    assert.equal((await owner.post(`${base()}/task-reviews`, { sample_id: y, user_id: a.id, decision: 'accepted' })).status, 201);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { sample_id: bx, user_id: b.id, decision: 'changes_requested', comment: 'Only New' })).status, 201);
    const accepted = (await a.get(`${base()}/tasks/${x}`)).body;
    assert.deepEqual([accepted.status, accepted.review_state, accepted.review_comment, accepted.review_round], ['submitted', 'accepted', 'Good', xRounds]);
    assert.equal((await a.put(`${base()}/tasks/${x}`, { label: 'town' })).status, 409, 'an accepted answer stays as accepted');
    assert.deepEqual((await reviewer.get(`${base()}/task-reviews/pending`)).body, []);

    // Nobody reviews their own answer: the reviewer's own is not in their queue and deciding it is 403.
    const own = await answer(reviewer, { label: 'town', spans: [] });
    assert.deepEqual((await reviewer.get(`${base()}/task-reviews/pending`)).body, []);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { sample_id: own, user_id: reviewer.id, decision: 'accepted' })).status, 403);
    assert.deepEqual((await owner.get(`${base()}/task-reviews/pending`)).body.map((p: { user_id: number }) => p.user_id), [reviewer.id]);

    // Every decision is recorded, oldest first, with its round and the answer it was made on.
    const record = (await reviewer.get(`${base()}/task-reviews`)).body;
    const xRecord = winner.decision === 'accepted' ? [[x, a.id, 1, 'changes_requested'], [x, a.id, 2, 'accepted']] : [[x, a.id, 1, 'changes_requested'], [x, a.id, 2, 'changes_requested'], [x, a.id, 3, 'accepted']];
    assert.deepEqual(record.map((r: { sample_id: number; user_id: number; round: number; decision: string }) => [r.sample_id, r.user_id, r.round, r.decision]), [
      ...xRecord, [y, a.id, 1, 'accepted'], [bx, b.id, 1, 'changes_requested'],
    ]);
    assert.deepEqual(record.slice(0, 2).map((r: { spans: unknown }) => r.spans), [[loc(0, 3)], [loc(0, 8)]]);
    assert.equal((await reviewer.get(`${base()}/task-reviews?sample_id=${x}&user_id=${a.id}`)).body.length, xRounds);

    // Rates, by hand: a's decided reviews are x's rounds and y's, one or two of them requesting changes; b has 1 of 1.
    const [aDecided, aChanges] = [xRounds + 1, xRounds - 1];
    const report = await owner.get(`${base()}/report`);
    assert.equal(report.status, 200);
    const of = (u: User) => report.body.annotators.find((r: { user_id: number }) => r.user_id === u.id);
    assert.deepEqual([of(a).reviews_decided, of(a).rejection_rate, of(a).rework_rate], [aDecided, aChanges / aDecided, aChanges / aDecided]);
    // b's only answer is back with them (open): still an annotator of the report, by the decided review.
    assert.deepEqual([of(b).reviews_decided, of(b).rejection_rate, of(b).rework_rate, of(b).samples], [1, 1, 1, 0]);
    assert.deepEqual([of(reviewer).reviews_decided, of(reviewer).rejection_rate, of(reviewer).rework_rate], [0, null, null]);
    const csv = (await owner.get(`${base()}/report/export`)).raw.toString().trim().split('\n');
    const header = csv[0].split(',');
    const row = (u: User) => csv.find((l) => l.startsWith(`${u.id},`))!.split(',');
    for (const [u, decided, rate] of [[a, aDecided, aChanges / aDecided], [b, 1, 1]] as const) {
      assert.equal(Number(row(u)[header.indexOf('reviews_decided')]), decided);
      // The CSV writes six decimals.
      assert.equal(Number(row(u)[header.indexOf('rejection_rate')]), Number(rate.toFixed(6)));
      assert.equal(Number(row(u)[header.indexOf('rework_rate')]), Number(rate.toFixed(6)));
    }
  });
});
