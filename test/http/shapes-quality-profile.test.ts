/** The quality report, the profile and the canonical export of the shapes of issue 25, over HTTP. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

const FACE = { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] };
const ATTRIBUTES = [
  { name: 'occluded', type: 'checkbox', default: false },
  { name: 'colour', type: 'select', values: ['red', 'blue'] },
  { name: 'speed', type: 'number', values: [0, 200] },
  { name: 'note', type: 'text' },
];
const SHAPE_CHECKS = ['keypoints_outside_box', 'skeleton_mismatch', 'missing_keypoints', 'collapsed_shapes', 'holes_outside_parts'];

describe('quality, profile and canonical export of every shape (issue 25)', () => {
  let t: TestApp;
  let owner: Client;
  let projectId: number;
  let bad: number;
  let good: number;
  let face: number;
  let hand: number;
  let car: number;
  /** Annotation ids by name. */
  const ids: Record<string, number> = {};

  const add = async (name: string, imageId: number, classId: number, annotation_type: string, geometry: object, extra: object = {}) => {
    const res = await owner.post(`/api/images/${imageId}/annotations`, { class_id: classId, annotation_type, geometry, ...extra });
    assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`);
    ids[name] = res.body.id;
  };

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    projectId = await createProject(owner, 'shapes quality');
    [bad, good] = (await uploadImages(owner, projectId, [
      { name: 'bad.jpg', data: await smoothImage(1) },
      { name: 'good.jpg', data: await smoothImage(2) },
    ])).map((i) => i.id);
    const cls = async (body: object) => (await owner.post(`/api/projects/${projectId}/classes`, body)).body.id as number;
    face = await cls({ name: 'face', skeleton: FACE });
    hand = await cls({ name: 'hand' });
    car = await cls({ name: 'car', attributes: ATTRIBUTES });

    // Stored by the API, but wrong (the image is 160 × 120).
    await add('outside', bad, face, 'keypoints', { points: [[20, 20, 2], [100, 100, 2], [0, 0, 0]], bbox: { x: 10, y: 10, width: 20, height: 20 } });
    await add('no skeleton', bad, hand, 'keypoints', { points: [[5, 5, 2]] });
    await add('thin box', bad, car, 'bbox', { x: 50, y: 50, width: 0.5, height: 30, rotation: 30 });
    await add('dot line', bad, car, 'polyline', { points: [[5, 5], [5, 5]] });
    await add('flat ellipse', bad, car, 'ellipse', { cx: 80, cy: 60, rx: 0.2, ry: 10 });
    await add('stray hole', bad, car, 'polygon', { points: [[10, 10], [50, 10], [50, 50], [10, 50]], holes: [[[100, 100], [110, 100], [110, 110]]] });

    // Well formed: no shape check finds anything on this image.
    await add('pose', good, face, 'keypoints', { points: [[20, 20, 2], [25, 15, 1], [15, 15, 2]], bbox: { x: 10, y: 10, width: 20, height: 20 } }, { group_id: 7 });
    await add('turned box', good, car, 'bbox', { x: 40, y: 40, width: 20, height: 30, rotation: 30 }, { attributes: { occluded: true, colour: 'red', speed: 40, note: 'dented' }, group_id: 7 });
    await add('box', good, car, 'bbox', { x: 60, y: 10, width: 20, height: 30 }, { attributes: { occluded: false, colour: 'red', speed: 60 } });
    await add('line', good, car, 'polyline', { points: [[5, 5], [50, 60], [90, 10]] }, { attributes: { colour: 'blue', note: 'dented' } });
    await add('ellipse', good, car, 'ellipse', { cx: 80, cy: 60, rx: 10, ry: 5, rotation: 20 });
    await add('holed', good, car, 'polygon', { points: [[10, 10], [50, 10], [50, 50], [10, 50]], holes: [[[20, 20], [30, 20], [30, 30]]] });
    await add('two parts', good, car, 'polygon', { parts: [[[100, 10], [120, 10], [120, 30]], [[130, 10], [150, 10], [150, 30]]] });
    await add('dots', good, car, 'points', { points: [[1, 1], [2, 2]] });
  });
  after(() => t.close());

  const report = async () => {
    const res = await owner.post(`/api/projects/${projectId}/quality`, { checks: SHAPE_CHECKS });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return new Map<string, any>(res.body.checks.map((c: any) => [c.id, c]));
  };
  const flagged = (check: any) => check.items.map((i: any) => i.annotation_id).sort((a: number, b: number) => a - b);

  it('lists the shape checks in the catalog', async () => {
    const catalog = (await owner.get('/api/quality/checks?modality=image')).body;
    for (const id of SHAPE_CHECKS) assert.ok(catalog.some((c: any) => c.id === id), id);
  });

  it('finds keypoints outside their box, outside their skeleton and unlabelled', async () => {
    const checks = await report();
    const outside = checks.get('keypoints_outside_box');
    assert.deepEqual(flagged(outside), [ids.outside]);
    assert.equal(outside.severity, 'error');
    assert.equal(outside.items[0].image_id, bad);
    assert.match(outside.items[0].detail, /left_eye 70\.0 px outside the box: move the points or widen the box/);

    const mismatch = checks.get('skeleton_mismatch');
    assert.deepEqual(flagged(mismatch), [ids['no skeleton']]);
    assert.match(mismatch.items[0].detail, /hand has no skeleton: give the class one/);

    const missing = checks.get('missing_keypoints');
    assert.deepEqual(flagged(missing), [ids.outside]);
    assert.equal(missing.severity, 'info');
    assert.match(missing.items[0].detail, /face: 1 of 3 not labelled \(right_eye\)/);
  });

  it('finds collapsed rotated boxes, ellipses and polylines, and holes outside their object', async () => {
    const checks = await report();
    const collapsed = checks.get('collapsed_shapes');
    assert.deepEqual(flagged(collapsed), [ids['thin box'], ids['dot line'], ids['flat ellipse']].sort((a, b) => a - b));
    const detail = (name: string) => collapsed.items.find((i: any) => i.annotation_id === ids[name]).detail;
    assert.match(detail('thin box'), /^Rotated box 0\.50 px across/);
    assert.match(detail('flat ellipse'), /^Ellipse 0\.40 px across/);
    assert.match(detail('dot line'), /^Polyline with 1 distinct point/);
    const holes = checks.get('holes_outside_parts');
    assert.deepEqual(flagged(holes), [ids['stray hole']]);
    assert.match(holes.items[0].detail, /car: hole 1 outside the object's parts/);
  });

  it('well-formed shapes give no finding', async () => {
    const checks = await report();
    for (const id of SHAPE_CHECKS) assert.ok(!checks.get(id).image_ids.includes(good), `${id}: ${JSON.stringify(checks.get(id).items)}`);
    // Their envelopes are measured as well: the two-part object is not tiny, nothing is outside the image.
    const all = (await owner.post(`/api/projects/${projectId}/quality`, { checks: ['degenerate_annotations', 'outside_image'] })).body.checks;
    for (const check of all) assert.ok(!check.items.some((i: any) => i.annotation_id === ids['two parts']), `${check.id}: ${JSON.stringify(check.items)}`);
  });

  it('the canonical export carries every shape, its attributes and its group', async () => {
    const res = await owner.get(`/api/projects/${projectId}/canonical?format=json`);
    assert.equal(res.status, 200);
    const records = res.body;
    const byId = new Map<number, any>(records.flatMap((r: any) => r.annotations).map((a: any) => [a.id, a]));
    const stored = await owner.get(`/api/images/${good}/annotations`);
    assert.equal(stored.status, 200);
    const list = Array.isArray(stored.body) ? stored.body : stored.body.items;
    assert.equal(list.length, 8);
    for (const a of list) {
      const out = byId.get(a.id);
      assert.deepEqual(
        { type: out.type, class_id: out.class_id, geometry: out.geometry, attributes: out.attributes, group_id: out.group_id },
        { type: a.annotation_type, class_id: a.class_id, geometry: a.geometry, attributes: a.attributes, group_id: a.group_id },
        a.annotation_type,
      );
    }
    assert.deepEqual(byId.get(ids['turned box']).attributes, { occluded: true, colour: 'red', speed: 40, note: 'dented' });
    assert.equal(byId.get(ids['turned box']).geometry.rotation, 30);
    assert.equal(byId.get(ids.pose).group_id, 7);
    assert.deepEqual(byId.get(ids.ellipse).attributes, {});
    assert.equal(byId.get(ids.ellipse).group_id, null);
    assert.deepEqual(byId.get(ids['two parts']).geometry.parts.length, 2);
  });

  it('the profile counts every type, attribute values per class and keypoint visibility per skeleton point', async () => {
    const res = await owner.get(`/api/projects/${projectId}/profile`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const p = res.body;
    assert.deepEqual(p.annotation_types, { keypoints: 3, bbox: 3, polyline: 2, ellipse: 2, polygon: 3, points: 1 });
    assert.deepEqual(p.attributes, [
      { class_id: car, class: 'car', name: 'occluded', type: 'checkbox', annotations: 2, distinct: 2, distinct_capped: false, values: { true: 1, false: 1 } },
      { class_id: car, class: 'car', name: 'colour', type: 'select', annotations: 3, distinct: 2, distinct_capped: false, values: { red: 2, blue: 1 } },
      { class_id: car, class: 'car', name: 'speed', type: 'number', annotations: 2, distinct: 2, distinct_capped: false, min: 40, max: 60, mean: 50 },
      { class_id: car, class: 'car', name: 'note', type: 'text', annotations: 2, distinct: 1, distinct_capped: false, top_values: [{ value: 'dented', annotations: 2 }] },
    ]);
    assert.deepEqual(p.keypoints, [
      {
        class_id: face,
        class: 'face',
        instances: 2,
        points: [
          { point: 'nose', not_labelled: 0, occluded: 0, visible: 2 },
          { point: 'left_eye', not_labelled: 0, occluded: 1, visible: 1 },
          { point: 'right_eye', not_labelled: 1, occluded: 0, visible: 1 },
        ],
      },
      { class_id: hand, class: 'hand', instances: 1, points: [{ point: '#0', not_labelled: 0, occluded: 0, visible: 1 }] },
    ]);

    // An edit is seen by the next profile (the part it touched is computed again).
    const edited = await owner.put(`/api/annotations/${ids.box}`, { class_id: car, annotation_type: 'bbox', geometry: { x: 60, y: 10, width: 20, height: 30 }, attributes: { occluded: true, colour: 'blue', speed: 61 } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const after = (await owner.get(`/api/projects/${projectId}/profile`)).body;
    const attribute = (name: string) => after.attributes.find((a: any) => a.name === name);
    assert.deepEqual(attribute('occluded').values, { true: 2 });
    assert.deepEqual(attribute('colour').values, { blue: 2, red: 1 });
    assert.equal(attribute('speed').max, 61);
  });
});
