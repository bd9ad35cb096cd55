import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('classes', () => {
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

  const newProject = async (client: Client = alice) => (await client.post('/api/projects', { name: 'p' })).body.id as number;
  const project = async (id: number) => (await alice.get(`/api/projects/${id}`)).body;
  const classNames = async (projectId: number) => (await alice.get(`/api/projects/${projectId}/classes`)).body.map((c: any) => c.name);
  const annotate = async (imageId: number, classId: number) => {
    const res = await alice.post(`/api/images/${imageId}/annotations`, {
      class_id: classId, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 },
    });
    assert.equal(res.status, 201);
  };

  it('keeps the modalities a class is for, null for every modality; an unknown modality is 422 naming the allowed ones (issue 30)', async () => {
    const id = await newProject();
    const span = await alice.post(`/api/projects/${id}/classes`, { name: 'PER', modalities: ['text'] });
    assert.equal(span.status, 201, JSON.stringify(span.body));
    assert.deepEqual(span.body.modalities, ['text']);
    const any = await alice.post(`/api/projects/${id}/classes`, { name: 'cat' });
    assert.equal(any.body.modalities, null);
    const bad = await alice.post(`/api/projects/${id}/classes`, { name: 'dog', modalities: ['smell'] });
    assert.equal(bad.status, 422);
    assert.match(JSON.stringify(bad.body.detail), /must be one of image, text, tabular, audio, video, llm/);
    const changed = await alice.patch(`/api/classes/${any.body.id}`, { modalities: ['tabular', 'image'] });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.modalities, ['tabular', 'image']);
    const listed = (await alice.get(`/api/projects/${id}/classes`)).body.map((c: { name: string; modalities: string[] | null }) => [c.name, c.modalities]);
    assert.deepEqual(listed, [['PER', ['text']], ['cat', ['tabular', 'image']]]);
    assert.equal((await alice.patch(`/api/classes/${any.body.id}`, { modalities: null })).body.modalities, null);
  });

  it('creates classes with palette colours by index, or the colour given, and lists them in creation order', async () => {
    const id = await newProject();
    const car = await alice.post(`/api/projects/${id}/classes`, { name: 'car' });
    assert.equal(car.status, 201);
    assert.equal(car.body.project_id, id);
    assert.equal(car.body.name, 'car');
    assert.equal(car.body.color, '#ec1313');
    assert.equal(car.body.annotation_count, 0);
    assert.ok(Date.parse(car.body.created_at));
    const person = await alice.post(`/api/projects/${id}/classes`, { name: '  person ' });
    assert.equal(person.body.name, 'person');
    assert.equal(person.body.color, '#932110');
    const sign = await alice.post(`/api/projects/${id}/classes`, { name: 'sign', color: '#AABBCC' });
    assert.equal(sign.body.color, '#aabbcc');

    const list = await alice.get(`/api/projects/${id}/classes`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((c: any) => [c.id, c.name, c.color, c.annotation_count]), [
      [car.body.id, 'car', '#ec1313', 0],
      [person.body.id, 'person', '#932110', 0],
      [sign.body.id, 'sign', '#aabbcc', 0],
    ]);
    assert.equal((await project(id)).class_count, 3);
  });

  it('refuses a duplicate name in the same project with 409 and changes nothing', async () => {
    const id = await newProject();
    assert.equal((await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).status, 201);
    const dup = await alice.post(`/api/projects/${id}/classes`, { name: ' car', color: '#000000' });
    assert.equal(dup.status, 409);
    assert.match(dup.body.detail, /car/);
    assert.deepEqual(await classNames(id), ['car']);
    assert.equal((await project(id)).class_count, 1);
    // Names are per project, and case-sensitive.
    assert.equal((await alice.post(`/api/projects/${await newProject()}/classes`, { name: 'car' })).status, 201);
    assert.equal((await alice.post(`/api/projects/${id}/classes`, { name: 'Car' })).status, 201);
  });

  it('answers 422 for bad bodies and ids, writing nothing', async () => {
    const id = await newProject();
    const cases: [unknown, (string | number)[]][] = [
      [{}, ['body', 'name']],
      [{ name: '' }, ['body', 'name']],
      [{ name: '   ' }, ['body', 'name']],
      [{ name: 'x'.repeat(101) }, ['body', 'name']],
      [{ name: 'car', color: 'red' }, ['body', 'color']],
      [{ name: 'car', color: '#12345' }, ['body', 'color']],
      [{ name: 'car', color: '#gggggg' }, ['body', 'color']],
    ];
    for (const [body, loc] of cases) {
      const res = await alice.post(`/api/projects/${id}/classes`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(body));
    }
    const badPath = await alice.get('/api/projects/abc/classes');
    assert.equal(badPath.status, 422);
    assert.deepEqual(badPath.body.detail[0].loc, ['path', 'id']);
    assert.equal((await alice.post('/api/projects/0/classes', { name: 'x' })).status, 422);
    assert.equal((await alice.patch('/api/classes/abc', { name: 'x' })).status, 422);
    assert.equal((await alice.delete('/api/classes/abc')).status, 422);
    assert.deepEqual(await classNames(id), []);
    assert.equal((await project(id)).class_count, 0);
  });

  it('answers 401 without credentials on every route', async () => {
    const id = await newProject();
    const cls = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    const anon = t.client();
    for (const res of [
      await anon.get(`/api/projects/${id}/classes`),
      await anon.post(`/api/projects/${id}/classes`, { name: 'x' }),
      await anon.patch(`/api/classes/${cls.id}`, { name: 'x' }),
      await anon.delete(`/api/classes/${cls.id}`),
    ]) {
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
    assert.deepEqual(await classNames(id), ['car']);
  });

  it("answers 404 for another user's project or class and for unknown ids, changing nothing", async () => {
    const id = await newProject();
    const cls = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    for (const res of [
      await mallory.get(`/api/projects/${id}/classes`),
      await mallory.post(`/api/projects/${id}/classes`, { name: 'x' }),
      await mallory.patch(`/api/classes/${cls.id}`, { name: 'x' }),
      await mallory.delete(`/api/classes/${cls.id}`),
      await mallory.delete(`/api/classes/${cls.id}?cascade=true`),
    ]) {
      assert.equal(res.status, 404);
      assert.equal(typeof res.body.detail, 'string');
    }
    assert.equal((await alice.get('/api/projects/999999/classes')).status, 404);
    assert.equal((await alice.post('/api/projects/999999/classes', { name: 'x' })).status, 404);
    const unknown = await alice.patch('/api/classes/999999', { name: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.detail, 'Class 999999 not found');
    assert.equal((await alice.delete('/api/classes/999999')).status, 404);
    assert.deepEqual(await classNames(id), ['car']);
    assert.equal((await project(id)).class_count, 1);
  });

  it('renames and recolours a class; a taken name is 409', async () => {
    const id = await newProject();
    const car = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    await alice.post(`/api/projects/${id}/classes`, { name: 'truck' });
    const renamed = await alice.patch(`/api/classes/${car.id}`, { name: ' automobile ' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'automobile');
    assert.equal(renamed.body.color, car.color);
    const recoloured = await alice.patch(`/api/classes/${car.id}`, { color: '#FF0000' });
    assert.equal(recoloured.body.color, '#ff0000');
    assert.equal(recoloured.body.name, 'automobile');
    const taken = await alice.patch(`/api/classes/${car.id}`, { name: 'truck' });
    assert.equal(taken.status, 409);
    assert.equal((await alice.patch(`/api/classes/${car.id}`, {})).status, 422);
    assert.equal((await alice.patch(`/api/classes/${car.id}`, { colour: '#000000' })).status, 422);
    const badColor = await alice.patch(`/api/classes/${car.id}`, { color: 'blue' });
    assert.equal(badColor.status, 422);
    assert.deepEqual(badColor.body.detail[0].loc, ['body', 'color']);
    assert.deepEqual(await classNames(id), ['automobile', 'truck']);
  });

  it('deletes an unused class with 204 and keeps class_count right', async () => {
    const id = await newProject();
    const car = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    await alice.post(`/api/projects/${id}/classes`, { name: 'person' });
    const res = await alice.delete(`/api/classes/${car.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.raw.length, 0);
    assert.deepEqual(await classNames(id), ['person']);
    assert.equal((await project(id)).class_count, 1);
    assert.equal((await alice.delete(`/api/classes/${car.id}`)).status, 404);
  });

  it('refuses to delete a class in use with 409 and its count, unless cascade=true, keeping every counter right', async () => {
    const id = await newProject();
    const car = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    const person = (await alice.post(`/api/projects/${id}/classes`, { name: 'person' })).body;
    const first = await insertImageRow(t, id);
    const second = await insertImageRow(t, id);
    await annotate(first, car.id);
    await annotate(first, car.id);
    await annotate(first, person.id);
    await annotate(second, car.id);
    const statsBefore = (await alice.get('/api/stats')).body;

    const refused = await alice.delete(`/api/classes/${car.id}`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.annotation_count, 3);
    assert.match(refused.body.detail, /^Class 'car' is used by 3 annotations; .*cascade=true/);
    const listed = (await alice.get(`/api/projects/${id}/classes`)).body;
    assert.deepEqual(listed.map((c: any) => [c.name, c.annotation_count]), [['car', 3], ['person', 1]]);
    assert.equal((await project(id)).annotation_count, 4);

    assert.equal((await alice.delete(`/api/classes/${car.id}?cascade=maybe`)).status, 422);
    const cascaded = await alice.delete(`/api/classes/${car.id}?cascade=true`);
    assert.equal(cascaded.status, 200);
    assert.deepEqual(cascaded.body, { deleted_annotations: 3 });

    assert.deepEqual(await classNames(id), ['person']);
    const after = await project(id);
    assert.equal(after.class_count, 1);
    assert.equal(after.annotation_count, 1);
    assert.equal(after.annotated_image_count, 1);
    const firstList = await alice.get(`/api/images/${first}/annotations`);
    assert.equal(firstList.headers['x-total-count'], '1');
    assert.deepEqual(firstList.body.map((a: any) => a.class_id), [person.id]);
    const secondList = await alice.get(`/api/images/${second}/annotations`);
    assert.equal(secondList.headers['x-total-count'], '0');
    assert.deepEqual(secondList.body, []);
    const stats = (await alice.get('/api/stats')).body;
    assert.equal(stats.total_annotations, statsBefore.total_annotations - 3);
    assert.equal(stats.annotated_images, statsBefore.annotated_images - 1);
  });

  it('answers 200 with zero deleted annotations when cascading an unused class', async () => {
    const id = await newProject();
    const cls = (await alice.post(`/api/projects/${id}/classes`, { name: 'car' })).body;
    const res = await alice.delete(`/api/classes/${cls.id}?cascade=true`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { deleted_annotations: 0 });
    assert.equal((await project(id)).class_count, 0);
  });

  it('describes the class routes in the OpenAPI document', async () => {
    const doc = (await t.client().get('/openapi.json')).body;
    const remove = doc.paths['/api/classes/{class_id}'].delete;
    assert.ok(remove.responses['200'] && remove.responses['204'] && remove.responses['409']);
    assert.match(remove.description, /cascade=true/);
    assert.ok(doc.paths['/api/projects/{id}/classes'].post.responses['201']);
  });
});
