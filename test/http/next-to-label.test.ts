import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

/** The test detector scores a red square by its red level (R / 255): 255 is sure, 140 barely above even. */
const red = (level: number, x = 20, y = 20): Square => ({ x, y, width: 30, height: 30, colour: [level, 0, 0] });
const green = (x = 20, y = 20, level = 255): Square => ({ x, y, width: 30, height: 30, colour: [0, level, 0] });

interface Ranked {
  strategy: string;
  aggregate: string;
  balance: string;
  spread: boolean;
  class_weights: Record<string, number> | null;
  model: { id: number; name: string } | null;
  seed: number;
  unlabelled: number;
  candidates: number;
  predicted: number;
  items: { rank: number; score: number; image: { id: number; original_name: string } }[];
}

describe('next to label (active learning)', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the instance admin sees everything; kept out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  async function project(images: Record<string, Square[]>, production = true, layout: 'v8' | 'v5' | 'end2end' = 'v8') {
    const projectId = (await alice.post('/api/projects', { name: 'al' })).body.id as number;
    const classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'red' })).body.id as number;
    const files = await Promise.all(Object.entries(images).map(async ([name, squares]) => ({ filename: `${name}.png`, data: await squaresPng(128, 128, squares), contentType: 'image/png' })));
    const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart(files) });
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const ids = Object.fromEntries((uploaded.body.images as { id: number; original_name: string }[]).map((i) => [i.original_name.replace('.png', ''), i.id]));
    const model = await alice.request({
      method: 'POST',
      url: `/api/projects/${projectId}/models/upload`,
      ...multipart([{ name: 'file', filename: 'colours.onnx', data: Buffer.from(buildYoloModel(layout)) }], { name: `colours ${projectId}` }),
    });
    assert.equal(model.status, 201, JSON.stringify(model.body));
    if (production) assert.equal((await alice.patch(`/api/models/${model.body.id}/lifecycle`, { lifecycle: 'production' })).status, 200);
    return { projectId, classId, ids, modelId: model.body.id as number };
  }
  const rank = async (client: Client, projectId: number, query: string) => {
    const res = await client.get(`/api/projects/${projectId}/next-to-label?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Ranked;
  };
  const names = (r: Ranked) => r.items.map((i) => i.image.original_name.replace('.png', ''));

  it('ranks by the production model\'s uncertainty, least sure first, with the model and scores; labelled images are left out', async () => {
    const { projectId, classId, ids, modelId } = await project({ sure: [red(255)], fair: [red(200)], unsure: [red(140)], labelled: [red(130)] });
    await alice.post(`/api/images/${ids.labelled}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 30, height: 30 } });
    for (const strategy of ['least_confidence', 'margin', 'entropy']) {
      const r = await rank(alice, projectId, `strategy=${strategy}&spread=false`);
      assert.deepEqual(names(r), ['unsure', 'fair', 'sure'], strategy);
      assert.equal(r.model?.id, modelId);
      assert.equal(r.unlabelled, 3);
      assert.deepEqual(r.items.map((i) => i.rank), [1, 2, 3]);
      assert.ok(r.items[0].score > r.items[1].score && r.items[1].score > r.items[2].score, JSON.stringify(r.items.map((i) => i.score)));
    }
    // least confidence of a box at c = 140/255 is 1 − c among {red, green, background}.
    const lc = await rank(alice, projectId, 'strategy=least_confidence&limit=1&spread=false');
    assert.ok(Math.abs(lc.items[0].score - (1 - 140 / 255)) < 0.01, String(lc.items[0].score));
  });

  it('reads the class scores of v5 and end-to-end heads too', async () => {
    for (const layout of ['v5', 'end2end'] as const) {
      const { projectId } = await project({ sure: [red(255, 30, 40)], fair: [red(200, 30, 40)], unsure: [red(140, 30, 40)] }, true, layout);
      for (const strategy of ['least_confidence', 'margin', 'entropy']) assert.deepEqual(names(await rank(alice, projectId, `strategy=${strategy}&spread=false`)), ['unsure', 'fair', 'sure'], `${layout} ${strategy}`);
    }
  });

  it('aggregates a detector\'s detections by their sum (default), max or mean', async () => {
    const { projectId } = await project({ two: [red(140, 10, 10), green(70, 70, 140)], one: [red(130, 10, 70)], sure: [red(255, 70, 10)] });
    const max = await rank(alice, projectId, 'strategy=least_confidence&aggregate=max&spread=false');
    assert.deepEqual(names(max), ['one', 'two', 'sure']);
    const sum = await rank(alice, projectId, 'strategy=least_confidence&spread=false');
    assert.equal(sum.aggregate, 'sum');
    assert.deepEqual(names(sum), ['two', 'one', 'sure']);
    assert.ok(Math.abs(sum.items[0].score - 2 * (1 - 140 / 255)) < 0.02, String(sum.items[0].score));
    assert.deepEqual(names(await rank(alice, projectId, 'strategy=least_confidence&aggregate=mean&spread=false')), ['one', 'two', 'sure']);
  });

  it('balance=classes weighs each detection by how rare its class is among the labelled boxes, and reports the weights', async () => {
    const { projectId, classId, ids } = await project({ labelled: [red(250)], 'unsure-red': [red(140, 60)], 'unsure-green': [green(60, 20, 140)] });
    for (let i = 0; i < 3; i++) {
      const res = await alice.post(`/api/images/${ids.labelled}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20 + i, y: 20, width: 30, height: 30 } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    // Unweighted, the two are as unsure as each other (id order); three red boxes and no green one make green rare.
    const plain = await rank(alice, projectId, 'strategy=entropy&spread=false');
    assert.equal(plain.balance, 'none');
    assert.equal(plain.class_weights, null);
    assert.ok(Math.abs(plain.items[0].score - plain.items[1].score) < 1e-6, JSON.stringify(plain.items.map((i) => i.score)));
    const balanced = await rank(alice, projectId, 'strategy=entropy&balance=classes&spread=false');
    assert.deepEqual(names(balanced), ['unsure-green', 'unsure-red']);
    // w = √(((N + K) / K) / (n + 1)) with N = 3 red boxes, K = 2: red √(2.5 / 4), green √2.5.
    assert.ok(Math.abs(balanced.class_weights!.red - Math.sqrt(2.5 / 4)) < 1e-9 && Math.abs(balanced.class_weights!.green - Math.sqrt(2.5)) < 1e-9, JSON.stringify(balanced.class_weights));
    assert.ok(Math.abs(balanced.items[0].score / plain.items[0].score - Math.sqrt(2.5)) < 1e-4, JSON.stringify([balanced.items, plain.items].map((r) => r.map((i) => i.score))));
  });

  it('spread (the default) spreads an uncertainty ranking: uncertainty × distance from the labelled images and earlier picks, so a near-copy of a pick waits', async () => {
    const { projectId, classId, ids } = await project({ labelled: [red(250)], twin1: [red(140)], twin2: [red(141)], other: [red(170, 90, 90)] });
    await alice.post(`/api/images/${ids.labelled}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 30, height: 30 } });
    const plain = await rank(alice, projectId, 'strategy=entropy&spread=false');
    assert.deepEqual(names(plain), ['twin1', 'twin2', 'other']);
    assert.equal(plain.spread, false);
    const spread = await rank(alice, projectId, 'strategy=entropy');
    assert.equal(spread.spread, true);
    // The square elsewhere is a little surer but far from the labelled one; twin2 is next to twin1 once twin1 is picked.
    assert.deepEqual(names(spread), ['other', 'twin1', 'twin2']);
    assert.deepEqual(spread.items.map((i) => i.score), ['other', 'twin1', 'twin2'].map((n) => plain.items.find((i) => names({ ...plain, items: [i] })[0] === n)!.score), 'each keeps its uncertainty as its score');
    const second = await rank(alice, projectId, 'strategy=entropy&spread=true&limit=1&offset=1');
    assert.deepEqual(names(second), ['twin1'], 'pages agree');
  });

  it('runs the model once per image: paging and repeated requests answer from the prediction cache', async () => {
    const { projectId } = await project({ a: [red(255, 60)], b: [red(150, 60)], c: [red(200, 60)], d: [green(60)] });
    const first = await rank(alice, projectId, 'strategy=entropy&limit=2');
    assert.equal(first.predicted, 4);
    const second = await rank(alice, projectId, 'strategy=entropy&limit=2&offset=2');
    assert.equal(second.predicted, 0);
    assert.deepEqual(second.items.map((i) => i.rank), [3, 4]);
    assert.equal(new Set([...names(first), ...names(second)]).size, 4, 'pages do not overlap');
    assert.equal((await rank(alice, projectId, 'strategy=margin')).predicted, 0);
  });

  it('pool bounds the images the model runs on: a sample by seed, the same one on every page when no seed is given', async () => {
    const images = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, [red(140 + i * 10, 4 + i * 6, 70)]]));
    const { projectId } = await project(images);
    const first = await rank(alice, projectId, 'strategy=entropy&pool=4&limit=2');
    assert.equal(first.unlabelled, 10);
    assert.equal(first.candidates, 4);
    assert.equal(first.predicted, 4);
    assert.equal(first.seed, 0);
    const second = await rank(alice, projectId, 'strategy=entropy&pool=4&limit=2&offset=2');
    assert.equal(second.predicted, 0, 'the same sample: nothing new to run');
    assert.equal(new Set([...names(first), ...names(second)]).size, 4);
  });

  it('random is a seeded shuffle: the same seed gives the same order, and the seed used is reported', async () => {
    const images = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`img${i}`, [red(150 + i * 8, 5 + i * 5)]]));
    const { projectId } = await project(images, false);
    const a = await rank(alice, projectId, 'strategy=random&seed=7');
    const b = await rank(alice, projectId, 'strategy=random&seed=7');
    const c = await rank(alice, projectId, 'strategy=random&seed=8');
    assert.equal(a.model, null);
    assert.equal(a.seed, 7);
    assert.deepEqual(names(a), names(b));
    assert.notDeepEqual(names(a), names(c));
    assert.deepEqual([...names(a)].sort(), Object.keys(images).sort());
    const drawn = await rank(alice, projectId, 'strategy=random');
    assert.deepEqual(names(await rank(alice, projectId, `strategy=random&seed=${drawn.seed}`)), names(drawn));
    const paged = [...names(await rank(alice, projectId, 'strategy=random&seed=7&limit=5')), ...names(await rank(alice, projectId, 'strategy=random&seed=7&limit=7&offset=5'))];
    assert.deepEqual(paged, names(a));
  });

  it('diversity picks the images least like the labelled ones and each other first (k-centre)', async () => {
    const { projectId, classId, ids } = await project({
      labelled: [red(250)],
      copy1: [red(248)],
      copy2: [red(246, 22, 21)],
      'red-elsewhere': [red(250, 90, 90)],
      'green-elsewhere': [green(90, 90)],
    });
    await alice.post(`/api/images/${ids.labelled}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 30, height: 30 } });
    const r = await rank(alice, projectId, 'strategy=diversity');
    assert.deepEqual(names(r).slice(0, 2), ['green-elsewhere', 'red-elsewhere']);
    assert.ok(r.items[1].score > 5 * r.items[2].score, 'the copies of the labelled image come last, close to it');
    // Uncertainty would not spread them: the copies and the far red square are all sure.
    assert.notDeepEqual(names(await rank(alice, projectId, 'strategy=least_confidence&spread=false')).slice(0, 2), names(r).slice(0, 2));
  });

  it('keeps an annotator of an assigned-only project to their assigned images', async () => {
    const { projectId, classId, ids } = await project({ mine: [red(200)], theirs: [red(140)], other: [red(255)], 'labelled-theirs': [red(250)] });
    await alice.post(`/api/images/${ids['labelled-theirs']}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 30, height: 30 } });
    const annotator = await t.user();
    await alice.patch(`/api/projects/${projectId}`, { assigned_only: true });
    await alice.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' });
    await alice.post(`/api/projects/${projectId}/assignments`, { user_id: annotator.id, image_ids: [ids.mine] });
    for (const strategy of ['entropy', 'diversity', 'random']) {
      const r = await rank(annotator, projectId, `strategy=${strategy}`);
      assert.deepEqual(names(r), ['mine'], strategy);
      assert.equal(r.unlabelled, 1);
    }
    assert.equal((await rank(alice, projectId, 'strategy=entropy')).items.length, 3);
    // Class weights count only the labelled boxes the caller may see: none for the annotator, alice's one red box for her.
    assert.deepEqual((await rank(annotator, projectId, 'strategy=entropy&balance=classes')).class_weights, { red: 1, green: 1 });
    assert.ok((await rank(alice, projectId, 'strategy=entropy&balance=classes')).class_weights!.red < 1);
  });

  it('401 without credentials, 404 for a project the caller may not see, 409 without a production model, 422 for bad input', async () => {
    const { projectId, modelId } = await project({ a: [red(200)] }, false);
    const url = `/api/projects/${projectId}/next-to-label`;
    assert.equal((await t.client().get(url)).status, 401);
    assert.equal((await mallory.get(url)).status, 404);
    assert.equal((await alice.get('/api/projects/999999/next-to-label')).status, 404);
    const none = await alice.get(`${url}?strategy=entropy`);
    assert.equal(none.status, 409);
    assert.match(none.body.detail, /no production model/);
    assert.equal((await alice.get(`${url}?strategy=diversity`)).status, 409);
    // Random needs no model; a named model needs no production one.
    assert.equal((await alice.get(`${url}?strategy=random`)).status, 200);
    assert.equal((await rank(alice, projectId, `strategy=entropy&model_id=${modelId}`)).model?.id, modelId);
    for (const query of ['strategy=confidence', 'limit=0', 'limit=1001', 'offset=-1', 'model_id=999999', 'pool=0', 'seed=x', 'aggregate=median', 'balance=rare', 'spread=maybe']) {
      const res = await alice.get(`${url}?${query}`);
      assert.equal(res.status, 422, `${query}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.ok(res.body.detail, query);
    }
    // Another user's model is as unknown as a missing one.
    const theirs = await project({ b: [red(200)] });
    assert.equal((await mallory.get(`/api/projects/${(await mallory.post('/api/projects', { name: 'm' })).body.id}/next-to-label?model_id=${theirs.modelId}`)).status, 422);
  });
});
