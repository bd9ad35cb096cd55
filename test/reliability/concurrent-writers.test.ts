/**
 * Drill (issue 11, Medium 7): 50 concurrent clients create and delete annotations, delete images one by one and in
 * bulk, in one project. No request may answer 500 (PostgreSQL answered `deadlock detected`), and afterwards every
 * counter equals its rows. Runs on SQLite and, with DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('50 concurrent writers', { timeout: 120_000 }, () => {
  let t: TestApp;
  let owner: User;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
  });
  after(() => t.close());

  it('no 500, and counters equal rows afterwards', async () => {
    const projectId = (await owner.post('/api/projects', { name: 'busy' })).body.id as number;
    const classId = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const images: number[] = [];
    for (let i = 0; i < 60; i++) images.push(await insertImageRow(t, projectId));
    // The helper writes rows only; the project's counter is set to match them.
    await t.versa.deps.db.updateTable('projects').set({ image_count: images.length }).where('id', '=', projectId).execute();
    const box = { class_id: classId, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 10, height: 10 } };
    const annotations: number[] = [];
    for (const image of images) for (let k = 0; k < 3; k++) annotations.push((await owner.post(`/api/images/${image}/annotations`, box)).body.id);

    const statuses: number[] = [];
    const client = async (c: number) => {
      for (let step = 0; step < 6; step++) {
        const image = images[(c * 7 + step * 13) % images.length];
        let res;
        switch ((c + step) % 5) {
          case 0: res = await owner.post(`/api/images/${image}/annotations`, box); break;
          case 1: res = await owner.delete(`/api/annotations/${annotations[(c * 11 + step) % annotations.length]}`); break;
          case 2: res = await owner.post('/api/images/bulk-delete', { ids: [image, images[(c + 1) % images.length], images[(c + 29) % images.length]] }); break;
          case 3: res = await owner.delete(`/api/images/${image}`); break;
          default: res = await owner.post(`/api/images/${images[(c * 3 + step) % images.length]}/annotations`, box); break;
        }
        statuses.push(res.status);
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, c) => client(c)));
    const errors = statuses.filter((s) => s >= 500);
    assert.deepEqual(errors, [], `statuses: ${JSON.stringify(Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])))}`);

    const db = t.versa.deps.db;
    const project = (await owner.get(`/api/projects/${projectId}`)).body;
    const count = async (table: 'images' | 'annotations') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow()).n);
    assert.equal(project.image_count, await count('images'));
    assert.equal(project.annotation_count, await count('annotations'));
    const annotated = Number((await db.selectFrom('images').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).where('annotation_count', '>', 0).executeTakeFirstOrThrow()).n);
    assert.equal(project.annotated_image_count, annotated);
    for (const image of await db.selectFrom('images').select(['id', 'annotation_count']).where('project_id', '=', projectId).execute()) {
      const real = Number((await db.selectFrom('annotations').select((eb) => eb.fn.countAll<number>().as('n')).where('image_id', '=', image.id).executeTakeFirstOrThrow()).n);
      assert.equal(image.annotation_count, real, `image ${image.id}`);
    }
  });
});
