import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

describe('shapes-versions', () => {
  let t: TestApp;
  let owner: Client;
  let projectId: number;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    projectId = await createProject(owner, 'shapes');
  });
  after(() => t.close());

  it('shapes-versions: a version with flip, crop and rotation keeps every shape type, its attributes and group, and swaps keypoint flip pairs', async () => {
    const [image] = await uploadImages(owner, projectId, [{ name: 'a.jpg', data: await smoothImage(1) }]);
    const person = await owner.post(`/api/projects/${projectId}/classes`, {
      name: 'person',
      skeleton: { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] },
      attributes: [{ name: 'pose', type: 'select', values: ['standing', 'sitting'] }],
    });
    assert.equal(person.status, 201, JSON.stringify(person.body));
    const thing = await owner.post(`/api/projects/${projectId}/classes`, { name: 'thing', attributes: [{ name: 'occluded', type: 'checkbox' }] });
    assert.equal(thing.status, 201, JSON.stringify(thing.body));
    const shapes: [string, object][] = [
      ['bbox', { x: 60, y: 45, width: 30, height: 20, rotation: 30 }],
      ['polygon', { parts: [[[60, 50], [75, 50], [70, 65]], [[85, 55], [95, 55], [90, 65]]] }],
      ['polyline', { points: [[70, 55], [90, 65]] }],
      ['points', { points: [[80, 60], [82, 62]] }],
      ['ellipse', { cx: 80, cy: 60, rx: 10, ry: 5, rotation: 20 }],
    ];
    for (const [type, geometry] of shapes) {
      const res = await owner.post(`/api/images/${image.id}/annotations`, { class_id: thing.body.id, annotation_type: type, geometry, attributes: { occluded: true }, group_id: 7 });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const kp = await owner.post(`/api/images/${image.id}/annotations`, {
      class_id: person.body.id,
      annotation_type: 'keypoints',
      geometry: { points: [[80, 55, 2], [75, 58, 2], [85, 58, 1]] },
      attributes: { pose: 'sitting' },
    });
    assert.equal(kp.status, 201, JSON.stringify(kp.body));

    const created = await owner.post(`/api/projects/${projectId}/versions`, {
      name: 'shapes',
      seed: 0, // a drawn seed flips all four outputs or none about one time in seven; seed 0 flips some
      preprocessing_config: { resize: { enabled: false }, static_crop: { enabled: true, x_min: 10, x_max: 90, y_min: 10, y_max: 90 } },
      augmentation_config: { enabled: true, outputs_per_image: 4, flip_horizontal: true, rotation: 10 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await t.versa.deps.queue.drain();
    const version = await owner.get(`/api/projects/${projectId}/versions/${created.body.id}`);
    assert.equal(version.body.status, 'ready', JSON.stringify(version.body));
    const list = await owner.get(`/api/projects/${projectId}/versions/${created.body.id}/images?limit=100`);
    assert.equal(list.status, 200);
    const items = (Array.isArray(list.body) ? list.body : list.body.items) as any[];
    assert.ok(items.length >= 1);
    let flipped = 0;
    for (const item of items) {
      const types = new Set(item.annotations.map((a: any) => a.annotation_type));
      for (const type of ['bbox', 'polygon', 'polyline', 'points', 'ellipse', 'keypoints']) assert.ok(types.has(type), `${type} in ${item.filename}`);
      for (const a of item.annotations) {
        if (a.class_name === 'thing') {
          assert.deepEqual(a.attributes, { occluded: true });
          assert.equal(a.group_id, 7);
        } else assert.deepEqual(a.attributes, { pose: 'sitting' });
      }
      const box = item.annotations.find((a: any) => a.annotation_type === 'bbox');
      assert.ok(box.geometry.rotation > 0, 'the rotated box stays rotated');
      const polygon = item.annotations.find((a: any) => a.annotation_type === 'polygon');
      assert.equal(polygon.geometry.parts.length, 2, 'both parts kept');
      const keypoints = item.annotations.find((a: any) => a.annotation_type === 'keypoints').geometry.points;
      const isFlipped = item.lineage.some((s: any) => s.op === 'flip');
      if (isFlipped) flipped++;
      // left_eye (index 1, visible) is left of the nose; a mirror moves it right, and the flip pair swap makes the
      // mirrored right_eye (occluded) the new left_eye: still left of the nose, now with right_eye's visibility.
      assert.equal(keypoints[1][2], isFlipped ? 1 : 2, 'visibility follows the swapped point');
      assert.ok(keypoints[1][0] < keypoints[0][0], 'left_eye stays left of the nose');
    }
    assert.ok(flipped > 0 && flipped < items.length, `some outputs flipped (${flipped} of ${items.length})`);
  });
});
