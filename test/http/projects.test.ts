import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('projects', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('creates a project with defaults and returns ProjectOut with counters', async () => {
    const owner = await t.user();
    const res = await owner.post('/api/projects', { name: '  Cars  ' });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'Cars');
    assert.equal(res.body.project_type, 'object_detection');
    assert.equal(res.body.description, '');
    assert.equal(res.body.location, '');
    for (const key of ['image_count', 'annotated_image_count', 'annotation_count', 'class_count']) assert.equal(res.body[key], 0);
    assert.match(res.body.created_at, /^\d{4}-\d\d-\d\dT/);
    const got = await owner.get(`/api/projects/${res.body.id}`);
    assert.deepEqual(got.body, res.body);
  });

  it('validates the body with FastAPI-style 422 details', async () => {
    const owner = await t.user();
    const badType = await owner.post('/api/projects', { name: 'x', project_type: 'detection' });
    assert.equal(badType.status, 422);
    assert.deepEqual(badType.body.detail[0].loc, ['body', 'project_type']);
    assert.equal((await owner.post('/api/projects', { name: '' })).status, 422);
    assert.equal((await owner.post('/api/projects', { name: '   ' })).status, 422);
    assert.equal((await owner.post('/api/projects', {})).status, 422);
    assert.equal((await owner.post('/api/projects', [1, 2])).status, 422);
    assert.equal((await owner.get('/api/projects')).body.length, 0, 'no project was created by refused requests');
  });

  it('lists only the caller\'s projects, newest first, with search', async () => {
    const a = await t.user();
    const b = await t.user();
    await a.post('/api/projects', { name: 'Alpha cats' });
    await a.post('/api/projects', { name: 'Beta dogs' });
    await b.post('/api/projects', { name: 'Gamma' });
    const listed = await a.get('/api/projects');
    assert.deepEqual(listed.body.map((p: any) => p.name), ['Beta dogs', 'Alpha cats']);
    assert.deepEqual((await a.get('/api/projects?q=CAT')).body.map((p: any) => p.name), ['Alpha cats']);
    assert.deepEqual((await b.get('/api/projects')).body.map((p: any) => p.name), ['Gamma']);
  });

  it('hides other users\' projects behind 404 on every route', async () => {
    const owner = await t.user();
    const stranger = await t.user();
    const { body: project } = await owner.post('/api/projects', { name: 'Private' });
    assert.equal((await stranger.get(`/api/projects/${project.id}`)).status, 404);
    assert.equal((await stranger.patch(`/api/projects/${project.id}`, { name: 'mine' })).status, 404);
    assert.equal((await stranger.delete(`/api/projects/${project.id}`)).status, 404);
    const bulk = await stranger.post('/api/projects/bulk-delete', { ids: [project.id] });
    assert.deepEqual(bulk.body, { deleted: 0, not_found: [project.id] });
    const still = await owner.get(`/api/projects/${project.id}`);
    assert.equal(still.status, 200);
    assert.equal(still.body.name, 'Private');
    const missing = await owner.get('/api/projects/999999');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.detail, 'Project 999999 not found');
  });

  it('updates with PATCH and refuses bad updates without changing anything', async () => {
    const owner = await t.user();
    const { body: project } = await owner.post('/api/projects', { name: 'Old', description: 'd' });
    const patched = await owner.patch(`/api/projects/${project.id}`, { name: 'New', project_type: 'classification' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'New');
    assert.equal(patched.body.project_type, 'classification');
    assert.equal(patched.body.description, 'd');
    assert.equal((await owner.patch(`/api/projects/${project.id}`, { project_type: 'nope' })).status, 422);
    assert.equal((await owner.patch(`/api/projects/${project.id}`, {})).status, 422);
    assert.equal((await owner.patch('/api/projects/abc', { name: 'x' })).status, 422);
    assert.equal((await owner.get(`/api/projects/${project.id}`)).body.project_type, 'classification');
  });

  it('deletes one project (204) and several with bulk-delete', async () => {
    const owner = await t.user();
    const ids = [];
    for (const name of ['a', 'b', 'c']) ids.push((await owner.post('/api/projects', { name })).body.id);
    const del = await owner.delete(`/api/projects/${ids[0]}`);
    assert.equal(del.status, 204);
    assert.equal(del.raw.length, 0);
    assert.equal((await owner.get(`/api/projects/${ids[0]}`)).status, 404);
    const bulk = await owner.post('/api/projects/bulk-delete', { ids: [ids[1], ids[2], 424242] });
    assert.equal(bulk.status, 200);
    assert.deepEqual(bulk.body, { deleted: 2, not_found: [424242] });
    assert.equal((await owner.get('/api/projects')).body.length, 0);
    assert.equal((await owner.post('/api/projects/bulk-delete', { ids: [] })).status, 422);
    assert.equal((await owner.post('/api/projects/bulk-delete', { ids: ['x'] })).status, 422);
  });

  it('lets the instance admin see every project', async () => {
    // The first account registered in this file's database is the instance admin.
    const users = await t.versa.deps.db.selectFrom('users').select(['id', 'is_admin']).orderBy('id').execute();
    assert.equal(users[0].is_admin, 1);
    assert.ok(users.slice(1).every((u) => u.is_admin === 0));
  });

  it('answers 401 without credentials on every project route', async () => {
    const anon = t.client();
    for (const [method, url] of [
      ['GET', '/api/projects'], ['POST', '/api/projects'], ['GET', '/api/projects/1'], ['PATCH', '/api/projects/1'],
      ['DELETE', '/api/projects/1'], ['POST', '/api/projects/bulk-delete'],
    ] as const) {
      const res = await anon.request({ method, url, payload: {} });
      assert.equal(res.status, 401, `${method} ${url}`);
    }
  });
});
