import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { ppeImage, uploadImages, uploadPpeDetector } from '../helpers/ppe.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const yaml = (client: User | ReturnType<TestApp['client']>, url: string, text: string) =>
  client.request({ method: 'POST', url, payload: text, headers: { 'content-type': 'application/yaml' } });

describe('pipelines', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  let annie: User;
  let projectId: number;
  let hooks: Server;
  let hookUrl: string;
  const received: { url: string; body: any }[] = [];

  before(async () => {
    // A local receiver stands in for the operator's webhook endpoint (no request leaves the machine).
    hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ url: req.url!, body: JSON.parse(body) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks/`;
    t = await startTestApp({ WEBHOOK_ALLOWLIST: `https://hooks.example.com/versa/,${hookUrl}` });
    await t.user(); // the first account is instance admin; keep it out of the way
    alice = await t.user();
    mallory = await t.user();
    annie = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'site photos' })).body.id;
    const added = await alice.post(`/api/projects/${projectId}/members`, { user_id: annie.id, role: 'annotator' });
    assert.equal(added.status, 201, JSON.stringify(added.body));
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => hooks.close(resolve));
  });

  const waitForRun = async (client: User, runId: number) => {
    await t.versa.deps.queue.drain();
    for (let i = 0; i < 100; i++) {
      const run = (await client.get(`/api/pipeline-runs/${runId}`)).body;
      if (!['queued', 'running'].includes(run.status)) return run;
      await sleep(50);
    }
    throw new Error('run did not finish');
  };

  it('answers 401 without credentials on every route', async () => {
    const anonymous = t.client();
    for (const [method, url] of [
      ['GET', '/api/pipelines/step-types'], ['GET', '/api/pipelines/example'], ['GET', '/api/pipelines'], ['POST', '/api/pipelines'],
      ['GET', '/api/pipelines/1'], ['PUT', '/api/pipelines/1'], ['DELETE', '/api/pipelines/1'], ['POST', '/api/pipelines/validate'],
      ['POST', '/api/pipelines/validate-yaml'], ['POST', '/api/pipelines/from-yaml'], ['GET', '/api/pipelines/1/yaml'],
      ['POST', '/api/pipelines/1/run'], ['GET', '/api/pipelines/1/runs'], ['GET', '/api/pipeline-runs/1'], ['POST', '/api/pipeline-runs/1/cancel'],
    ] as const) {
      const res = await anonymous.request({ method, url, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }) });
      assert.equal(res.status, 401, `${method} ${url}`);
    }
  });

  it('lists step types with their params schemas, every one available in this build', async () => {
    const res = await alice.get('/api/pipelines/step-types');
    assert.equal(res.status, 200);
    const byType = new Map((res.body as { type: string }[]).map((s) => [s.type, s as any]));
    for (const type of ['select_images', 'detect', 'sam', 'filter_detections', 'rule', 'write_annotations', 'flag_for_review', 'report', 'create_version', 'export', 'webhook', 'quality', 'cleaning', 'train']) {
      assert.ok(byType.has(type), type);
    }
    assert.deepEqual(byType.get('detect').inputs, ['images']);
    assert.deepEqual(byType.get('detect').outputs, ['detections']);
    assert.equal(byType.get('rule').params_schema.properties.requires.type, 'array');
    assert.equal(byType.get('write_annotations').writes, true);
    for (const [type, step] of byType) assert.equal(step.available, true, `${type}: ${step.reason}`);
  });

  it('runs quality checks, applies cleaning (recorded under the run, revertible) and hands training to the training service', async () => {
    const project = (await alice.post('/api/projects', { name: 'quality steps' })).body.id as number;
    await uploadImages(alice, project, [await ppeImage(1, { helmet: true, vest: true }), await ppeImage(2, { helmet: false, vest: false })]);
    const version = (await alice.post(`/api/projects/${project}/versions`, { name: 'v1' })).body.id as number;
    const definition = {
      name: 'check, clean, train',
      steps: [
        { id: 'check', type: 'quality', params: { checks: ['unannotated_images'] } },
        { id: 'clean', type: 'cleaning', needs: ['check'], params: { action: 'remove_unannotated_images', params: { mode: 'delete' } } },
        { id: 'train', type: 'train', needs: ['clean'], params: { adapter: 'versa-detect', version_id: version, params: { epochs: 1 } } },
      ],
    };
    const pipeline = (await alice.post('/api/pipelines', { project_id: project, definition })).body;
    const run = await waitForRun(alice, (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.deepEqual(run.steps.map((s: { status: string }) => s.status), ['succeeded', 'succeeded', 'failed']);
    // The training service itself answered: its readiness gate refuses the emptied project.
    assert.match(run.error, /Step 'train' failed: Project \d+ is not ready to train/);
    const check = run.outputs.check.checks.find((c: { id: string }) => c.id === 'unannotated_images');
    assert.equal(check.count, 2);
    assert.deepEqual(run.outputs.clean.summary, { delete_image: 2 });
    assert.equal(run.writes.cleaning, 1);
    assert.equal((await alice.get(`/api/projects/${project}`)).body.image_count, 0);
    // What the cleaning step wrote is identified by the run, and reverts as a whole.
    const reverted = await alice.post(`/api/cleaning-runs/${run.outputs.clean.cleaning_run_id}/revert`, {});
    assert.equal(reverted.status, 200, JSON.stringify(reverted.body));
    assert.equal((await alice.get(`/api/projects/${project}`)).body.image_count, 2);
  });

  it('keeps quality and export to the images a select step chose (issue 30)', async () => {
    const project = (await alice.post('/api/projects', { name: 'selection scope' })).body.id as number;
    await uploadImages(alice, project, await Promise.all([1, 2, 3, 4, 5].map((i) => ppeImage(i, { helmet: true, vest: false }))));
    const definition = {
      name: 'a sample of the project',
      steps: [
        { id: 'select', type: 'select_images', params: { limit: 2 } },
        { id: 'check', type: 'quality', needs: ['select'], params: { checks: ['unannotated_images'] } },
        { id: 'export', type: 'export', needs: ['select'], params: { format: 'coco' } },
        { id: 'everything', type: 'export', params: { format: 'coco' } },
      ],
    };
    const pipeline = (await alice.post('/api/pipelines', { project_id: project, definition })).body;
    const run = await waitForRun(alice, (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.outputs.select.images, 2);
    const check = run.outputs.check.checks.find((c: { id: string }) => c.id === 'unannotated_images');
    assert.equal(check.count, 2, 'the quality step read the 2 selected images, not all 5');
    assert.equal(run.outputs.check.images, 2);
    assert.equal(run.outputs.export.image_count, 2, 'the export holds the 2 selected images');
    const file = await alice.get(run.outputs.export.url);
    assert.equal(file.body.images.length, 2);
    // A step that does not follow the selection still reads the whole project.
    assert.equal(run.outputs.everything.image_count, 5);
  });

  it('serves the protective-equipment example, which validates', async () => {
    const example = (await alice.get('/api/pipelines/example')).body;
    assert.deepEqual(example.steps.map((s: { type: string }) => s.type), ['select_images', 'detect', 'rule', 'flag_for_review', 'report']);
    const res = await alice.post('/api/pipelines/validate', example);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { valid: true, errors: [] });
  });

  it('names every problem of a definition with its path', async () => {
    const res = await alice.post('/api/pipelines/validate', {
      name: 'broken',
      steps: [
        { id: 'select', type: 'select_images', params: { splits: ['training'] } },
        { id: 'detect', type: 'detect', needs: ['select', 'nowhere'], params: { confidence: 2 } },
        { id: 'magic', type: 'teleport' },
        { id: 'filter', type: 'filter_detections', needs: ['select'] },
        { id: 'hook', type: 'webhook', needs: ['detect'], params: { url: 'https://evil.example.net/x' } },
        { id: 'detect', type: 'report' },
        { id: 'q', type: 'cleaning', params: { params: {} } },
      ],
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.valid, false);
    const at = (path: string) => (res.body.errors as { path: string; message: string }[]).filter((e) => e.path === path).map((e) => e.message);
    // A value outside an enum names the values allowed there (issue 30).
    assert.deepEqual(at('steps[0].params.splits[0]'), ['must be one of train, valid, test, none'], JSON.stringify(res.body.errors));
    assert.match(at('steps[1].needs[1]')[0], /names no step 'nowhere'/);
    assert.ok(at('steps[1].params.confidence').length > 0);
    assert.match(at('steps[2].type')[0], /unknown step type 'teleport'/);
    assert.match(at('steps[3].needs')[0], /takes detections/);
    assert.match(at('steps[4].params.url')[0], /not on the webhook allowlist/);
    assert.match(at('steps[5].id')[0], /duplicate step id 'detect'/);
    assert.ok((res.body.errors as { path: string }[]).some((e) => e.path.startsWith('steps[6].params')), JSON.stringify(res.body.errors));
  });

  it('finds cycles, and accepts an allowlisted webhook', async () => {
    const cyclic = await alice.post('/api/pipelines/validate', {
      name: 'loop',
      steps: [
        { id: 'a', type: 'select_images', needs: ['c'] },
        { id: 'b', type: 'report', needs: ['a'] },
        { id: 'c', type: 'report', needs: ['b'] },
      ],
    });
    assert.equal(cyclic.body.valid, false);
    assert.match(cyclic.body.errors[0].message, /cycle: .*a.*→/);
    const hook = await alice.post('/api/pipelines/validate', { name: 'hook', steps: [{ id: 'w', type: 'webhook', params: { url: 'https://hooks.example.com/versa/run' } }] });
    assert.deepEqual(hook.body, { valid: true, errors: [] });
    const beside = await alice.post('/api/pipelines/validate', { name: 'hook', steps: [{ id: 'w', type: 'webhook', params: { url: 'https://hooks.example.com/versa-other' } }] });
    assert.equal(beside.body.valid, false);
  });

  it('checks models and classes against the project when given one', async () => {
    const res = await alice.post(`/api/pipelines/validate?project_id=${projectId}`, {
      name: 'models',
      steps: [
        { id: 's', type: 'select_images', params: { class_ids: [999999] } },
        { id: 'd', type: 'detect', needs: ['s'], params: { model: 'no-such-model' } },
      ],
    });
    assert.equal(res.body.valid, false);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    assert.ok(paths.includes('steps[0].params.class_ids[0]'), JSON.stringify(res.body.errors));
    assert.ok(paths.includes('steps[1].params.model'));
    assert.equal((await mallory.post(`/api/pipelines/validate?project_id=${projectId}`, { name: 'x', steps: [] })).status, 404);
  });

  it('answers malformed JSON and YAML with 422 and the line and column', async () => {
    const json = await alice.request({ method: 'POST', url: '/api/pipelines/validate', payload: '{\n  "name": "x",\n  "steps": [\n    {"id" "a"}\n  ]\n}', headers: { 'content-type': 'application/json' } });
    assert.equal(json.status, 422);
    assert.equal(json.body.detail[0].line, 4, JSON.stringify(json.body));
    assert.ok(json.body.detail[0].column > 0);
    const bad = await yaml(alice, '/api/pipelines/validate-yaml', 'name: x\nsteps:\n  - id: a\n    type: [report\n');
    assert.equal(bad.status, 422);
    assert.ok(bad.body.detail[0].line >= 4, JSON.stringify(bad.body));
    const created = await yaml(alice, `/api/pipelines/from-yaml?project_id=${projectId}`, 'name: x\nsteps: {');
    assert.equal(created.status, 422);
    assert.equal((await alice.get(`/api/pipelines?project_id=${projectId}`)).body.length, 0, 'a refused body creates nothing');
  });

  it('refuses a YAML alias bomb and an oversized document', async () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const bomb = await yaml(alice, '/api/pipelines/validate-yaml', lines.join('\n') + '\nname: x\nsteps: []\n');
    assert.equal(bomb.status, 422);
    assert.match(bomb.body.detail[0].msg, /alias/);
    const huge = await yaml(alice, '/api/pipelines/validate-yaml', `name: x\ndescription: "${'y'.repeat(300 * 1024)}"\nsteps: []\n`);
    assert.equal(huge.status, 413);
  });

  it('points YAML validation errors at their lines', async () => {
    const text = ['# a PPE check', 'name: lines', 'steps:', '  - id: s', '    type: select_images', '  - id: d', '    type: detect', '    needs: [s]', '    params:', '      confidence: 7', ''].join('\n');
    const res = await yaml(alice, '/api/pipelines/validate-yaml', text);
    assert.equal(res.status, 200);
    const problem = res.body.errors.find((e: { path: string }) => e.path === 'steps[1].params.confidence');
    assert.equal(problem.line, 10, JSON.stringify(res.body));
    assert.equal(problem.column, 19);
  });

  it('creates the example from an empty definition, keeps YAML with its comments, and round-trips', async () => {
    const created = await alice.post('/api/pipelines', { project_id: projectId, definition: {} });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'Protective equipment check');
    assert.equal(created.body.writes_data, true);
    assert.deepEqual(created.body.definition, (await alice.get('/api/pipelines/example')).body);

    const exported = await alice.get(`/api/pipelines/${created.body.id}/yaml`);
    assert.equal(exported.status, 200);
    assert.match(String(exported.headers['content-type']), /application\/yaml/);
    const back = await yaml(alice, `/api/pipelines/from-yaml?project_id=${projectId}`, exported.body);
    assert.equal(back.status, 201, JSON.stringify(back.body));
    assert.deepEqual(back.body.definition, created.body.definition);

    const text = '# nightly check\nname: commented\nsteps:\n  - id: s # every image\n    type: select_images\n  - id: r\n    type: report\n    needs: [s]\n';
    const fromYaml = await yaml(alice, `/api/pipelines/from-yaml?project_id=${projectId}`, text);
    assert.equal(fromYaml.status, 201);
    assert.equal((await alice.get(`/api/pipelines/${fromYaml.body.id}/yaml`)).body, text);
    // A change as JSON drops the old text; the YAML is rendered from the new definition.
    const changed = await alice.put(`/api/pipelines/${fromYaml.body.id}`, { name: 'renamed' });
    assert.equal(changed.status, 200);
    const rendered = (await alice.get(`/api/pipelines/${fromYaml.body.id}/yaml`)).body as string;
    assert.ok(!rendered.includes('#'));
    assert.match(rendered, /name: renamed/);
  });

  it('keeps pipelines of a project from other users (404) and from non-admins (403 on writes)', async () => {
    const created = (await alice.post('/api/pipelines', { project_id: projectId })).body;
    assert.equal((await mallory.get(`/api/pipelines/${created.id}`)).status, 404);
    assert.equal((await mallory.get(`/api/pipelines?project_id=${projectId}`)).status, 404);
    assert.equal((await mallory.put(`/api/pipelines/${created.id}`, { name: 'mine' })).status, 404);
    assert.equal((await mallory.delete(`/api/pipelines/${created.id}`)).status, 404);
    assert.equal((await mallory.post(`/api/pipelines/${created.id}/run`, {})).status, 404);
    assert.equal((await mallory.get(`/api/pipelines/${created.id}/runs`)).status, 404);
    assert.equal((await mallory.post('/api/pipelines', { project_id: projectId })).status, 404);
    assert.ok(!(await mallory.get('/api/pipelines')).body.some((p: { id: number }) => p.id === created.id));

    assert.equal((await annie.get(`/api/pipelines/${created.id}`)).status, 200);
    assert.equal((await annie.post('/api/pipelines', { project_id: projectId })).status, 403);
    assert.equal((await annie.put(`/api/pipelines/${created.id}`, { name: 'mine' })).status, 403);
    assert.equal((await annie.post(`/api/pipelines/${created.id}/run`, {})).status, 403);
    assert.equal((await alice.get(`/api/pipelines/${created.id}`)).body.name, 'Protective equipment check');
  });

  it('answers 422 for bad input and 404 for unknown ids', async () => {
    assert.equal((await alice.get('/api/pipelines/abc')).status, 422);
    assert.equal((await alice.get('/api/pipelines/999999')).status, 404);
    assert.equal((await alice.get('/api/pipeline-runs/999999')).status, 404);
    assert.equal((await alice.post('/api/pipelines', { project_id: projectId, definition: { name: 'x', steps: [{ id: 'a', type: 'nope' }] } })).status, 422);
    const id = (await alice.post('/api/pipelines', { project_id: projectId })).body.id;
    const bad = await alice.put(`/api/pipelines/${id}`, { definition: { name: 'x', steps: [{ id: 'a', type: 'detect' }] } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.detail[0].path, 'steps[0].needs' === bad.body.detail[0].path ? 'steps[0].needs' : bad.body.detail[0].path);
    assert.deepEqual(bad.body.detail[0].loc.slice(0, 4), ['body', 'definition', 'steps', 0]);
    assert.equal((await alice.get(`/api/pipelines/${id}`)).body.definition.steps.length, 5, 'a refused change changes nothing');
    assert.equal((await alice.post(`/api/pipelines/${id}/run`, { version_id: 424242 })).status, 422);
  });

  it('runs the protective-equipment check end to end: flags violating images for review and reports them', async () => {
    const project = (await alice.post('/api/projects', { name: 'ppe' })).body.id as number;
    await uploadPpeDetector(alice, project);
    const [ok, noVest, bare] = await uploadImages(alice, project, [
      await ppeImage(0, { helmet: true, vest: true }),
      await ppeImage(1, { helmet: true, vest: false }),
      await ppeImage(2, { helmet: false, vest: false }),
    ]);
    const pipeline = (await alice.post('/api/pipelines', { project_id: project })).body;
    const started = await alice.post(`/api/pipelines/${pipeline.id}/run`, {});
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.status, 'queued');
    const run = await waitForRun(alice, started.body.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.steps.map((s: { status: string }) => s.status), ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    for (const s of run.steps) assert.ok(s.started_at && s.finished_at && s.duration_ms >= 0);
    assert.equal(run.outputs.select.images, 3);
    assert.deepEqual(run.outputs.detect.by_class, { person: 3, helmet: 2, vest: 1 });
    const report = run.outputs.report;
    assert.equal(report.violating_images, 2);
    const perImage = new Map(report.per_image.map((p: { image_id: number; violations: { missing: string[] }[] }) => [p.image_id, p.violations[0].missing]));
    assert.deepEqual(perImage.get(noVest), ['vest']);
    assert.deepEqual(perImage.get(bare), ['helmet', 'vest']);
    assert.ok(!perImage.has(ok));
    assert.equal(run.progress, 1);

    const reviews = (await alice.get(`/api/projects/${project}/reviews`)).body as { image_id: number; comment: string }[];
    assert.deepEqual(reviews.map((r) => r.image_id).sort(), [noVest, bare].sort());
    assert.match(reviews[0].comment, new RegExp(`Missing protective equipment \\(pipeline run ${run.id}\\)`));
    assert.equal(run.writes.review, 2);

    const history = await alice.get(`/api/pipelines/${pipeline.id}/runs`);
    assert.equal(history.status, 200);
    assert.equal(history.headers['x-total-count'], '1');
    assert.equal(history.body[0].id, run.id);
    // Running again flags nothing new: both images are already waiting for review.
    const again = await waitForRun(alice, (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.equal(again.outputs.flag.flagged, 0);
    assert.equal(again.outputs.flag.already_pending, 2);
    assert.equal((await alice.get(`/api/pipelines/${pipeline.id}/runs`)).body[0].id, again.id, 'newest first');
  });

  it('writes detections as annotations recorded under the run; a failed step fails the run and keeps earlier writes identified', async () => {
    const project = (await alice.post('/api/projects', { name: 'writes' })).body.id as number;
    const model = await uploadPpeDetector(alice, project, 'det');
    await uploadImages(alice, project, [await ppeImage(0, { helmet: true, vest: false }), await ppeImage(3, { helmet: false, vest: true })]);
    const definition = {
      name: 'annotate then fail',
      steps: [
        { id: 'select', type: 'select_images' },
        { id: 'detect', type: 'detect', needs: ['select'], params: { model: model.id } },
        { id: 'keep_people', type: 'filter_detections', needs: ['detect'], params: { classes: ['person', 'helmet'] } },
        { id: 'write', type: 'write_annotations', needs: ['keep_people'] },
        { id: 'version', type: 'create_version', needs: ['write'], params: { name: 'v', split_config: { train: 50, valid: 10, test: 10 } } },
      ],
    };
    const pipeline = (await alice.post('/api/pipelines', { project_id: project, definition })).body;
    const run = await waitForRun(alice, (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /Step 'version' failed/);
    assert.deepEqual(run.steps.map((s: { status: string }) => s.status), ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'failed']);
    assert.equal(run.outputs.write.annotations, 3);
    assert.equal(run.writes.annotation, 3);
    const rows = await t.versa.deps.db.selectFrom('annotations').selectAll().where('project_id', '=', project).execute();
    assert.equal(rows.length, 3);
    assert.ok(rows.every((r) => r.source === `model:${model.id}`));
    const recorded = await t.versa.deps.db.selectFrom('pipeline_run_writes').select('object_id').where('run_id', '=', run.id).where('kind', '=', 'annotation').execute();
    assert.deepEqual(recorded.map((r) => r.object_id).sort(), rows.map((r) => r.id).sort());
    const classes = (await alice.get(`/api/projects/${project}/classes`)).body.map((c: { name: string }) => c.name).sort();
    assert.deepEqual(classes, ['helmet', 'person']);
  });

  it('cancels a running run at its next step boundary or image', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    t.versa.deps.plugins.register({
      type: 'pipeline_step',
      name: 'test_wait',
      title: 'wait',
      description: 'waits until cancelled',
      version: '1.0.0',
      builtin: false,
      config_schema: { type: 'object' },
      step: {
        inputs: [],
        outputs: [],
        writes: false,
        async execute(ctx) {
          started();
          for (let i = 0; i < 400 && !ctx.signal.aborted; i++) {
            ctx.progress(0.5);
            await sleep(25);
          }
          if (ctx.signal.aborted) throw new Error('aborted');
          return { outputs: {} };
        },
      },
    });
    const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition: { name: 'wait', steps: [{ id: 'w', type: 'test_wait' }, { id: 'r', type: 'report', needs: ['w'] }] } })).body;
    const run = (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body;
    await running;
    assert.equal((await mallory.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 404);
    const cancelled = await alice.post(`/api/pipeline-runs/${run.id}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'cancelled');
    const done = await waitForRun(alice, run.id);
    assert.equal(done.status, 'cancelled');
    assert.deepEqual(done.steps.map((s: { status: string }) => s.status), ['cancelled', 'cancelled']);
    assert.equal((await alice.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 409);
  });

  it('keeps a pipeline saved without a project or organization to its creator', async () => {
    const own = await alice.post('/api/pipelines', { definition: { name: 'count', steps: [{ id: 's', type: 'select_images' }, { id: 'r', type: 'report', needs: ['s'] }] } });
    assert.equal(own.status, 201);
    assert.equal(own.body.project_id, null);
    assert.equal(own.body.org_id, null);
    assert.equal((await mallory.get(`/api/pipelines/${own.body.id}`)).status, 404);
    assert.ok(!(await mallory.get('/api/pipelines')).body.some((p: { id: number }) => p.id === own.body.id));
    assert.equal((await mallory.put(`/api/pipelines/${own.body.id}`, { name: 'mine' })).status, 404);
    const malloryProject = (await mallory.post('/api/projects', { name: 'mallory' })).body.id;
    assert.equal((await mallory.post(`/api/pipelines/${own.body.id}/run`, { project_id: malloryProject })).status, 404);
    assert.ok((await alice.get('/api/pipelines')).body.some((p: { id: number }) => p.id === own.body.id));
    assert.equal((await alice.post(`/api/pipelines/${own.body.id}/run`, {})).status, 422, 'it runs on a project given by the caller');
    const run = await waitForRun(alice, (await alice.post(`/api/pipelines/${own.body.id}/run`, { project_id: projectId })).body.id);
    assert.equal(run.status, 'succeeded');
    assert.equal((await alice.get(`/api/pipelines/${own.body.id}/runs`)).headers['x-total-count'], '1');
  });

  it('posts the run summary and report to an allowlisted webhook', async () => {
    const definition = { name: 'hook', steps: [{ id: 's', type: 'select_images' }, { id: 'r', type: 'report', needs: ['s'] }, { id: 'w', type: 'webhook', needs: ['r'], params: { url: `${hookUrl}runs` } }] };
    const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition })).body;
    const run = await waitForRun(alice, (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.outputs.w.status, 204);
    assert.equal(received.length, 1);
    assert.equal(received[0].url, '/hooks/runs');
    assert.equal(received[0].body.run_id, run.id);
    assert.equal(received[0].body.report.images, run.outputs.report.images);
    assert.deepEqual(received[0].body.summary.steps.map((s: { id: string; status: string }) => [s.id, s.status]), [['s', 'succeeded'], ['r', 'succeeded'], ['w', 'running']]);
    assert.equal((await alice.put(`/api/pipelines/${pipeline.id}`, { definition: { ...definition, steps: [{ id: 'w', type: 'webhook', params: { url: 'http://127.0.0.1:1/elsewhere' } }] } })).status, 422);
  });
});
