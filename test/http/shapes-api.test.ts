import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const FACE = { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] };
const ATTRIBUTES = [
  { name: 'occluded', type: 'checkbox', default: false },
  { name: 'colour', type: 'select', values: ['red', 'blue'] },
  { name: 'speed', type: 'number', values: [0, 200] },
  { name: 'note', type: 'text' },
];

/** Every shape of issue 25 through the annotations API: stored as sent (cut to the image where it says so), refused with the path of the problem. */
describe('shapes through the annotations API (issue 25)', () => {
  let t: TestApp;
  let alice: User;
  let projectId: number;
  let imageId: number;
  let face: number;
  let car: number;
  before(async () => {
    t = await startTestApp();
    await t.user();
    alice = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'shapes' })).body.id;
    const faceRes = await alice.post(`/api/projects/${projectId}/classes`, { name: 'face', skeleton: FACE });
    assert.equal(faceRes.status, 201, JSON.stringify(faceRes.body));
    assert.deepEqual(faceRes.body.skeleton, FACE);
    assert.deepEqual(faceRes.body.attributes, []);
    face = faceRes.body.id;
    const carRes = await alice.post(`/api/projects/${projectId}/classes`, { name: 'car', attributes: ATTRIBUTES });
    assert.equal(carRes.status, 201, JSON.stringify(carRes.body));
    assert.deepEqual(carRes.body.attributes, ATTRIBUTES);
    assert.equal(carRes.body.skeleton, null);
    car = carRes.body.id;
    imageId = await insertImageRow(t, projectId, { width: 200, height: 100 });
  });
  after(() => t.close());

  const create = (body: object) => alice.post(`/api/images/${imageId}/annotations`, body);

  it('stores each new shape as sent and lists it back', async () => {
    const shapes: [string, number, object][] = [
      ['bbox', car, { x: 10, y: 10, width: 40, height: 20, rotation: 30 }],
      ['polygon', car, { points: [[0, 0], [10, 0], [10, 10]], parts: [[[0, 0], [10, 0], [10, 10]], [[50, 50], [60, 50], [60, 60]]], holes: [[[1, 1], [2, 1], [2, 2]]] }],
      ['keypoints', face, { points: [[20, 20, 2], [15, 15, 1], [0, 0, 0]], bbox: { x: 10, y: 10, width: 20, height: 20 } }],
      ['polyline', car, { points: [[0, 0], [100, 50], [199, 99]] }],
      ['points', car, { points: [[5, 5]] }],
      ['ellipse', car, { cx: 100, cy: 50, rx: 30, ry: 10, rotation: 45 }],
    ];
    for (const [type, classId, geometry] of shapes) {
      const res = await create({ class_id: classId, annotation_type: type, geometry });
      assert.equal(res.status, 201, `${type}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.annotation_type, type);
      assert.deepEqual(res.body.geometry, geometry, type);
      assert.deepEqual(res.body.attributes, {});
      assert.equal(res.body.group_id, null);
      assert.deepEqual((await alice.get(`/api/annotations/${res.body.id}`)).body.geometry, geometry);
    }
  });

  it('normalises angles and stores an unlabelled keypoint as [0, 0, 0]', async () => {
    const box = await create({ class_id: car, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 40, height: 20, rotation: -90 } });
    assert.equal(box.body.geometry.rotation, 270);
    const axis = await create({ class_id: car, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 40, height: 20, rotation: 360 } });
    assert.deepEqual(axis.body.geometry, { x: 10, y: 10, width: 40, height: 20 }, 'a box turned a full turn is axis-aligned, and cut to the image as before');
    const kp = await create({ class_id: face, annotation_type: 'keypoints', geometry: { points: [[20, 20, 2], [15, 15, 0], [500, 500, 0]] } });
    assert.equal(kp.status, 201, JSON.stringify(kp.body));
    assert.deepEqual(kp.body.geometry.points, [[20, 20, 2], [0, 0, 0], [0, 0, 0]]);
  });

  it('refuses what no shape can hold, naming where in the geometry', async () => {
    const cases: [string, number, object, string][] = [
      ['keypoints', face, { points: [[20, 20, 2], [15, 15, 2]] }, 'geometry.points'], // the skeleton has 3 points
      ['keypoints', face, { points: [[20, 20, 3], [15, 15, 2], [1, 1, 2]] }, 'geometry.points.0.2'],
      ['keypoints', face, { points: [[20, 20, 0], [0, 0, 0], [0, 0, 0]] }, 'geometry.points'],
      ['keypoints', face, { points: [[900, 20, 2], [15, 15, 2], [1, 1, 2]] }, 'geometry.points.0'],
      ['polyline', car, { points: [[1, 1]] }, 'geometry.points'],
      ['points', car, { points: [] }, 'geometry.points'],
      ['points', car, { points: [[5, 500]] }, 'geometry.points.0'],
      ['ellipse', car, { cx: 10, cy: 10, rx: 0, ry: 5 }, 'geometry.rx'],
      ['ellipse', car, { cx: 1000, cy: 10, rx: 3, ry: 5 }, 'geometry'],
      ['bbox', car, { x: 500, y: 500, width: 10, height: 10, rotation: 10 }, 'geometry'],
      ['polygon', car, { parts: [] }, 'geometry.parts'],
      ['polygon', car, { parts: [[[0, 0], [1, 1]]] }, 'geometry.parts.0'],
    ];
    for (const [type, classId, geometry, path] of cases) {
      const res = await create({ class_id: classId, annotation_type: type, geometry });
      assert.equal(res.status, 422, `${type} ${JSON.stringify(geometry)}: ${JSON.stringify(res.body)}`);
      const locs = (res.body.detail as { loc: (string | number)[] }[]).map((d) => d.loc.slice(1).join('.'));
      assert.ok(locs.includes(path), `${type}: expected ${path}, got ${locs}`);
    }
  });

  it('checks attribute values against their class and keeps them through edits and reverts', async () => {
    const bad: [object, string][] = [
      [{ colour: 'green' }, 'attributes.colour'],
      [{ speed: 500 }, 'attributes.speed'],
      [{ occluded: 'yes' }, 'attributes.occluded'],
      [{ wheels: 4 }, 'attributes.wheels'],
    ];
    for (const [attributes, path] of bad) {
      const res = await create({ class_id: car, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 }, attributes });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.ok((res.body.detail as { loc: string[] }[]).some((d) => d.loc.slice(1).join('.') === path), JSON.stringify(res.body.detail));
    }
    const noSpecs = await create({ class_id: face, annotation_type: 'keypoints', geometry: { points: [[1, 1, 2], [2, 2, 2], [3, 3, 2]] }, attributes: { colour: 'red' } });
    assert.equal(noSpecs.status, 422, 'a class that declares no attributes takes none');

    const attributes = { occluded: true, colour: 'blue', speed: 42.5, note: 'dented' };
    const created = await create({ class_id: car, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 }, attributes, group_id: 7 });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.attributes, attributes);
    assert.equal(created.body.group_id, 7);
    const id = created.body.id;
    const edited = await alice.put(`/api/annotations/${id}`, { class_id: car, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 }, attributes: { colour: 'red' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(edited.body.attributes, { colour: 'red' });
    assert.equal(edited.body.group_id, null);

    const history = (await alice.get(`/api/annotations/${id}/revisions`)).body as { id: number; action: string; after: { attributes?: object; group_id?: number } }[];
    const creation = history.find((r) => r.action === 'create')!;
    assert.deepEqual(creation.after.attributes, attributes);
    assert.equal(creation.after.group_id, 7);
    const reverted = await alice.post(`/api/annotations/${id}/revert`, { revision_id: creation.id });
    assert.equal(reverted.status, 201, JSON.stringify(reverted.body));
    const back = (await alice.get(`/api/annotations/${id}`)).body;
    assert.deepEqual([back.attributes, back.group_id], [attributes, 7]);
  });

  it('validates skeletons and attribute specs, and refuses a skeleton that no longer fits the keypoints drawn with it', async () => {
    const refused: [object, string][] = [
      [{ name: 'a', skeleton: { points: ['x', 'x'] } }, 'skeleton.points.1'],
      [{ name: 'b', skeleton: { points: ['x', 'y'], edges: [[0, 2]] } }, 'skeleton.edges.0'],
      [{ name: 'c', skeleton: { points: ['x', 'y', 'z'], flip_pairs: [[0, 1], [1, 2]] } }, 'skeleton.flip_pairs.1'],
      [{ name: 'd', attributes: [{ name: 'k', type: 'select' }] }, 'attributes.0.values'],
      [{ name: 'e', attributes: [{ name: 'k', type: 'number', values: [5, 1] }] }, 'attributes.0.values'],
      [{ name: 'f', attributes: [{ name: 'k', type: 'checkbox' }, { name: 'k', type: 'text' }] }, 'attributes.1.name'],
      [{ name: 'g', attributes: [{ name: 'k', type: 'select', values: ['a'], default: 'b' }] }, 'attributes.0.default'],
    ];
    for (const [body, path] of refused) {
      const res = await alice.post(`/api/projects/${projectId}/classes`, body);
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.ok((res.body.detail as { loc: (string | number)[] }[]).some((d) => d.loc.slice(1).join('.') === path), `${path}: ${JSON.stringify(res.body.detail)}`);
    }
    // The face class has keypoint annotations of 3 points: renaming points and edges is fine, a 4th point is not.
    const renamed = await alice.patch(`/api/classes/${face}`, { skeleton: { ...FACE, points: ['nose', 'eye_l', 'eye_r'] } });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(renamed.body.skeleton.points, ['nose', 'eye_l', 'eye_r']);
    const grown = await alice.patch(`/api/classes/${face}`, { skeleton: { points: ['nose', 'eye_l', 'eye_r', 'mouth'] } });
    assert.equal(grown.status, 409, JSON.stringify(grown.body));
    assert.match(grown.body.detail, /keypoint annotations/);
    const removed = await alice.patch(`/api/classes/${face}`, { skeleton: null });
    assert.equal(removed.status, 409);
    const attrs = await alice.patch(`/api/classes/${car}`, { attributes: [{ name: 'colour', type: 'select', values: ['red', 'blue', 'green'] }] });
    assert.equal(attrs.status, 200, JSON.stringify(attrs.body));
    assert.deepEqual(attrs.body.attributes, [{ name: 'colour', type: 'select', values: ['red', 'blue', 'green'] }]);
  });

  it('lists the images that hold an attribute value (images?attribute=name:value), on both value kinds', async () => {
    assert.equal((await alice.patch(`/api/classes/${car}`, { attributes: ATTRIBUTES })).status, 200);
    const other = await insertImageRow(t, projectId, { width: 200, height: 100 });
    const third = await insertImageRow(t, projectId, { width: 200, height: 100 });
    const box = { x: 1, y: 1, width: 5, height: 5 };
    for (const [image, attributes] of [[other, { colour: 'red', occluded: true, speed: 40 }], [third, { colour: 'blue', occluded: false, note: 'a:b "c"' }]] as const) {
      const res = await alice.post(`/api/images/${image}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box, attributes });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const ids = async (filter: string) => {
      const res = await alice.get(`/api/projects/${projectId}/images?attribute=${encodeURIComponent(filter)}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body as { id: number }[]).map((i) => i.id).filter((id) => id === other || id === third);
    };
    assert.deepEqual(await ids('colour:red'), [other]);
    assert.deepEqual(await ids('occluded:true'), [other]);
    assert.deepEqual(await ids('occluded:false'), [third]);
    assert.deepEqual(await ids('speed:40'), [other]);
    assert.deepEqual(await ids('note:a:b "c"'), [third]);
    assert.deepEqual(await ids('colour:green'), []);
    assert.equal((await alice.get(`/api/projects/${projectId}/images?attribute=nocolon`)).status, 422);
  });
});
