import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { encode as encodeRlePack } from '@thi.ng/rle-pack';
import type { DatasetToWrite } from '../../src/formats/dataset.js';
import { readLabelStudio } from '../../src/formats/readers/labelstudio-reader.js';
import { readDataset } from '../../src/formats/readers/index.js';
import { writeLabelStudio } from '../../src/formats/writers/labelstudio-writer.js';
import { writeMultiLabelCsv } from '../../src/formats/writers/multilabel-csv-writer.js';
import { WRITERS } from '../../src/formats/writers/index.js';
import { decodeRle, encodeRle } from '../../src/imaging/rle.js';
import { builtinPlugins } from '../../src/plugins/builtin-catalog.js';
import { assertClose, collect, greyImage, writeToFolder } from '../helpers/shapes-roundtrip.js';


function squareMask(width: number, height: number) {
  const data = new Uint8Array(width * height);
  for (let y = 10; y < 20; y++) for (let x = 30; x < 45; x++) data[y * width + x] = 1;
  return encodeRle({ width, height, data });
}

describe('shapes-labelstudio', () => {
  it('shapes-labelstudio round trip: every shape Label Studio carries comes back within 0.5 px / 0.5°, attributes equal', async () => {
    const [width, height] = [80, 60];
    const png = await greyImage(width, height);
    const dataset: DatasetToWrite = {
      classes: ['car', 'person', 'sky', 'day'],
      classSpecs: new Map([['car', { attributes: [{ name: 'color', type: 'select', values: ['red', 'blue'] }, { name: 'parked', type: 'checkbox' }, { name: 'doors', type: 'number' }, { name: 'note', type: 'text' }] }]]),
      items: [{
        split: 'train', fileName: 'a.png', width, height, source: { open: async () => (await import('node:stream')).Readable.from([png]) },
        annotations: [
          { type: 'bbox', className: 'car', geometry: { x: 10, y: 12, width: 20, height: 10 }, attributes: { color: 'red', parked: true, doors: 4, note: 'dent on the left' } },
          { type: 'bbox', className: 'car', geometry: { x: 40, y: 20, width: 24, height: 8, rotation: 30 } },
          { type: 'polygon', className: 'person', geometry: { points: [[5, 40], [20, 42], [12, 55]] } },
          { type: 'ellipse', className: 'person', geometry: { cx: 60, cy: 45, rx: 8, ry: 5, rotation: 20 } },
          { type: 'points', className: 'person', geometry: { points: [[30, 30], [33, 35], [36, 31]] } },
          { type: 'mask', className: 'sky', geometry: { rle: squareMask(width, height) } },
          { type: 'classification', className: 'day', geometry: {} },
        ],
      }],
    };
    const root = await writeToFolder(writeLabelStudio, dataset);
    try {
      const source = await readLabelStudio(root);
      const [item] = await collect(source);
      assert.equal(item.split, 'train');
      assert.deepEqual(item.annotations.map((a) => `${a.type}:${a.className}`), ['bbox:car', 'bbox:car', 'polygon:person', 'ellipse:person', 'points:person', 'mask:sky', 'classification:day']);
      const written = (dataset.items as { annotations: { geometry: unknown; attributes?: unknown }[] }[])[0].annotations;
      for (const i of [0, 1, 2, 3, 4]) assertClose(item.annotations[i].geometry, written[i].geometry, `annotation ${i}`);
      assert.deepEqual(decodeRle((item.annotations[5].geometry as { rle: never }).rle).data, decodeRle(squareMask(width, height)).data);
      assert.deepEqual(item.annotations[0].attributes, { color: 'red', parked: true, doors: 4, note: 'dent on the left' });
      const specs = source.classSpecs?.get('car')?.attributes ?? [];
      assert.deepEqual(specs.map((s) => [s.name, s.type]).sort(), [['color', 'select'], ['doors', 'number'], ['note', 'select'], ['parked', 'checkbox']]);
      assert.equal(source.ledger?.skippedCount, 0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("shapes-labelstudio reader: a rectangle rotated about its top-left corner becomes Versa's box about its centre", async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-ls-'));
    try {
      await writeFile(join(root, 'a.png'), await greyImage(100, 100));
      // 40×20 px from (10, 10), turned 90° clockwise about (10, 10): it covers x (−10…10), y (10…50); centre (0, 30).
      const result = [{ id: 'r1', type: 'rectanglelabels', from_name: 'label', to_name: 'image', original_width: 100, original_height: 100, value: { x: 10, y: 10, width: 40, height: 20, rotation: 90, rectanglelabels: ['box'] } }];
      await writeFile(join(root, 'export.json'), JSON.stringify([{ id: 1, data: { image: '/data/upload/1/a.png' }, annotations: [{ result }] }]));
      const [item] = await collect(await readLabelStudio(root));
      assertClose(item.annotations[0].geometry, { x: -20, y: 20, width: 40, height: 20, rotation: 90 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shapes-labelstudio reader: keypoints on a region, ellipses, per-region controls, a relation as a group; what it cannot keep is in the ledger', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-ls-'));
    try {
      await writeFile(join(root, 'c.png'), await greyImage(200, 100));
      const base = { to_name: 'image', original_width: 200, original_height: 100 };
      const result = [
        { ...base, id: 'box', type: 'rectanglelabels', from_name: 'label', value: { x: 10, y: 10, width: 50, height: 50, rotation: 0, rectanglelabels: ['person'] } },
        { ...base, id: 'k1', parentID: 'box', type: 'keypointlabels', from_name: 'kp', value: { x: 20, y: 20, width: 1, keypointlabels: ['nose'] } },
        { ...base, id: 'k2', parentID: 'box', type: 'keypointlabels', from_name: 'kp', value: { x: 25, y: 30, width: 1, keypointlabels: ['left_eye'] } },
        { ...base, id: 'e1', type: 'ellipselabels', from_name: 'ell', value: { x: 50, y: 50, radiusX: 10, radiusY: 20, rotation: 15, ellipselabels: ['ball'] } },
        { ...base, id: 'box', type: 'textarea', from_name: 'note', value: { text: ['tall'] } },
        { ...base, id: 't1', type: 'textarea', from_name: 'caption', value: { text: ['a sunny day'] } },
        { from_id: 'box', to_id: 'e1', type: 'relation', direction: 'right' },
      ];
      await writeFile(join(root, 'export.json'), JSON.stringify([{ id: 7, data: { image: 'c.png' }, annotations: [{ result }] }]));
      const source = await readLabelStudio(root);
      const [item] = await collect(source);
      // Points named otherwise than the rectangle they hang on are its keypoints (Label Studio's pose templates).
      assert.deepEqual(item.annotations.map((a) => [a.type, a.className, a.groupId ?? null, a.attributes ?? null]), [
        // The relation links the pose instance and the ellipse: one group.
        ['keypoints', 'person', 1, { note: 'tall' }], ['ellipse', 'ball', 1, null],
      ]);
      assertClose(item.annotations[0].geometry, { points: [[40, 20, 2], [50, 30, 2]], bbox: { x: 20, y: 10, width: 100, height: 50 } });
      assert.deepEqual(source.classSpecs?.get('person')?.skeleton, { points: ['nose', 'left_eye'], edges: [], flip_pairs: [] });
      assertClose(item.annotations[1].geometry, { cx: 100, cy: 50, rx: 20, ry: 20, rotation: 15 });
      assert.deepEqual(source.ledger!.skippedList.map((s) => s.item), ['task 7 result t1 (textarea)']);
      assert.deepEqual(source.ledger!.counts().skipped.annotations, { textarea: 1 });
      assert.deepEqual(source.ledger!.counts().kept.annotations, { relation: 1 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shapes-labelstudio reader: relations (as the SDK writes them) and parentID chains make groups; relation labels and dangling relations are skipped with why', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-ls-'));
    try {
      await writeFile(join(root, 'd.png'), await greyImage(100, 100));
      const base = { to_name: 'image', original_width: 100, original_height: 100 };
      const poly = (id: string, x: number, extra = {}) => ({ ...base, ...extra, id, type: 'polygonlabels', from_name: 'poly', value: { points: [[x, 10], [x + 10, 10], [x + 10, 20]], polygonlabels: ['fence'] } });
      const result = [
        poly('p1', 10), poly('p2', 40), poly('p3', 70, { parentID: 'p2' }), poly('p4', 10, {}),
        { from_id: 'p1', to_id: 'p2', type: 'relation', direction: 'right', labels: ['part of'] },
        { from_id: 'p4', to_id: 'gone', type: 'relation', direction: 'bi' },
      ];
      await writeFile(join(root, 'export.json'), JSON.stringify([{ id: 3, data: { image: 'd.png' }, annotations: [{ result }] }]));
      const source = await readLabelStudio(root);
      const [item] = await collect(source);
      // p1–p2 by the relation, p3 hanging on p2: one object of three polygons; p4 on its own.
      assert.deepEqual(item.annotations.map((a) => a.groupId ?? null), [1, 1, 1, null]);
      assert.deepEqual(source.ledger!.skippedList.map((s) => [s.item, s.reason]), [
        ['labels "part of" of task 3 relation p1→p2', 'a Versa group has no relation labels'],
        ['task 3 relation p4→gone', 'it does not link two regions of the task'],
      ]);
      assert.deepEqual(source.ledger!.counts().kept.annotations, { relation: 1 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shapes-labelstudio keypoints round trip: keypointlabels named by the skeleton on their box come back as the same keypoints within 0.5 px', async () => {
    const [width, height] = [120, 90];
    const png = await greyImage(width, height);
    const skeleton = { points: ['nose', 'left_eye', 'right_eye', 'left_hand', 'right_hand'], edges: [[0, 1], [0, 2]] as [number, number][], flip_pairs: [[1, 2], [3, 4]] as [number, number][] };
    const first = { points: [[50, 20, 2], [46, 17, 2], [54, 17, 1], [0, 0, 0], [70, 60, 2]] as [number, number, 0 | 1 | 2][], bbox: { x: 30, y: 10, width: 50, height: 70 } };
    // No box, and the first points not labelled: the skeleton's order still comes back from the other instance.
    const second = { points: [[0, 0, 0], [0, 0, 0], [12.3, 40.7, 2], [20.2, 70.1, 1], [4.5, 66.6, 2]] as [number, number, 0 | 1 | 2][] };
    const dataset: DatasetToWrite = {
      classes: ['person'],
      classSpecs: new Map([['person', { skeleton, attributes: [{ name: 'pose', type: 'select', values: ['standing', 'sitting'] }] }]]),
      projectType: 'keypoint_detection',
      items: [{
        split: 'train', fileName: 'p.png', width, height, source: { open: async () => (await import('node:stream')).Readable.from([png]) },
        annotations: [
          { type: 'keypoints', className: 'person', geometry: first, attributes: { pose: 'standing' } },
          { type: 'keypoints', className: 'person', geometry: second },
        ],
      }],
    };
    const root = await writeToFolder(writeLabelStudio, dataset);
    try {
      const source = await readLabelStudio(root);
      const [item] = await collect(source);
      assert.equal(source.projectType, 'keypoint_detection');
      assert.deepEqual(source.classSpecs?.get('person')?.skeleton?.points, skeleton.points);
      assert.deepEqual(source.classSpecs?.get('person')?.skeleton?.flip_pairs, [[1, 2], [3, 4]], 'left/right pairs guessed from the names');
      assert.deepEqual(item.annotations.map((a) => [a.type, a.className, a.attributes ?? null]), [['keypoints', 'person', { pose: 'standing' }], ['keypoints', 'person', null]]);
      assertClose(item.annotations[0].geometry, first);
      const back = item.annotations[1].geometry as { points: unknown; bbox: unknown };
      assertClose(back.points, second.points);
      assertClose(back.bbox, { x: 4.5, y: 40.7, width: 15.7, height: 29.4 }, "the points' envelope is its box");
      assert.equal(source.ledger?.skippedCount, 0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shapes-labelstudio groups: a box and points of its class come back as one group (points hang on the box); other groups as relations, read back as groups; a lone member is skipped', async () => {
    const [width, height] = [60, 40];
    const png = await greyImage(width, height);
    const dataset: DatasetToWrite = {
      classes: ['car', 'wheel'],
      items: [{
        split: 'train', fileName: 'g.png', width, height, source: { open: async () => (await import('node:stream')).Readable.from([png]) },
        annotations: [
          { type: 'bbox', className: 'car', groupId: 3, geometry: { x: 5, y: 5, width: 30, height: 20 } },
          { type: 'points', className: 'car', groupId: 3, geometry: { points: [[10, 10], [20, 15]] } },
          { type: 'bbox', className: 'wheel', groupId: 4, geometry: { x: 40, y: 20, width: 10, height: 10 } },
          { type: 'polygon', className: 'wheel', groupId: 4, geometry: { points: [[45, 25], [55, 25], [55, 35]] } },
          { type: 'ellipse', className: 'wheel', groupId: 4, geometry: { cx: 20, cy: 30, rx: 4, ry: 3, rotation: 0 } },
          { type: 'bbox', className: 'car', groupId: 9, geometry: { x: 1, y: 30, width: 5, height: 5 } },
        ],
      }],
    };
    const root = await writeToFolder(WRITERS.labelstudio.write, dataset);
    try {
      const [item] = await collect(await readLabelStudio(root));
      const [box, points, wheel, part, ellipse, lone] = item.annotations;
      assert.deepEqual(item.annotations.map((a) => a.type), ['bbox', 'points', 'bbox', 'polygon', 'ellipse', 'bbox']);
      assert.ok(box.groupId !== undefined && box.groupId === points.groupId, JSON.stringify(item.annotations));
      assert.ok(wheel.groupId !== undefined && wheel.groupId !== box.groupId && part.groupId === wheel.groupId && ellipse.groupId === wheel.groupId, JSON.stringify(item.annotations));
      assert.equal(lone.groupId, undefined);
      assertClose(points.geometry, { points: [[10, 10], [20, 15]] });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    const { PassThrough } = await import('node:stream');
    const out = new PassThrough();
    out.resume();
    const stats = await WRITERS.labelstudio.write(dataset, out);
    assert.deepEqual(stats.extras?.groups, {
      converted: { 'group→points hanging on their box (parentID)': 1, 'group→relations between its regions': 1 },
      skipped: { 'group (a group of one region has nothing to relate)': 1 },
    });
  });

  it('shapes-labelstudio brush: Label Studio RLE (rle-pack over RGBA) decodes to the mask it was made from', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-ls-brush-'));
    try {
      await writeFile(join(root, 'b.png'), await greyImage(8, 4));
      const rgba = new Uint8Array(8 * 4 * 4);
      for (const p of [9, 10, 17, 18]) rgba.fill(255, p * 4, p * 4 + 4);
      const result = [{ id: 'b1', type: 'brushlabels', from_name: 'tag', to_name: 'image', original_width: 8, original_height: 4, value: { format: 'rle', rle: Array.from(encodeRlePack(rgba, rgba.length, 8)), brushlabels: ['blob'] } }];
      await writeFile(join(root, 'export.json'), JSON.stringify([{ id: 1, data: { image: 'b.png' }, annotations: [{ result }] }]));
      const [item] = await collect(await readLabelStudio(root));
      const bitmap = decodeRle((item.annotations[0].geometry as { rle: never }).rle);
      assert.deepEqual([...bitmap.data].flatMap((v, i) => (v ? [i] : [])), [9, 10, 17, 18]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('shapes-labelstudio catalog', () => {
  it('every importer the plugin catalog lists for Label Studio and multi-label CSV has a writer, and what it writes reads back', async () => {
    const exporters = new Set(builtinPlugins().filter((p) => p.type === 'exporter').map((p) => p.name));
    for (const name of ['labelstudio', 'multilabel_csv']) {
      assert.ok(exporters.has(name), `${name} exporter listed`);
      assert.ok(name in WRITERS, `${name} writer exists`);
    }
    const png = await greyImage(10, 10);
    const root = await writeToFolder(writeMultiLabelCsv, {
      classes: ['cat', 'dog', 'bird'],
      items: [
        { split: 'train', fileName: 'a.png', source: { open: async () => (await import('node:stream')).Readable.from([png]) }, width: 10, height: 10, annotations: [{ type: 'classification', className: 'cat', geometry: {} }, { type: 'classification', className: 'bird', geometry: {} }] },
        { split: 'valid', fileName: 'b.png', source: { open: async () => (await import('node:stream')).Readable.from([png]) }, width: 10, height: 10, annotations: [{ type: 'classification', className: 'dog', geometry: {} }] },
      ],
    });
    try {
      const source = await readDataset(root);
      assert.equal(source.format, 'multilabel_csv');
      const items = await collect(source);
      assert.deepEqual(items.map((i) => [i.split, i.fileName, i.annotations.map((a) => a.className)]), [['train', 'a.png', ['cat', 'bird']], ['valid', 'b.png', ['dog']]]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
