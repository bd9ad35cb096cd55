/**
 * The review step on quality-control task submissions (issue 29): a reviewer lists pending submissions with the
 * annotator's version, accepts or requests changes with a comment; a task given back is dealt to its annotator first
 * with the comment, reworked and resubmitted, and reviewed again; each decision is recorded; annotators cannot
 * review, nobody reviews their own task; the annotators report's rejection and rework rates count task reviews.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Client & { id: number; email: string };
const box = (class_id: number, x: number, w: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y: 10, width: w, height: 30 } });

describe('quality-control task reviews (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let reviewer: User;
  let a: User;
  let b: User;
  let projectId: number;
  let car: number;
  const base = () => `/api/projects/${projectId}/quality-control`;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    reviewer = await t.user();
    a = await t.user();
    b = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'task reviews' })).body.id;
    for (const u of [a, b]) await owner.post(`/api/projects/${projectId}/members`, { user_id: u.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' });
    car = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    for (let i = 0; i < 3; i++) await insertImageRow(t, projectId);
    assert.equal((await owner.put(`${base()}/settings`, { overlap: 2 })).status, 200);
  });
  after(() => t.close());

  /** Deals the user a task, saves `shapes` and submits it; the image id. */
  async function label(user: User, shapes: ReturnType<typeof box>[]): Promise<number> {
    const next = await user.post(`${base()}/tasks/next`);
    assert.equal(next.status, 200);
    const imageId = next.body.task.image_id as number;
    assert.deepEqual([next.body.task.review_state, next.body.task.review_comment, next.body.task.review_round], [null, null, 0]);
    assert.equal((await user.put(`${base()}/tasks/${imageId}`, { shapes })).status, 200);
    const submitted = await user.post(`${base()}/tasks/${imageId}/submit`);
    assert.deepEqual([submitted.status, submitted.body.status, submitted.body.review_state], [200, 'submitted', 'pending']);
    return imageId;
  }

  it('reviews, gives back, resubmits and accepts; the report counts them', async () => {
    const x = await label(a, [box(car, 10, 20)]);
    const y = await label(a, [box(car, 50, 40)]);
    const bx = await label(b, [box(car, 15, 20)]);

    // Annotators cannot review, nor read the queue or the record.
    for (const user of [a, b]) {
      assert.equal((await user.get(`${base()}/task-reviews/pending`)).status, 403);
      assert.equal((await user.get(`${base()}/task-reviews`)).status, 403);
      assert.equal((await user.post(`${base()}/task-reviews`, { image_id: bx, user_id: b.id, decision: 'accepted' })).status, 403);
    }

    // The reviewer sees every pending submission, oldest first, with the annotator's version.
    const pending = await reviewer.get(`${base()}/task-reviews/pending`);
    assert.equal(pending.status, 200);
    assert.deepEqual(pending.body.map((p: { image_id: number; user_id: number; round: number }) => [p.image_id, p.user_id, p.round]), [[x, a.id, 1], [y, a.id, 1], [bx, b.id, 1]]);
    assert.deepEqual(pending.body[0].shapes, [box(car, 10, 20)]);
    assert.equal(pending.body[0].email, a.email);
    assert.equal(pending.body[0].last_comment, null);
    assert.deepEqual([pending.body[0].video_id, pending.body[0].frame, pending.body[0].frames, pending.body[0].video_frames], [null, null, 1, []], 'an image is its own item');

    // A change request needs a comment (422, nothing changed); an unknown task is 404.
    const bare = await reviewer.post(`${base()}/task-reviews`, { image_id: x, user_id: a.id, decision: 'changes_requested', comment: '  ' });
    assert.equal(bare.status, 422);
    assert.deepEqual(bare.body.detail[0].loc, ['body', 'comment']);
    assert.equal((await reviewer.get(`${base()}/task-reviews/pending`)).body.length, 3);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { image_id: x, user_id: b.id + 1000, decision: 'accepted' })).status, 404);

    const back = await reviewer.post(`${base()}/task-reviews`, { image_id: x, user_id: a.id, decision: 'changes_requested', comment: 'The car is wider' });
    assert.equal(back.status, 201);
    assert.deepEqual([back.body.decision, back.body.round, back.body.comment, back.body.reviewed_by, back.body.shapes], ['changes_requested', 1, 'The car is wider', reviewer.id, [box(car, 10, 20)]]);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { image_id: x, user_id: a.id, decision: 'accepted' })).status, 409, 'decided once');

    // The task comes back to its annotator first (a new image is still free), open, with the comment.
    const again = await a.post(`${base()}/tasks/next`);
    assert.deepEqual([again.body.task.image_id, again.body.task.status, again.body.task.review_state, again.body.task.review_comment, again.body.task.review_round], [x, 'open', 'changes_requested', 'The car is wider', 1]);
    const mine = (await a.get(`${base()}/tasks`)).body.find((task: { image_id: number }) => task.image_id === x);
    assert.equal(mine.review_comment, 'The car is wider');
    assert.equal((await reviewer.get(`${base()}/task-reviews/pending`)).body.length, 2);

    // Rework and resubmit: pending again, round 2, with the comment it answers.
    assert.equal((await a.put(`${base()}/tasks/${x}`, { shapes: [box(car, 10, 60)] })).status, 200);
    assert.equal((await a.post(`${base()}/tasks/${x}/submit`)).body.review_state, 'pending');
    const resubmitted = (await reviewer.get(`${base()}/task-reviews/pending?user_id=${a.id}`)).body;
    assert.deepEqual(resubmitted.map((p: { image_id: number; round: number; last_comment: string | null }) => [p.image_id, p.round, p.last_comment]), [[x, 2, 'The car is wider'], [y, 1, null]]);
    assert.deepEqual(resubmitted[0].shapes, [box(car, 10, 60)]);

    assert.equal((await reviewer.post(`${base()}/task-reviews`, { image_id: x, user_id: a.id, decision: 'accepted', comment: 'Good' })).status, 201);
    assert.equal((await owner.post(`${base()}/task-reviews`, { image_id: y, user_id: a.id, decision: 'accepted' })).status, 201);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { image_id: bx, user_id: b.id, decision: 'changes_requested', comment: 'Missed the bus' })).status, 201);
    const accepted = (await a.get(`${base()}/tasks/${x}`)).body;
    assert.deepEqual([accepted.status, accepted.review_state, accepted.review_comment, accepted.review_round], ['submitted', 'accepted', 'Good', 2]);
    assert.equal((await a.put(`${base()}/tasks/${x}`, { shapes: [] })).status, 409, 'an accepted task stays as accepted');
    assert.deepEqual((await reviewer.get(`${base()}/task-reviews/pending`)).body, []);

    // Nobody reviews their own task: the reviewer's own submission is not in their queue and deciding it is 403.
    const own = await label(reviewer, [box(car, 5, 5)]);
    assert.deepEqual((await reviewer.get(`${base()}/task-reviews/pending`)).body, []);
    assert.equal((await reviewer.post(`${base()}/task-reviews`, { image_id: own, user_id: reviewer.id, decision: 'accepted' })).status, 403);
    assert.deepEqual((await owner.get(`${base()}/task-reviews/pending`)).body.map((p: { user_id: number }) => p.user_id), [reviewer.id]);

    // Every decision is recorded, oldest first, with its round.
    const record = (await reviewer.get(`${base()}/task-reviews`)).body;
    assert.deepEqual(record.map((r: { image_id: number; user_id: number; round: number; decision: string }) => [r.image_id, r.user_id, r.round, r.decision]), [
      [x, a.id, 1, 'changes_requested'], [x, a.id, 2, 'accepted'], [y, a.id, 1, 'accepted'], [bx, b.id, 1, 'changes_requested'],
    ]);
    assert.equal((await reviewer.get(`${base()}/task-reviews?image_id=${x}&user_id=${a.id}`)).body.length, 2);

    // Rates, by hand: a has 3 decided task reviews, 1 requesting changes; b has 1 of 1.
    const report = (await owner.get(`${base()}/annotators`)).body as { user_id: number; reviews_decided: number; rejection_rate: number | null; rework_rate: number | null; tasks_submitted: number }[];
    const of = (u: User) => report.find((r) => r.user_id === u.id)!;
    assert.deepEqual([of(a).reviews_decided, of(a).rejection_rate, of(a).rework_rate, of(a).tasks_submitted], [3, 1 / 3, 1 / 3, 2]);
    assert.deepEqual([of(b).reviews_decided, of(b).rejection_rate, of(b).rework_rate, of(b).tasks_submitted], [1, 1, 1, 0]);
    assert.deepEqual([of(reviewer).reviews_decided, of(reviewer).rejection_rate], [0, null]);
    const csv = (await owner.get(`${base()}/annotators/export`)).raw.toString().trim().split('\n');
    const header = csv[0].split(',');
    const row = (u: User) => csv.find((l) => l.startsWith(`${u.id},`))!.split(',');
    for (const [u, rejection, rework] of [[a, 1 / 3, 1 / 3], [b, 1, 1]] as const) {
      // The CSV writes six decimals.
      assert.equal(Number(row(u)[header.indexOf('rejection_rate')]), Number(rejection.toFixed(6)));
      assert.equal(Number(row(u)[header.indexOf('rework_rate')]), Number(rework.toFixed(6)));
    }
  });
});
