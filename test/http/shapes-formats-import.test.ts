import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

const fixture = (name: string) => readFile(new URL(`../fixtures/shapes-formats/${name}`, import.meta.url));
const picture = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#456' } }).jpeg().toBuffer();

/** read = kept + skipped for every kind and annotation type of an import answer. */
function assertBalanced(counts: { read: any; kept: any; skipped: any }) {
  for (const kind of ['images', 'attributes', 'tracks']) assert.equal(counts.read[kind], counts.kept[kind] + counts.skipped[kind], kind);
  for (const type of Object.keys(counts.read.annotations)) {
    assert.equal(counts.read.annotations[type], (counts.kept.annotations[type] ?? 0) + (counts.skipped.annotations[type] ?? 0), type);
  }
}

describe('imports of COCO keypoints, Ultralytics pose/OBB and DOTA account for every item (issue 25)', () => {
  let t: TestApp;
  let alice: Awaited<ReturnType<TestApp['user']>>;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('shapes-coco: person keypoints become a keypoint project with a skeleton; each item it cannot keep is listed', async () => {
    const zip = await buildZip([
      { name: 'annotations/person_keypoints_train2017.json', data: await fixture('person_keypoints_sample.json') },
      { name: 'images/train2017/people.jpg', data: await picture(320, 240) },
    ]);
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.project_type, 'keypoint_detection');
    const { counts, skipped } = res.body.import;
    assertBalanced(counts);
    assert.deepEqual(counts.kept.annotations, { keypoints: 1, polygon: 2, bbox: 2 });
    const listed = skipped.map((s: any) => `${s.item}: ${s.reason}`);
    for (const pattern of [/annotation 104: it has 3 keypoint values/, /annotation 105: it uses category 9/, /annotation 106: it refers to image 7/, /annotation 107: its RLE/, /image 2 "missing\.jpg"/, /its image is not in the dataset/]) {
      assert.ok(listed.some((l: string) => pattern.test(l)), `${pattern} in ${listed.join('; ')}`);
    }
    const classes = (await alice.get(`/api/projects/${res.body.id}/classes`)).body as any[];
    const person = classes.find((c) => c.name === 'person');
    assert.equal(person.skeleton.points.length, 17);
    assert.equal(person.skeleton.edges.length, 19);
    const images = (await alice.get(`/api/projects/${res.body.id}/images`)).body as any[];
    const annotations = (await alice.get(`/api/images/${images[0].id}/annotations`)).body as any[];
    const keypoints = annotations.find((a) => a.annotation_type === 'keypoints');
    assert.deepEqual(keypoints.geometry.points[0], [70, 30, 2]);
    assert.deepEqual(keypoints.geometry.bbox, { x: 40, y: 20, width: 60, height: 150 });
    const outline = annotations.find((a) => a.annotation_type === 'polygon' && a.group_id !== null);
    assert.equal(outline.group_id, keypoints.group_id, "the person's outline is in its keypoints' group");
    const kite = annotations.find((a) => a.annotation_type === 'polygon' && a.group_id === null);
    assert.equal(kite.geometry.parts.length, 2, 'two polygons of one segmentation: one object');

    // Exported again: what COCO cannot hold as it is is said in the export's answer.
    const kiteClass = classes.find((c) => c.name === 'kite').id;
    const line = await alice.post(`/api/images/${images[0].id}/annotations`, { class_id: kiteClass, annotation_type: 'polyline', geometry: { points: [[1, 1], [30, 30]] } });
    assert.equal(line.status, 201, JSON.stringify(line.body));
    const ring = await alice.post(`/api/images/${images[0].id}/annotations`, { class_id: kiteClass, annotation_type: 'ellipse', geometry: { cx: 50, cy: 50, rx: 10, ry: 5, rotation: 0 } });
    assert.equal(ring.status, 201, JSON.stringify(ring.body));
    const exported = await alice.post(`/api/projects/${res.body.id}/export`, { format: 'coco' });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    assert.deepEqual(exported.body.shapes_skipped, { polyline: 1 });
    assert.deepEqual(exported.body.shapes_converted, { 'ellipse→polygon': 1 });
    // The accounting of everything it was given, per kind: shapes, attribute values, groups, tracks.
    const { accounting } = exported.body;
    assert.deepEqual(Object.keys(accounting), ['shapes', 'attributes', 'groups', 'tracks']);
    assert.deepEqual(accounting.shapes.skipped, { polyline: 1 });
    assert.equal(accounting.shapes.kept.keypoints, 1, JSON.stringify(accounting.shapes));
    assert.deepEqual(exported.body.shapes_kept, accounting.shapes.kept);
    assert.deepEqual(accounting.groups.converted, { 'group→one COCO annotation (keypoints with their outline)': 1 });
    const voc = await alice.post(`/api/projects/${res.body.id}/export`, { format: 'voc' });
    assert.deepEqual(voc.body.accounting.groups.skipped, { 'group (VOC has no groups)': 1 });
    const got = (await alice.get(exported.body.url)).body;
    const document = Buffer.isBuffer(got) || typeof got === 'string' ? JSON.parse(got.toString()) : got;
    assert.deepEqual(document.categories.find((c: any) => c.name === 'person').skeleton[0], [16, 14]);
  });

  it('shapes-yolo: an Ultralytics pose set keeps skeleton flips; an OBB set keeps rotation; lines it cannot keep are listed', async () => {
    const points = Array.from({ length: 17 }, (_, i) => (i < 5 ? `0.${i + 3} 0.4 2` : '0 0 0')).join(' ');
    const pose = await buildZip([
      { name: 'data.yaml', data: await fixture('coco8-pose.yaml') },
      { name: 'images/train/a.jpg', data: await picture(200, 100) },
      { name: 'labels/train/a.txt', data: `0 0.5 0.5 0.6 0.6 ${points}\n3 0.5 0.5 0.2 0.2 ${points}\n` },
      { name: 'labels/train/gone.txt', data: `0 0.5 0.5 0.6 0.6 ${points}\n` },
    ]);
    const res = await importZip(alice, pose);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.project_type, 'keypoint_detection');
    assertBalanced(res.body.import.counts);
    assert.deepEqual(res.body.import.counts.kept.annotations, { keypoints: 1 });
    assert.deepEqual(res.body.import.skipped.map((s: any) => [s.file, s.item]), [['train/a.txt', 'line 2'], ['train/gone.txt', 'line 1']]);
    const classes = (await alice.get(`/api/projects/${res.body.id}/classes`)).body as any[];
    assert.deepEqual(classes[0].skeleton.flip_pairs.slice(0, 2), [[1, 2], [3, 4]]);

    // Ultralytics OBB (DOTA8's layout): a rotated rectangle, corners clockwise from its top edge.
    const obb = await buildZip([
      { name: 'data.yaml', data: 'train: images/train\nval: images/train\nnames:\n  0: plane\n  1: ship\n' },
      { name: 'images/train/p.jpg', data: await picture(200, 100) },
      // A 60×20 box centred on (100, 50), turned 30° clockwise, normalised to 200×100.
      { name: 'labels/train/p.txt', data: '0 0.390192 0.263397 0.649808 0.563397 0.609808 0.736603 0.350192 0.436603\n1 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n' },
    ]);
    const obbRes = await importZip(alice, obb);
    assert.equal(obbRes.status, 201, JSON.stringify(obbRes.body));
    assert.equal(obbRes.body.project_type, 'oriented_detection');
    const images = (await alice.get(`/api/projects/${obbRes.body.id}/images`)).body as any[];
    const [plane, ship] = (await alice.get(`/api/images/${images[0].id}/annotations`)).body as any[];
    assert.equal(plane.annotation_type, 'bbox');
    assert.ok(Math.abs(plane.geometry.rotation - 30) < 0.5 && Math.abs(plane.geometry.width - 60) < 0.5 && Math.abs(plane.geometry.x - 70) < 0.5, JSON.stringify(plane.geometry));
    assert.deepEqual(ship.geometry, { x: 20, y: 10, width: 40, height: 20 });
  });

  it('shapes-dota: a DOTA folder imports as oriented boxes with difficult; header lines and orphan labels are listed', async () => {
    const zip = await buildZip([
      { name: 'train/images/P0000.png', data: await sharp({ create: { width: 3600, height: 4400, channels: 3, background: '#000' } }).png().toBuffer() },
      { name: 'train/labelTxt/P0000.txt', data: await fixture('dota-P0000.txt') },
      { name: 'train/labelTxt/P9999.txt', data: '10 10 20 10 20 20 10 20 ship 1\n' },
    ]);
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.project_type, 'oriented_detection');
    assert.equal(res.body.import.format, 'dota');
    const { counts, skipped } = res.body.import;
    assertBalanced(counts);
    assert.equal(counts.kept.annotations.bbox + (counts.kept.annotations.polygon ?? 0), 6);
    assert.deepEqual(skipped.map((s: any) => s.item), ['line 1 (ship)', 'imagesource: GoogleEarth', 'gsd: 0.146343590398']);
    const images = (await alice.get(`/api/projects/${res.body.id}/images`)).body as any[];
    const annotations = (await alice.get(`/api/images/${images[0].id}/annotations`)).body as any[];
    assert.ok(annotations.every((a) => a.attributes.difficult === false));
    const classes = (await alice.get(`/api/projects/${res.body.id}/classes`)).body as any[];
    assert.deepEqual(classes.find((c) => c.name === 'plane').attributes, [{ name: 'difficult', type: 'checkbox', default: false }]);
  });
});
