import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

const png = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 90, g: 90, b: 90 } } }).png().toBuffer();

/** read = kept + skipped for every kind the answer counts. */
function assertBalanced(counts: { read: Record<string, unknown>; kept: Record<string, unknown>; skipped: Record<string, unknown> }): void {
  for (const kind of ['images', 'attributes', 'tracks']) {
    assert.equal(counts.read[kind], (counts.kept[kind] as number) + (counts.skipped[kind] as number), kind);
  }
  const read = counts.read.annotations as Record<string, number>;
  for (const [type, n] of Object.entries(read)) {
    assert.equal(n, ((counts.kept.annotations as Record<string, number>)[type] ?? 0) + ((counts.skipped.annotations as Record<string, number>)[type] ?? 0), type);
  }
}

describe('shapes-labelstudio / shapes-datumaro imports account for every item', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('shapes-labelstudio import: rotated box, ellipse, keypoints and per-region text kept, a relation as a group; image-level text listed as skipped', async () => {
    const base = { to_name: 'image', original_width: 100, original_height: 100 };
    const result = [
      { ...base, id: 'r1', type: 'rectanglelabels', from_name: 'label', value: { x: 20, y: 20, width: 30, height: 20, rotation: 30, rectanglelabels: ['car'] } },
      { ...base, id: 'r1', type: 'textarea', from_name: 'plate', value: { text: ['AB-123'] } },
      { ...base, id: 'e1', type: 'ellipselabels', from_name: 'ell', value: { x: 70, y: 70, radiusX: 10, radiusY: 5, rotation: 0, ellipselabels: ['wheel'] } },
      { ...base, id: 'k1', type: 'keypointlabels', from_name: 'kp', value: { x: 10, y: 90, width: 1, keypointlabels: ['light'] } },
      { ...base, id: 't1', type: 'textarea', from_name: 'caption', value: { text: ['a car'] } },
      { from_id: 'r1', to_id: 'e1', type: 'relation' },
    ];
    const zip = await buildZip([
      { name: 'export.json', data: JSON.stringify([{ id: 1, data: { image: '/data/upload/1/a.png' }, annotations: [{ result }] }]) },
      { name: 'images/a.png', data: await png(100, 100) },
    ]);
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const summary = res.body.import;
    assertBalanced(summary.counts);
    assert.deepEqual(summary.counts.kept.annotations, { bbox: 1, ellipse: 1, points: 1, relation: 1 });
    assert.equal(summary.counts.kept.attributes, 1);
    assert.deepEqual(summary.skipped.map((s: { item: string }) => s.item).sort(), ['task 1 result t1 (textarea)']);
    const [image] = (await alice.get(`/api/projects/${res.body.id}/images`)).body as { id: number }[];
    const annotations = (await alice.get(`/api/images/${image.id}/annotations`)).body as { annotation_type: string; geometry: { rotation: number }; attributes: object; group_id: number | null }[];
    const group = (type: string) => annotations.find((a) => a.annotation_type === type)!.group_id;
    assert.ok(group('bbox') !== null && group('bbox') === group('ellipse') && group('points') === null, JSON.stringify(annotations));
    const box = annotations.find((a) => a.annotation_type === 'bbox')!;
    assert.equal(Math.round(box.geometry.rotation), 30);
    assert.deepEqual(box.attributes, { plate: 'AB-123' });
  });

  it('shapes-datumaro import: shapes, rotation and attributes kept; caption, cuboid and an unknown label listed as skipped', async () => {
    const doc = {
      info: {},
      categories: { label: { labels: [{ name: 'car', parent: '', attributes: [] }], attributes: [] } },
      items: [{
        id: 'x', image: { path: 'x.png', size: [40, 50] }, annotations: [
          { id: 1, type: 'bbox', label_id: 0, group: 0, bbox: [10, 10, 20, 10], attributes: { occluded: false, rotation: 15 } },
          { id: 2, type: 'polyline', label_id: 0, group: 0, points: [1, 1, 20, 30], attributes: {} },
          { id: 3, type: 'ellipse', label_id: 0, group: 0, points: [30, 20, 40, 30], attributes: {} },
          { id: 4, type: 'caption', caption: 'a car', group: 0, attributes: {} },
          { id: 5, type: 'cuboid_3d', label_id: 0, group: 0, attributes: {} },
          { id: 6, type: 'bbox', label_id: 9, group: 0, bbox: [1, 1, 2, 2], attributes: {} },
        ],
      }],
    };
    const zip = await buildZip([{ name: 'annotations/default.json', data: JSON.stringify(doc) }, { name: 'images/default/x.png', data: await png(50, 40) }]);
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const summary = res.body.import;
    assertBalanced(summary.counts);
    assert.deepEqual(summary.counts.kept.annotations, { bbox: 1, polyline: 1, ellipse: 1 });
    assert.deepEqual(summary.counts.skipped.annotations, { caption: 1, cuboid_3d: 1, bbox: 1 });
    assert.equal(summary.counts.kept.attributes, 1);
    assert.equal(summary.skipped_count, 3);
  });
});
