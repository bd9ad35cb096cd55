/**
 * Issue 24, item 8: creation accepted what running refuses. A pipeline naming another project's model, version or
 * class by id, a `train` step with `epochs: 1e9`, `imgsz: 100000` or unknown keys, and an empty step list are 422
 * with their paths at creation (JSON and YAML), on update and in `validate`, and nothing is saved.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uploadPpeDetector } from '../helpers/ppe.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Problem = { loc: (string | number)[]; msg: string; path: string };

const train = (params: Record<string, unknown>, version_id?: number) => ({
  name: 'train',
  steps: [{ id: 'train', type: 'train', params: { adapter: 'versa-detect', ...(version_id ? { version_id } : {}), params } }],
});

describe('pipeline creation checks what running checks', () => {
  let t: TestApp;
  let alice: User;
  let bob: User;
  let project: number;
  let ownVersion: number;
  let ownModel: number;
  let othersModel: number;
  let othersVersion: number;
  let othersClass: number;
  let orgId: number;
  let orgProjectVersion: number;

  before(async () => {
    t = await startTestApp();
    await t.user();
    alice = await t.user();
    bob = await t.user();
    project = (await alice.post('/api/projects', { name: 'mine' })).body.id;
    ownVersion = (await alice.post(`/api/projects/${project}/versions`, { name: 'v1' })).body.id;
    ownModel = (await uploadPpeDetector(alice, project)).id;
    const others = (await bob.post('/api/projects', { name: 'theirs' })).body.id;
    othersModel = (await uploadPpeDetector(bob, others)).id;
    othersVersion = (await bob.post(`/api/projects/${others}/versions`, { name: 'v1' })).body.id;
    othersClass = (await bob.post(`/api/projects/${others}/classes`, { name: 'secret' })).body.id;
    orgId = (await alice.post('/api/orgs', { name: 'alice org' })).body.id;
    const orgProject = (await alice.post('/api/projects', { name: 'in org', org_id: orgId })).body.id;
    orgProjectVersion = (await alice.post(`/api/projects/${orgProject}/versions`, { name: 'v1' })).body.id;
    assert.ok(ownVersion && ownModel && othersModel && othersVersion && othersClass && orgProjectVersion);
  });
  after(() => t.close());

  const count = async () => (await alice.get(`/api/pipelines?project_id=${project}`)).body.length as number;
  const paths = (body: { detail: Problem[] }) => body.detail.map((p) => p.path);

  it("refuses another project's model, version or class named by id, at creation, update and validate", async () => {
    const before = await count();
    const definition = {
      name: 'borrowed',
      steps: [
        { id: 's', type: 'select_images', params: { source: 'version', version_id: othersVersion, class_ids: [othersClass] } },
        { id: 'd', type: 'detect', needs: ['s'], params: { model: othersModel } },
        { id: 'e', type: 'export', params: { format: 'coco', version_id: othersVersion } },
        { id: 't', type: 'train', params: { adapter: 'versa-detect', version_id: othersVersion } },
      ],
    };
    const created = await alice.post('/api/pipelines', { project_id: project, definition });
    assert.equal(created.status, 422, JSON.stringify(created.body));
    assert.deepEqual(paths(created.body).sort(), [
      'steps[0].params.class_ids[0]', 'steps[0].params.version_id', 'steps[1].params.model', 'steps[2].params.version_id', 'steps[3].params.version_id',
    ]);
    assert.match(created.body.detail.find((p: Problem) => p.path === 'steps[1].params.model').msg, new RegExp(`model ${othersModel} is not a model of project ${project}`));
    assert.deepEqual(created.body.detail[0].loc.slice(0, 2), ['body', 'definition']);
    assert.equal(await count(), before, 'nothing saved');

    // The same records of the pipeline's own project are fine.
    const own = {
      name: 'own',
      steps: [
        { id: 's', type: 'select_images', params: { source: 'version', version_id: ownVersion } },
        { id: 'd', type: 'detect', needs: ['s'], params: { model: ownModel } },
      ],
    };
    const saved = await alice.post('/api/pipelines', { project_id: project, definition: own });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    const changed = await alice.put(`/api/pipelines/${saved.body.id}`, { definition });
    assert.equal(changed.status, 422);
    assert.deepEqual((await alice.get(`/api/pipelines/${saved.body.id}`)).body.definition, own, 'a refused change changes nothing');

    const checked = await alice.post(`/api/pipelines/validate?project_id=${project}`, definition);
    assert.equal(checked.status, 200);
    assert.equal(checked.body.valid, false);
    assert.ok(checked.body.errors.some((e: { path: string }) => e.path === 'steps[1].params.model'), JSON.stringify(checked.body));
    // Without a project, the ids must be of a project the caller sees: bob's are not alice's.
    const alone = await alice.post('/api/pipelines/validate', definition);
    assert.equal(alone.body.valid, false);
    assert.ok(alone.body.errors.some((e: { path: string; message: string }) => e.path === 'steps[1].params.model' && /a project you can see/.test(e.message)), JSON.stringify(alone.body));
    assert.equal((await bob.post('/api/pipelines/validate', definition)).body.valid, true, 'they are his');
    // An id no id column can hold names nothing (PostgreSQL's integer would refuse it: 500 if it were looked up).
    const huge = await alice.post('/api/pipelines', { project_id: project, definition: { name: 'huge', steps: [{ id: 's', type: 'select_images', params: { version_id: 1e15 } }] } });
    assert.equal(huge.status, 422, JSON.stringify(huge.body));
    assert.equal(huge.body.detail[0].path, 'steps[0].params.version_id');
  });

  it("an organization's pipeline names records of the organization's projects only", async () => {
    const inOrg = await alice.post('/api/pipelines', { org_id: orgId, definition: { name: 'org', steps: [{ id: 'e', type: 'export', params: { format: 'coco', version_id: orgProjectVersion } }] } });
    assert.equal(inOrg.status, 201, JSON.stringify(inOrg.body));
    const outside = await alice.post('/api/pipelines', { org_id: orgId, definition: { name: 'org', steps: [{ id: 'e', type: 'export', params: { format: 'coco', version_id: ownVersion } }] } });
    assert.equal(outside.status, 422);
    assert.match(outside.body.detail[0].msg, new RegExp(`version ${ownVersion} is not a version of a project of organization ${orgId}`));
  });

  it("checks a train step's params against the training route's schema", async () => {
    const before = await count();
    for (const [params, path] of [
      [{ epochs: 1e9 }, 'steps[0].params.params.epochs'],
      [{ imgsz: 100000 }, 'steps[0].params.params.imgsz'],
      [{ epochs: 2, learning_rate: 0.1 }, 'steps[0].params.params.learning_rate'],
      [{ device: 'tpu' }, 'steps[0].params.params.device'],
    ] as const) {
      const res = await alice.post('/api/pipelines', { project_id: project, definition: train(params, ownVersion) });
      assert.equal(res.status, 422, `${JSON.stringify(params)}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(paths(res.body), [path]);
      const checked = await alice.post('/api/pipelines/validate', train(params));
      assert.deepEqual(checked.body.errors.map((e: { path: string }) => e.path), [path], 'validate says the same');
    }
    const yaml = await alice.request({
      method: 'POST',
      url: `/api/pipelines/from-yaml?project_id=${project}`,
      payload: 'name: y\nsteps:\n  - id: train\n    type: train\n    params:\n      adapter: versa-detect\n      params:\n        imgsz: 100000\n',
      headers: { 'content-type': 'application/yaml' },
    });
    assert.equal(yaml.status, 422);
    assert.equal(yaml.body.detail[0].path, 'steps[0].params.params.imgsz');
    assert.equal(yaml.body.detail[0].line, 8);
    assert.equal(await count(), before, 'nothing saved');
    assert.equal((await alice.post('/api/pipelines', { project_id: project, definition: train({ epochs: 5, imgsz: 320, batch: 4 }, ownVersion) })).status, 201);
  });

  it('checks create_version and export steps against their routes\' schemas', async () => {
    const version = await alice.post('/api/pipelines', { project_id: project, definition: { name: 'v', steps: [{ id: 'v', type: 'create_version', params: { name: 'n', include_predictions: 'yes' } }] } });
    assert.equal(version.status, 422);
    assert.equal(version.body.detail[0].path, 'steps[0].params.include_predictions');
    const exported = await alice.post('/api/pipelines', { project_id: project, definition: { name: 'e', steps: [{ id: 'e', type: 'export', params: { format: 'coco', include_predictions: true } }] } });
    assert.equal(exported.status, 201, 'the export route takes include_predictions, so the step does too');
  });

  it('refuses an empty step list instead of saving the example', async () => {
    const before = await count();
    const res = await alice.post('/api/pipelines', { project_id: project, definition: { name: 'nothing', steps: [] } });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.detail[0].loc, ['body', 'definition', 'steps']);
    assert.equal(res.body.detail[0].msg, 'a pipeline needs at least one step');
    assert.equal(await count(), before);
    assert.equal((await alice.post('/api/pipelines', { project_id: project, definition: {} })).body.name, 'Protective equipment check', 'an empty definition is still the example');
  });
});
