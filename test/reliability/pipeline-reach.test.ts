/**
 * Issue 24, item 7: a pipeline is owned by a project or by an organization (or, saved without either, by its creator
 * alone); seeing, running and changing it needs access to its owner, an organization's pipeline runs only on the
 * organization's projects, and a run keeps the definition it ran. Global pipelines move to their creator's
 * organization (migration 0020).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { migratedTestDatabase, startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const counting = { name: 'count', steps: [{ id: 's', type: 'select_images' }, { id: 'r', type: 'report', needs: ['s'] }] };

describe("pipelines' reach", () => {
  let t: TestApp;
  let olga: User; // owns the organization
  let max: User; // a member of the organization, viewer of its project
  let sam: User; // belongs to neither
  let orgId: number;
  let orgProject: number;
  let olgasOwnProject: number;
  let samsProject: number;

  before(async () => {
    t = await startTestApp();
    await t.user(); // the instance admin
    olga = await t.user();
    max = await t.user();
    sam = await t.user();
    orgId = (await olga.post('/api/orgs', { name: 'inspections' })).body.id;
    assert.equal((await olga.post(`/api/orgs/${orgId}/members`, { user_id: max.id, role: 'member' })).status, 201);
    orgProject = (await olga.post('/api/projects', { name: 'site a', org_id: orgId })).body.id;
    assert.equal((await olga.post(`/api/projects/${orgProject}/members`, { user_id: max.id, role: 'viewer' })).status, 201);
    olgasOwnProject = (await olga.post('/api/projects', { name: 'olga alone' })).body.id;
    samsProject = (await sam.post('/api/projects', { name: 'sam' })).body.id;
  });
  after(() => t.close());

  const finished = async (client: User, runId: number) => {
    await t.versa.deps.queue.drain();
    for (let i = 0; i < 100; i++) {
      const run = (await client.get(`/api/pipeline-runs/${runId}`)).body;
      if (!['queued', 'running'].includes(run.status)) return run;
      await sleep(50);
    }
    throw new Error('run did not finish');
  };

  it("an organization's pipeline: its members list it and run it on its projects; only its owners and admins change it", async () => {
    const created = await olga.post('/api/pipelines', { org_id: orgId, definition: counting });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.org_id, orgId);
    assert.equal(created.body.project_id, null);
    const id = created.body.id as number;

    assert.equal((await max.get(`/api/pipelines/${id}`)).status, 200);
    assert.ok((await max.get('/api/pipelines')).body.some((p: { id: number }) => p.id === id));
    assert.deepEqual((await max.get(`/api/pipelines?org_id=${orgId}`)).body.map((p: { id: number }) => p.id), [id]);
    const run = await max.post(`/api/pipelines/${id}/run`, { project_id: orgProject });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal((await finished(max, run.body.id)).status, 'succeeded');
    assert.equal((await max.put(`/api/pipelines/${id}`, { name: 'mine now' })).status, 403);
    assert.equal((await max.delete(`/api/pipelines/${id}`)).status, 403);
    assert.equal((await max.post('/api/pipelines', { org_id: orgId, definition: counting })).status, 403, 'members do not create for the organization');

    const outside = await olga.post(`/api/pipelines/${id}/run`, { project_id: olgasOwnProject });
    assert.equal(outside.status, 422, 'it runs on the organization projects only');
    assert.match(JSON.stringify(outside.body.detail), /not one of its projects/);
    assert.equal((await olga.post(`/api/pipelines/${id}/run`, {})).status, 422, 'it needs a project to run on');
    assert.equal((await olga.put(`/api/pipelines/${id}`, { name: 'daily count' })).status, 200);
    assert.equal((await max.get(`/api/pipelines/${id}`)).body.name, 'daily count');
  });

  it('another account can neither list, read, run, change nor delete a pipeline it has no access to', async () => {
    const orgPipeline = (await olga.post('/api/pipelines', { org_id: orgId, definition: counting })).body.id as number;
    const projectPipeline = (await olga.post('/api/pipelines', { project_id: orgProject, definition: counting })).body.id as number;
    const ownPipeline = (await olga.post('/api/pipelines', { definition: counting })).body.id as number;
    const listed = (await sam.get('/api/pipelines')).body.map((p: { id: number }) => p.id);
    for (const id of [orgPipeline, projectPipeline, ownPipeline]) {
      assert.ok(!listed.includes(id), `pipeline ${id} listed`);
      assert.equal((await sam.get(`/api/pipelines/${id}`)).status, 404);
      assert.equal((await sam.get(`/api/pipelines/${id}/yaml`)).status, 404);
      assert.equal((await sam.get(`/api/pipelines/${id}/runs`)).status, 404);
      assert.equal((await sam.post(`/api/pipelines/${id}/run`, { project_id: samsProject })).status, 404, `run ${id} on their own project`);
      assert.equal((await sam.put(`/api/pipelines/${id}`, { name: 'taken' })).status, 404);
      assert.equal((await sam.delete(`/api/pipelines/${id}`)).status, 404);
    }
    assert.equal((await sam.get(`/api/pipelines?org_id=${orgId}`)).status, 404);
    assert.equal((await sam.post('/api/pipelines', { org_id: orgId, definition: counting })).status, 404);
    assert.equal((await max.get(`/api/pipelines/${ownPipeline}`)).status, 404, "an organization member does not see its owner's own pipelines");
    assert.equal((await olga.get(`/api/pipelines/${ownPipeline}`)).body.name, 'count', 'nothing changed');
  });

  it('refuses an owner given twice', async () => {
    const both = await olga.post('/api/pipelines', { project_id: orgProject, org_id: orgId, definition: counting });
    assert.equal(both.status, 422);
    assert.deepEqual(both.body.detail[0].loc, ['body', 'org_id']);
  });

  it("a run keeps the definition it ran: a later edit does not change the run's history", async () => {
    const pipeline = (await olga.post('/api/pipelines', { project_id: orgProject, definition: counting })).body;
    const run = await finished(olga, (await olga.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.deepEqual(run.definition, counting);
    const edited = await olga.put(`/api/pipelines/${pipeline.id}`, { definition: { name: 'select only', steps: [{ id: 'only', type: 'select_images', params: { limit: 1 } }] } });
    assert.equal(edited.status, 200);
    const again = (await olga.get(`/api/pipeline-runs/${run.id}`)).body;
    assert.deepEqual(again.definition, counting);
    assert.deepEqual(again.steps.map((s: { id: string }) => s.id), ['s', 'r']);
    assert.deepEqual((await olga.get(`/api/pipelines/${pipeline.id}/runs`)).body[0].definition, counting);
    const next = await finished(olga, (await olga.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.equal(next.definition.name, 'select only');
  });
});

describe('migration 0020: global pipelines get an owner', () => {
  it("moves each to the organization its creator owns or administers, and keeps the others to their creator", async () => {
    const now = new Date().toISOString();
    const { database, seeded, close } = await migratedTestDatabase('0019-project-revision-parts', async (db: Db) => {
      const user = async (email: string) => (await db.insertInto('users').values({ email, password_hash: 'x', display_name: email, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
      const org = async (name: string) => (await (db as any).insertInto('orgs').values({ name, created_by: null, created_at: now }).returning('id').executeTakeFirstOrThrow()).id as number;
      const member = (org_id: number, user_id: number, role: string) => (db as any).insertInto('org_members').values({ org_id, user_id, role, created_at: now }).execute();
      const pipeline = async (created_by: number, project_id: number | null = null) => (await (db as any)
        .insertInto('pipelines')
        .values({ project_id, name: 'p', description: '', definition: JSON.stringify(counting), yaml_source: null, created_by, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow()).id as number;
      const [admin, owner, member_, loner] = [await user('a@x'), await user('o@x'), await user('m@x'), await user('l@x')];
      const [first, second, third] = [await org('first'), await org('second'), await org('third')];
      await member(first, admin, 'admin');
      await member(second, admin, 'member');
      await member(second, owner, 'admin');
      await member(third, owner, 'owner');
      await member(first, member_, 'member');
      const project = (await db.insertInto('projects').values({ owner_id: owner, name: 'x', description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
      return {
        orgs: { first, third },
        byAdmin: await pipeline(admin),
        byOwner: await pipeline(owner),
        byMember: await pipeline(member_),
        byLoner: await pipeline(loner),
        ofProject: await pipeline(owner, project),
      };
    });
    try {
      const rows = await database.db.selectFrom('pipelines').select(['id', 'project_id', 'org_id']).execute();
      const orgOf = (id: number) => rows.find((r) => r.id === id)!.org_id;
      assert.equal(orgOf(seeded.byAdmin), seeded.orgs.first, 'the organization its creator administers');
      assert.equal(orgOf(seeded.byOwner), seeded.orgs.third, 'an organization its creator owns comes first');
      assert.equal(orgOf(seeded.byMember), null, "a plain member's pipeline stays its own");
      assert.equal(orgOf(seeded.byLoner), null);
      assert.equal(orgOf(seeded.ofProject), null, "a project's pipeline stays the project's");
    } finally {
      await close();
    }
  });
});
