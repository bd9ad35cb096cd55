import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Annotation, ClassSpec, DatasetItem, DatasetToWrite, ProjectType, WriteStats } from '../../src/formats/dataset.js';
import { readDatasetZip } from '../../src/formats/readers/index.js';
import { quadToBox } from '../../src/formats/geometry.js';
import { WRITERS, type ExportFormat } from '../../src/formats/writers/index.js';
import { rotatedCorners } from '../../src/imaging/geometry.js';

const W = 200;
const H = 100;

async function imageFile(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, await sharp({ create: { width: W, height: H, channels: 3, background: { r: 90, g: 120, b: 30 } } }).png().toBuffer());
  return path;
}

/** Writes `annotations` on one 200×100 image in `format`, reads the archive back; answers what came back and the write stats. */
async function roundTrip(format: ExportFormat, projectType: ProjectType, classes: string[], annotations: Annotation[], classSpecs = new Map<string, ClassSpec>()) {
  const dir = await mkdtemp(join(tmpdir(), 'versa-shapes-'));
  const item: DatasetItem = { split: 'train', fileName: 'scene.png', source: { path: await imageFile(dir, 'scene.png') }, width: W, height: H, annotations };
  const dataset: DatasetToWrite = { classes, classSpecs, projectType, items: [item] };
  const zipPath = join(dir, 'out.zip');
  const output = createWriteStream(zipPath);
  const stats = await WRITERS[format].write(dataset, output);
  const source = await readDatasetZip(zipPath);
  try {
    const items: DatasetItem[] = [];
    for await (const read of source.items()) items.push(read);
    return { stats, source, annotations: items[0].annotations };
  } finally {
    await source.cleanup();
  }
}

const near = (a: number, b: number, tolerance = 0.5) => Math.abs(a - b) <= tolerance;
const angleNear = (a = 0, b = 0) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b)) <= 0.5;

/** The same rotated box within 0.5 px and 0.5°: compared by corners (180° apart with the same corners is the same box). */
function assertSameBox(actual: Annotation, expected: { x: number; y: number; width: number; height: number; rotation?: number }) {
  assert.equal(actual.type, 'bbox', JSON.stringify(actual));
  if (actual.type !== 'bbox') return;
  const g = actual.geometry;
  for (const key of ['x', 'y', 'width', 'height'] as const) assert.ok(near(g[key], expected[key]), `${key}: ${g[key]} vs ${expected[key]}`);
  assert.ok(angleNear(g.rotation, expected.rotation), `rotation ${g.rotation} vs ${expected.rotation}`);
}

function assertSamePoints(actual: number[][], expected: number[][]) {
  assert.equal(actual.length, expected.length);
  actual.forEach((p, i) => p.forEach((v, k) => assert.ok(near(v, expected[i][k]), `point ${i}.${k}: ${v} vs ${expected[i][k]}`)));
}

const skeleton = { points: ['head', 'left_hand', 'right_hand'], edges: [[0, 1], [0, 2]] as [number, number][], flip_pairs: [[1, 2]] as [number, number][] };
const rotated = { x: 60, y: 30, width: 50, height: 20, rotation: 30 };
const twoParts = { points: [[10, 10], [40, 10], [40, 40]] as [number, number][], parts: [[[10, 10], [40, 10], [40, 40]], [[150, 60], [190, 60], [170, 90]]] as [number, number][][] };
const person = { points: [[100, 20, 2], [80, 50, 1], [0, 0, 0]] as [number, number, 0 | 1 | 2][], bbox: { x: 70, y: 10, width: 50, height: 70 } };

describe('shapes through the COCO, Ultralytics YOLO and DOTA writers and readers (issue 25)', () => {
  it('shapes-coco: keypoints with skeleton, multi-part polygon, rotated box, attributes round-trip; holes, ellipses, polylines are reported', async () => {
    const specs = new Map<string, ClassSpec>([['person', { skeleton }]]);
    const { stats, source, annotations } = await roundTrip('coco_zip', 'keypoint_detection', ['person', 'thing'], [
      { type: 'keypoints', className: 'person', geometry: person },
      { type: 'polygon', className: 'person', groupId: 4, geometry: { points: [[70, 10], [120, 10], [120, 80]] } },
      { type: 'keypoints', className: 'person', groupId: 4, geometry: { points: [[110, 30, 2], [100, 40, 2], [115, 45, 2]] } },
      { type: 'polygon', className: 'thing', geometry: twoParts },
      { type: 'bbox', className: 'thing', geometry: rotated, attributes: { occluded: true, colour: 'red' } },
      { type: 'polygon', className: 'thing', geometry: { points: [[0, 0], [60, 0], [60, 60], [0, 60]], holes: [[[20, 20], [40, 20], [40, 40], [20, 40]]] } },
      { type: 'ellipse', className: 'thing', geometry: { cx: 150, cy: 30, rx: 20, ry: 10, rotation: 0 } },
      { type: 'polyline', className: 'thing', geometry: { points: [[1, 1], [5, 5]] } },
      { type: 'points', className: 'thing', geometry: { points: [[3, 3]] } },
    ], specs);
    assert.equal(source.projectType, 'keypoint_detection');
    // The skeleton comes back with its edges; its flip pairs are guessed from the left_/right_ names (COCO has none).
    assert.deepEqual(source.classSpecs?.get('person')?.skeleton, skeleton);
    assert.deepEqual(stats.skipped, { polyline: 1, points: 1 });
    assert.deepEqual(stats.converted, { 'rotated bbox→bbox+polygon': 1, 'polygon with holes→mask': 1, 'ellipse→polygon': 1 });
    const [kp, kpGrouped, outline, parts, box, holed, ellipse] = annotations;
    assert.equal(kp.type, 'keypoints');
    if (kp.type === 'keypoints') {
      assertSamePoints(kp.geometry.points, person.points);
      assert.deepEqual(kp.geometry.bbox, person.bbox);
    }
    // A keypoints shape and the outline of its group are one COCO annotation, and two grouped shapes again.
    assert.equal(kpGrouped.type, 'keypoints');
    assert.equal(outline.type, 'polygon');
    assert.equal(kpGrouped.groupId, outline.groupId);
    assert.ok(kpGrouped.groupId !== undefined);
    assert.ok(parts.type === 'polygon' && parts.geometry.parts?.length === 2, 'one object in two parts');
    if (parts.type === 'polygon') assertSamePoints(parts.geometry.parts![1], twoParts.parts[1]);
    assertSameBox(box, rotated);
    assert.deepEqual(box.attributes, { occluded: true, colour: 'red' });
    assert.deepEqual(source.classSpecs?.get('thing')?.attributes?.map((a) => [a.name, a.type]), [['occluded', 'checkbox'], ['colour', 'select']]);
    assert.equal(holed.type, 'mask');
    assert.equal(ellipse.type, 'polygon');
    assert.equal(annotations.length, 7);
  });

  it('shapes-coco: a COCO person_keypoints file reads as a keypoint project; each thing it cannot keep is in the ledger', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'versa-coco-kp-'));
    const doc = await readFile(new URL('../fixtures/shapes-formats/person_keypoints_sample.json', import.meta.url), 'utf8');
    await writeFile(join(dir, 'person_keypoints_sample.json'), doc);
    await writeFile(join(dir, 'people.jpg'), await sharp({ create: { width: 320, height: 240, channels: 3, background: '#345' } }).jpeg().toBuffer());
    const { readDataset } = await import('../../src/formats/readers/index.js');
    const source = await readDataset(dir);
    assert.equal(source.projectType, 'keypoint_detection');
    const skeletonRead = source.classSpecs!.get('person')!.skeleton!;
    assert.equal(skeletonRead.points.length, 17);
    assert.deepEqual(skeletonRead.edges[0], [15, 13], 'COCO edges count from 1; ours from 0');
    assert.equal(skeletonRead.flip_pairs.length, 8, 'left/right pairs guessed from the names');
    const items = [];
    for await (const item of source.items()) items.push(item);
    assert.equal(items.length, 1);
    const types = items[0].annotations.map((a) => a.type);
    assert.deepEqual(types, ['keypoints', 'polygon', 'bbox', 'polygon', 'bbox']);
    const reasons = source.ledger!.skippedList.map((e) => `${e.item}: ${e.reason}`);
    assert.equal(reasons.length, 6, reasons.join('\n'));
    for (const pattern of [/annotation 104: it has 3 keypoint values/, /annotation 105: it uses category 9/, /annotation 106: it refers to image 7/, /annotation 107: its RLE/, /image 2 "missing.jpg"/, /of image 2: its image is not in the dataset/]) {
      assert.ok(reasons.some((r) => pattern.test(r)), `${pattern} in ${reasons.join('; ')}`);
    }
  });

  it('shapes-yolo: pose lines with kpt_shape and flip_idx round-trip; boxes in a pose set carry unlabelled points', async () => {
    const specs = new Map<string, ClassSpec>([['person', { skeleton }], ['dog', { skeleton: { ...skeleton, points: ['nose', 'left_ear', 'right_ear'] } }]]);
    const { source, annotations, stats } = await roundTrip('yolo_ultralytics', 'keypoint_detection', ['person', 'dog'], [
      { type: 'keypoints', className: 'person', geometry: person },
      { type: 'bbox', className: 'dog', geometry: { x: 10, y: 10, width: 30, height: 20 } },
      { type: 'polyline', className: 'dog', geometry: { points: [[1, 1], [5, 5]] } },
    ], specs);
    assert.equal(source.projectType, 'keypoint_detection');
    assert.deepEqual(source.classSpecs?.get('person')?.skeleton?.points, skeleton.points);
    assert.deepEqual(source.classSpecs?.get('dog')?.skeleton?.points, ['nose', 'left_ear', 'right_ear']);
    assert.deepEqual(source.classSpecs?.get('person')?.skeleton?.flip_pairs, [[1, 2]]);
    assert.deepEqual(stats.skipped, { polyline: 1 });
    const [kp, box] = annotations;
    assert.ok(kp.type === 'keypoints');
    if (kp.type === 'keypoints') {
      assertSamePoints(kp.geometry.points, person.points);
      for (const key of ['x', 'y', 'width', 'height'] as const) assert.ok(near(kp.geometry.bbox![key], person.bbox[key]));
    }
    assertSameBox(box, { x: 10, y: 10, width: 30, height: 20 });
  });

  it('shapes-yolo: the Ultralytics coco8-pose data.yaml keys are read (kpt_shape, flip_idx)', async () => {
    const yaml = await readFile(new URL('../fixtures/shapes-formats/coco8-pose.yaml', import.meta.url), 'utf8');
    const dir = await mkdtemp(join(tmpdir(), 'versa-pose-'));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'images/train'), { recursive: true });
    await mkdir(join(dir, 'labels/train'), { recursive: true });
    await writeFile(join(dir, 'data.yaml'), yaml);
    await imageFile(join(dir, 'images/train'), 'a.png');
    const points = Array.from({ length: 17 }, (_, i) => (i < 3 ? `0.${i + 2} 0.5 2` : '0 0 0')).join(' ');
    await writeFile(join(dir, 'labels/train/a.txt'), `0 0.5 0.5 0.4 0.8 ${points}\n`);
    const { readDataset } = await import('../../src/formats/readers/index.js');
    const source = await readDataset(dir);
    assert.equal(source.projectType, 'keypoint_detection');
    assert.equal(source.classSpecs?.get('person')?.skeleton?.flip_pairs.length, 8);
    const [item] = await (async () => { const out = []; for await (const i of source.items()) out.push(i); return out; })();
    assert.equal(item.annotations[0].type, 'keypoints');
    if (item.annotations[0].type === 'keypoints') assertSamePoints(item.annotations[0].geometry.points.slice(0, 4), [[40, 50, 2], [60, 50, 2], [80, 50, 2], [0, 0, 0]]);
  });

  it('shapes-yolo: OBB lines round-trip rotated and axis-aligned boxes; other shapes are converted and counted', async () => {
    const { source, annotations, stats } = await roundTrip('yolo', 'oriented_detection', ['ship'], [
      { type: 'bbox', className: 'ship', geometry: rotated },
      { type: 'bbox', className: 'ship', geometry: { x: 5, y: 5, width: 40, height: 30 } },
      { type: 'bbox', className: 'ship', geometry: { x: 120, y: 40, width: 40, height: 16, rotation: 300 } },
      { type: 'ellipse', className: 'ship', geometry: { cx: 150, cy: 70, rx: 20, ry: 8, rotation: 45 } },
      { type: 'points', className: 'ship', geometry: { points: [[3, 3]] } },
    ]);
    assert.equal(source.projectType, 'oriented_detection');
    assertSameBox(annotations[0], rotated);
    assertSameBox(annotations[1], { x: 5, y: 5, width: 40, height: 30 });
    assertSameBox(annotations[2], { x: 120, y: 40, width: 40, height: 16, rotation: 300 });
    assertSameBox(annotations[3], { x: 130, y: 62, width: 40, height: 16, rotation: 45 });
    assert.deepEqual(stats.converted, { 'ellipse→rotated bbox': 1 });
    assert.deepEqual(stats.skipped, { points: 1 });
  });

  it('shapes-dota: rotated boxes, difficult and quads round-trip; the real P0000 sample reads with its header accounted', async () => {
    const quad = { points: [[10, 60], [50, 55], [45, 90], [5, 95]] as [number, number][] };
    const { source, annotations, stats } = await roundTrip('dota', 'oriented_detection', ['large vehicle', 'plane'], [
      { type: 'bbox', className: 'plane', geometry: rotated, attributes: { difficult: true } },
      { type: 'bbox', className: 'plane', geometry: { x: 120, y: 10, width: 30, height: 20 }, attributes: { difficult: false } },
      { type: 'polygon', className: 'plane', geometry: quad },
      { type: 'polyline', className: 'plane', geometry: { points: [[1, 1], [5, 5]] } },
    ]);
    assert.equal(source.format, 'dota');
    assert.equal(source.projectType, 'oriented_detection');
    assertSameBox(annotations[0], rotated);
    assert.deepEqual(annotations[0].attributes, { difficult: true });
    assertSameBox(annotations[1], { x: 120, y: 10, width: 30, height: 20 });
    assert.deepEqual(annotations[1].attributes, { difficult: false });
    assert.ok(annotations[2].type === 'polygon', 'a quadrilateral that is not a rectangle stays a polygon');
    if (annotations[2].type === 'polygon') assertSamePoints(annotations[2].geometry.points, quad.points);
    assert.deepEqual(stats.skipped, { polyline: 1 });
    assert.deepEqual(source.classSpecs?.get('plane')?.attributes, [{ name: 'difficult', type: 'checkbox', default: false }]);

    // The real file: its quads are hand-placed, most within a pixel of a rectangle.
    const dir = await mkdtemp(join(tmpdir(), 'versa-dota-'));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'images'));
    await mkdir(join(dir, 'labelTxt'));
    await writeFile(join(dir, 'labelTxt/P0000.txt'), await readFile(new URL('../fixtures/shapes-formats/dota-P0000.txt', import.meta.url)));
    await writeFile(join(dir, 'images/P0000.png'), await sharp({ create: { width: 3600, height: 4400, channels: 3, background: '#000' } }).png().toBuffer());
    const { readDataset } = await import('../../src/formats/readers/index.js');
    const real = await readDataset(dir);
    assert.equal(real.format, 'dota');
    assert.deepEqual(real.classes, ['plane', 'large-vehicle', 'small-vehicle']);
    const items = [];
    for await (const item of real.items()) items.push(item);
    assert.equal(items[0].annotations.length, 6);
    assert.deepEqual(real.ledger!.skippedList.map((e) => e.item), ['imagesource: GoogleEarth', 'gsd: 0.146343590398']);
  });

  it('shapes-dota: quadToBox reads DOTA corner order (top edge first, clockwise) and the counter-clockwise order', () => {
    const box = { x: 100, y: 50, width: 60, height: 20, rotation: 20 };
    const corners = rotatedCorners(box);
    const read = quadToBox(corners)!;
    assert.ok(angleNear(read.rotation, 20) && near(read.width, 60) && near(read.height, 20));
    const ccw = quadToBox([corners[0], corners[3], corners[2], corners[1]])!;
    assert.ok(angleNear(ccw.rotation, 20) && near(ccw.width, 60), JSON.stringify(ccw));
    assert.equal(quadToBox([[0, 0], [10, 0], [14, 10], [0, 10]]), null, 'a trapezoid is not a box');
  });
});

export type { WriteStats };
