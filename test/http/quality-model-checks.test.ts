import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, uploadImages } from '../helpers/version-fixtures.js';

/**
 * The test detector finds red pixels (class "red") and green ones (class "green"), one box each. The labels are
 * wrong in three known ways: the green square is not labelled, a red label sits on the green square, and a label
 * boxes empty background.
 */
describe('model-assisted label checks', () => {
  let t: TestApp;
  let owner: Client;
  let projectId: number;
  let imageId: number;
  const labels: Record<string, number> = {};

  const red: Square = { x: 10, y: 10, width: 30, height: 30, colour: [255, 0, 0] };
  const green: Square = { x: 70, y: 60, width: 40, height: 30, colour: [0, 255, 0] };

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    projectId = await createProject(owner, 'assisted');
    const [plain, wrong] = await uploadImages(owner, projectId, [
      { name: 'missing.png', data: await squaresPng(128, 128, [red, green]) },
      { name: 'wrong.png', data: await squaresPng(128, 128, [{ ...red, x: 12 }, green]) },
    ]);
    imageId = plain.id;
    const redClass = await createClass(owner, projectId, 'red');
    await createClass(owner, projectId, 'green');
    labels.red = (await addBox(owner, plain.id, redClass, { x: 10, y: 10, width: 30, height: 30 })).id;
    labels.nothing = (await addBox(owner, plain.id, redClass, { x: 90, y: 5, width: 20, height: 20 })).id;
    labels.redOnWrong = (await addBox(owner, wrong.id, redClass, { x: 12, y: 10, width: 30, height: 30 })).id;
    labels.mislabelled = (await addBox(owner, wrong.id, redClass, { x: 70, y: 60, width: 40, height: 30 })).id;
  });
  after(() => t.close());

  const run = (params: Record<string, unknown> = {}) =>
    owner.post(`/api/projects/${projectId}/quality`, { checks: ['missing_labels', 'unsupported_labels', 'class_disagreements'], params });

  it('are skipped, saying why, while the project has no detector, and by default', async () => {
    const res = await run();
    assert.equal(res.status, 200);
    for (const c of res.body.checks) assert.equal(c.skipped, 'The project has no registered detector');
    const plain = (await owner.get(`/api/projects/${projectId}/quality`)).body.checks.find((c: any) => c.id === 'missing_labels');
    assert.match(plain.skipped, /only when requested/);
  });

  it('find the missing box, the unsupported label and the class disagreement, ranked by score', async () => {
    const upload = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'det.onnx', data: Buffer.from(buildYoloModel('v8')) }]) });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const before = await t.versa.deps.db.selectFrom('annotations').select('id').execute();
    const res = await run();
    assert.equal(res.status, 200);
    const check = (id: string) => res.body.checks.find((c: any) => c.id === id);
    assert.equal(check('missing_labels').skipped, undefined);
    assert.deepEqual(check('missing_labels').items.map((i: any) => i.image_id), [imageId]);
    assert.match(check('missing_labels').items[0].detail, /^green predicted/);
    assert.deepEqual(check('unsupported_labels').items.map((i: any) => i.annotation_id), [labels.nothing]);
    assert.deepEqual(check('class_disagreements').items.map((i: any) => i.annotation_id), [labels.mislabelled]);
    assert.match(check('class_disagreements').items[0].detail, /Labelled red, predicted green/);
    assert.ok(check('class_disagreements').items[0].score > 0.5);
    // Nothing is written.
    assert.equal((await t.versa.deps.db.selectFrom('annotations').select('id').execute()).length, before.length);
  });

  it('a model id that is not a detector of the project is reported, not run', async () => {
    const res = await run({ missing_labels: { model_id: 999 } });
    assert.equal(res.body.checks[0].skipped, 'Model 999 is not a detector of this project');
  });
});
