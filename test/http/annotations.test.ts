import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeRle } from '../../src/imaging/rle.js';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const box = (x = 10, y = 20, width = 30, height = 40) => ({ x, y, width, height });

describe('annotations', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the first account is instance admin and sees everything; keep it out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  /** A project of alice's with one 640×480 image and classes car and person. */
  async function setup(size = { width: 640, height: 480 }) {
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const car = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const person = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'person' })).body.id as number;
    const imageId = await insertImageRow(t, projectId, size);
    return { projectId, car, person, imageId };
  }

  const counters = async (projectId: number) => {
    const p = (await alice.get(`/api/projects/${projectId}`)).body;
    return { annotations: p.annotation_count, annotated: p.annotated_image_count };
  };
  const imageCount = async (imageId: number) =>
    (await t.versa.deps.db.selectFrom('images').select('annotation_count').where('id', '=', imageId).executeTakeFirstOrThrow()).annotation_count;
  const rowCount = async () =>
    Number((await t.versa.deps.db.selectFrom('annotations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('creates a box annotation, lists it and reads it back', async () => {
    const { projectId, car, imageId } = await setup();
    const created = await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() });
    assert.equal(created.status, 201);
    const a = created.body;
    assert.ok(a.id > 0);
    assert.equal(a.image_id, imageId);
    assert.equal(a.class_id, car);
    assert.equal(a.annotation_type, 'bbox');
    assert.deepEqual(a.geometry, box());
    assert.equal(a.confidence, null);
    assert.equal(a.source, 'manual');
    assert.ok(Date.parse(a.created_at));
    assert.equal(a.updated_at, a.created_at);

    const list = await alice.get(`/api/images/${imageId}/annotations`);
    assert.equal(list.status, 200);
    assert.equal(list.headers['x-total-count'], '1');
    assert.deepEqual(list.body, [a]);
    const one = await alice.get(`/api/annotations/${a.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, a);
    assert.deepEqual(await counters(projectId), { annotations: 1, annotated: 1 });
  });

  it('keeps image, project and stats counters right as annotations come and go', async () => {
    const { projectId, car, imageId } = await setup();
    const other = await insertImageRow(t, projectId);
    const stats0 = (await alice.get('/api/stats')).body;
    const post = async (image: number) =>
      (await alice.post(`/api/images/${image}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() })).body.id as number;
    const a1 = await post(imageId);
    const a2 = await post(imageId);
    assert.deepEqual(await counters(projectId), { annotations: 2, annotated: 1 });
    const b1 = await post(other);
    assert.deepEqual(await counters(projectId), { annotations: 3, annotated: 2 });
    assert.equal(await imageCount(imageId), 2);
    const stats = (await alice.get('/api/stats')).body;
    assert.equal(stats.total_annotations, stats0.total_annotations + 3);
    assert.equal(stats.annotated_images, stats0.annotated_images + 2);

    assert.equal((await alice.delete(`/api/annotations/${a1}`)).status, 204);
    assert.deepEqual(await counters(projectId), { annotations: 2, annotated: 2 });
    assert.equal((await alice.delete(`/api/annotations/${a2}`)).status, 204);
    assert.deepEqual(await counters(projectId), { annotations: 1, annotated: 1 });
    assert.equal(await imageCount(imageId), 0);
    const gone = await alice.delete(`/api/annotations/${a2}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.detail, `Annotation ${a2} not found`);
    assert.equal((await alice.get(`/api/annotations/${a2}`)).status, 404);
    assert.equal((await alice.delete(`/api/annotations/${b1}`)).status, 204);
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0 });
    const statsAfter = (await alice.get('/api/stats')).body;
    assert.equal(statsAfter.total_annotations, stats0.total_annotations);
    assert.equal(statsAfter.annotated_images, stats0.annotated_images);
  });

  it('keeps counters exact under concurrent creates and deletes', async () => {
    const { projectId, car, imageId } = await setup();
    const images = [imageId, await insertImageRow(t, projectId), await insertImageRow(t, projectId)];
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        alice.post(`/api/images/${images[i % 3]}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box(i, i) }),
      ),
    );
    assert.deepEqual(created.map((r) => r.status), Array(30).fill(201));
    assert.equal(new Set(created.map((r) => r.body.id)).size, 30);
    assert.deepEqual(await counters(projectId), { annotations: 30, annotated: 3 });

    // Two deletes of one annotation race with creates: one delete wins, the other is 404, nothing else suffers.
    const victim = created[0].body.id;
    const mixed = await Promise.all([
      alice.delete(`/api/annotations/${victim}`),
      alice.post(`/api/images/${images[1]}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() }),
      alice.delete(`/api/annotations/${victim}`),
      alice.post(`/api/images/${images[2]}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() }),
    ]);
    assert.deepEqual(mixed.map((r) => r.status).sort(), [201, 201, 204, 404]);
    assert.deepEqual(await counters(projectId), { annotations: 31, annotated: 3 });
    assert.deepEqual(await Promise.all(images.map(imageCount)), [9, 11, 11]);
  });

  it('cuts boxes reaching past the image and refuses boxes with no area inside', async () => {
    const { car, imageId } = await setup();
    const post = (geometry: unknown) => alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry });
    assert.deepEqual((await post(box(-10, 460, 50, 40))).body.geometry, box(0, 460, 40, 20));
    assert.deepEqual((await post(box(600.5, 0, 100, 480))).body.geometry, box(600.5, 0, 39.5, 480));
    const cases: [unknown, (string | number)[]][] = [
      [box(640, 0, 10, 10), ['body', 'geometry']],
      [box(0, -50, 10, 50), ['body', 'geometry']],
      [box(0, 0, 0, 10), ['body', 'geometry', 'width']],
      [box(0, 0, 10, -1), ['body', 'geometry', 'height']],
      [{ x: 0, y: 0, width: 10 }, ['body', 'geometry', 'height']],
      [{ x: 'a', y: 0, width: 10, height: 10 }, ['body', 'geometry', 'x']],
      [{ points: [[0, 0], [1, 0], [0, 1]] }, ['body', 'geometry', 'x']],
    ];
    for (const [geometry, loc] of cases) {
      const res = await post(geometry);
      assert.equal(res.status, 422, JSON.stringify(geometry));
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(geometry));
      assert.equal(typeof res.body.detail[0].msg, 'string');
    }
    assert.equal((await alice.get(`/api/images/${imageId}/annotations`)).body.length, 2);
  });

  it('stores polygons, clipped to the image, and refuses degenerate ones', async () => {
    const { car, imageId } = await setup();
    const post = (geometry: unknown) => alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'polygon', geometry });
    const inside = await post({ points: [[10, 10], [100, 10], [55.5, 90]] });
    assert.equal(inside.status, 201);
    assert.deepEqual(inside.body.geometry, { points: [[10, 10], [100, 10], [55.5, 90]] });
    const over = await post({ points: [[600, 400], [700, 400], [700, 500], [600, 500]] });
    assert.equal(over.status, 201);
    assert.ok(over.body.geometry.points.every(([x, y]: number[]) => x <= 640 && y <= 480));
    const cases: [unknown, (string | number)[]][] = [
      [{ points: [[0, 0], [10, 10]] }, ['body', 'geometry', 'points']],
      [{ points: [[0, 0], [10, 10], [20, 20]] }, ['body', 'geometry', 'points']],
      [{ points: [[700, 0], [800, 0], [800, 100]] }, ['body', 'geometry', 'points']],
      [{ points: [[0, 0], [10, 0], [10]] }, ['body', 'geometry', 'points', 2]],
      [{ points: [[0, 0], [10, 0], [10, 'a']] }, ['body', 'geometry', 'points', 2, 1]],
      [{}, ['body', 'geometry', 'points']],
    ];
    for (const [geometry, loc] of cases) {
      const res = await post(geometry);
      assert.equal(res.status, 422, JSON.stringify(geometry));
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(geometry));
    }
    // JSON numbers too large for a double arrive as Infinity; they are not coordinates.
    const huge = await alice.request({
      method: 'POST',
      url: `/api/images/${imageId}/annotations`,
      headers: { 'content-type': 'application/json' },
      payload: `{"class_id": ${car}, "annotation_type": "polygon", "geometry": {"points": [[0, 0], [1e400, 0], [5, 5]]}}`,
    });
    assert.equal(huge.status, 422);
    assert.deepEqual(huge.body.detail[0].loc, ['body', 'geometry', 'points', 1, 0]);
    assert.equal((await alice.get(`/api/images/${imageId}/annotations`)).body.length, 2);
  });

  it('stores masks the size of the image with their computed box, and refuses inconsistent ones', async () => {
    const { car, imageId } = await setup({ width: 4, height: 3 });
    const data = new Uint8Array(12);
    data[1 * 4 + 1] = 1; // (x 1, y 1)
    data[2 * 4 + 2] = 1; // (x 2, y 2)
    const rle = encodeRle({ width: 4, height: 3, data });
    const post = (geometry: unknown) => alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'mask', geometry });
    const created = await post({ rle });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.geometry, { rle, bbox: { x: 1, y: 1, width: 2, height: 2 } });
    assert.deepEqual((await alice.get(`/api/annotations/${created.body.id}`)).body.geometry, created.body.geometry);

    const cases: [unknown, (string | number)[]][] = [
      [{ rle: { size: [4, 3], counts: [12] } }, ['body', 'geometry', 'rle', 'size']],
      [{ rle: { size: [3, 4], counts: [5, 1] } }, ['body', 'geometry', 'rle', 'counts']],
      [{ rle: { size: [3, 4], counts: [12] } }, ['body', 'geometry', 'rle', 'counts']],
      [{ rle: { size: [3, 4], counts: [5, -1, 8] } }, ['body', 'geometry', 'rle', 'counts']],
      [{ rle: { size: [3, 4], counts: 'PPYo0' } }, ['body', 'geometry', 'rle', 'counts']],
      [{ counts: [12] }, ['body', 'geometry', 'rle']],
    ];
    for (const [geometry, loc] of cases) {
      const res = await post(geometry);
      assert.equal(res.status, 422, JSON.stringify(geometry));
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(geometry));
    }
    assert.equal((await alice.get(`/api/images/${imageId}/annotations`)).body.length, 1);
  });

  it('stores classifications with an empty geometry only', async () => {
    const { car, imageId } = await setup();
    const ok = await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'classification', geometry: {} });
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body.geometry, {});
    const bad = await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'classification', geometry: box() });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc.slice(0, 2), ['body', 'geometry']);
  });

  it('takes confidence and source, and refuses values outside their range', async () => {
    const { projectId, car, imageId } = await setup();
    const post = (extra: object) => alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box(), ...extra });
    const model = await post({ confidence: 0.87, source: 'model:12' });
    assert.equal(model.status, 201);
    assert.equal(model.body.confidence, 0.87);
    assert.equal(model.body.source, 'model:12');
    for (const source of ['yolo', 'sam', 'import', 'manual']) assert.equal((await post({ source, confidence: null })).status, 201);
    const cases: [object, (string | number)[]][] = [
      [{ confidence: 1.5 }, ['body', 'confidence']],
      [{ confidence: -0.1 }, ['body', 'confidence']],
      [{ source: 'robot' }, ['body', 'source']],
      [{ source: 'model:' }, ['body', 'source']],
      [{ annotation_type: 'circle' }, ['body', 'annotation_type']],
      [{ geometry: [1, 2] }, ['body', 'geometry']],
      [{ class_id: undefined }, ['body', 'class_id']],
      [{ class_id: 0 }, ['body', 'class_id']],
    ];
    for (const [extra, loc] of cases) {
      const res = await post(extra);
      assert.equal(res.status, 422, JSON.stringify(extra));
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(extra));
    }
    assert.deepEqual(await counters(projectId), { annotations: 5, annotated: 1 });
  });

  it("refuses a class of another project with 422 at body.class_id, writing nothing", async () => {
    const { projectId, imageId } = await setup();
    const elsewhere = await setup();
    const before = await rowCount();
    for (const classId of [elsewhere.car, 999999]) {
      const res = await alice.post(`/api/images/${imageId}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: box() });
      assert.equal(res.status, 422);
      assert.deepEqual(res.body.detail[0].loc, ['body', 'class_id']);
    }
    assert.equal(await rowCount(), before);
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0 });
    assert.equal(await imageCount(imageId), 0);
  });

  it('replaces an annotation with PUT: type, class and geometry change, counters do not', async () => {
    const { projectId, car, person, imageId } = await setup();
    const created = (await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() })).body;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const replaced = await alice.put(`/api/annotations/${created.id}`, {
      class_id: person, annotation_type: 'polygon', geometry: { points: [[0, 0], [50, 0], [0, 50]] }, confidence: 0.5, source: 'sam',
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.id, created.id);
    assert.equal(replaced.body.image_id, imageId);
    assert.equal(replaced.body.class_id, person);
    assert.equal(replaced.body.annotation_type, 'polygon');
    assert.deepEqual(replaced.body.geometry, { points: [[0, 0], [50, 0], [0, 50]] });
    assert.equal(replaced.body.confidence, 0.5);
    assert.equal(replaced.body.source, 'sam');
    assert.equal(replaced.body.created_at, created.created_at);
    assert.ok(replaced.body.updated_at > created.updated_at);
    assert.deepEqual((await alice.get(`/api/annotations/${created.id}`)).body, replaced.body);
    assert.deepEqual(await counters(projectId), { annotations: 1, annotated: 1 });

    // Bad replacements change nothing.
    const elsewhere = await setup();
    const foreign = await alice.put(`/api/annotations/${created.id}`, { class_id: elsewhere.car, annotation_type: 'bbox', geometry: box() });
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'class_id']);
    const outside = await alice.put(`/api/annotations/${created.id}`, { class_id: car, annotation_type: 'bbox', geometry: box(700, 0) });
    assert.equal(outside.status, 422);
    assert.deepEqual(outside.body.detail[0].loc, ['body', 'geometry']);
    assert.equal((await alice.put(`/api/annotations/${created.id}`, { class_id: car, geometry: box() })).status, 422);
    assert.deepEqual((await alice.get(`/api/annotations/${created.id}`)).body, replaced.body);
    assert.equal((await alice.put('/api/annotations/999999', { class_id: car, annotation_type: 'bbox', geometry: box() })).status, 404);
  });

  it('pages an image\'s annotations with limit, offset and after', async () => {
    const { car, imageId } = await setup();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box(i) })).body.id);
    }
    const first = await alice.get(`/api/images/${imageId}/annotations?limit=2`);
    assert.deepEqual(first.body.map((a: any) => a.id), ids.slice(0, 2));
    assert.equal(first.headers['x-total-count'], '5');
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1];
    assert.match(next, new RegExp(`after=${ids[1]}`));
    assert.deepEqual((await alice.get(next)).body.map((a: any) => a.id), ids.slice(2, 4));
    assert.deepEqual((await alice.get(`/api/images/${imageId}/annotations?offset=3`)).body.map((a: any) => a.id), ids.slice(3));
    assert.equal((await alice.get(`/api/images/${imageId}/annotations?limit=0`)).status, 422);
    assert.equal((await alice.get(`/api/images/${imageId}/annotations?limit=10001`)).status, 422);
  });

  it('answers 401 without credentials on every route', async () => {
    const { car, imageId } = await setup();
    const a = (await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() })).body;
    const anon = t.client();
    const body = { class_id: car, annotation_type: 'bbox', geometry: box() };
    for (const res of [
      await anon.get(`/api/images/${imageId}/annotations`),
      await anon.post(`/api/images/${imageId}/annotations`, body),
      await anon.get(`/api/annotations/${a.id}`),
      await anon.put(`/api/annotations/${a.id}`, body),
      await anon.delete(`/api/annotations/${a.id}`),
    ]) {
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
    assert.equal(await imageCount(imageId), 1);
  });

  it("answers 404 for another user's images and annotations and for unknown ids, changing nothing", async () => {
    const { projectId, car, imageId } = await setup();
    const a = (await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() })).body;
    const body = { class_id: car, annotation_type: 'bbox', geometry: box(1, 1) };
    const before = await rowCount();
    const hidden = [
      await mallory.get(`/api/images/${imageId}/annotations`),
      await mallory.post(`/api/images/${imageId}/annotations`, body),
      await mallory.get(`/api/annotations/${a.id}`),
      await mallory.put(`/api/annotations/${a.id}`, body),
      await mallory.delete(`/api/annotations/${a.id}`),
    ];
    assert.deepEqual(hidden.map((r) => r.status), [404, 404, 404, 404, 404]);
    assert.equal(hidden[0].body.detail, `Image ${imageId} not found`);
    assert.equal(hidden[2].body.detail, `Annotation ${a.id} not found`);
    // Even a bad geometry from a stranger is 404: the image's size is none of their business.
    assert.equal((await mallory.post(`/api/images/${imageId}/annotations`, { ...body, geometry: box(9999, 0) })).status, 404);
    const unknown = [
      await alice.get('/api/images/999999/annotations'),
      await alice.post('/api/images/999999/annotations', body),
      await alice.get('/api/annotations/999999'),
      await alice.delete('/api/annotations/999999'),
    ];
    assert.deepEqual(unknown.map((r) => r.status), [404, 404, 404, 404]);
    assert.equal(await rowCount(), before);
    assert.deepEqual((await alice.get(`/api/annotations/${a.id}`)).body, a);
    assert.deepEqual(await counters(projectId), { annotations: 1, annotated: 1 });
  });

  it('answers 422 for bad ids and 400 for malformed JSON', async () => {
    const { car, imageId } = await setup();
    const path = await alice.get('/api/images/abc/annotations');
    assert.equal(path.status, 422);
    assert.deepEqual(path.body.detail[0].loc, ['path', 'image_id']);
    assert.equal((await alice.get('/api/annotations/0')).status, 422);
    assert.equal((await alice.put('/api/annotations/x', { class_id: car, annotation_type: 'bbox', geometry: box() })).status, 422);
    assert.equal((await alice.delete('/api/annotations/-1')).status, 422);
    const malformed = await alice.request({
      method: 'POST', url: `/api/images/${imageId}/annotations`, headers: { 'content-type': 'application/json' }, payload: '{"class_id": ',
    });
    assert.equal(malformed.status, 400);
    assert.equal(typeof malformed.body.detail, 'string');
    assert.equal(await imageCount(imageId), 0);
  });
});
