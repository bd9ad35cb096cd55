import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Annotation, DatasetToWrite } from '../../src/formats/dataset.js';
import { readDatumaro } from '../../src/formats/readers/datumaro-reader.js';
import { writeDatumaro } from '../../src/formats/writers/datumaro-writer.js';
import { decodeRle, encodeRle } from '../../src/imaging/rle.js';
import { assertClose, collect, greyImage, writeToFolder } from '../helpers/shapes-roundtrip.js';

describe('shapes-datumaro', () => {
  it('shapes-datumaro round trip: every shape with attributes, groups and skeletons comes back within 0.5 px / 0.5°', async () => {
    const [width, height] = [80, 60];
    const png = await greyImage(width, height);
    const data = new Uint8Array(width * height);
    for (let y = 5; y < 9; y++) for (let x = 60; x < 70; x++) data[y * width + x] = 1;
    const mask = encodeRle({ width, height, data });
    const skeleton = { points: ['head', 'left', 'right'], edges: [[0, 1], [0, 2]] as [number, number][], flip_pairs: [] };
    const annotations = [
      { type: 'bbox', className: 'car', geometry: { x: 40, y: 20, width: 24, height: 8, rotation: 30 }, attributes: { occluded: false, color: 'red', doors: 4 } },
      { type: 'polygon', className: 'car', groupId: 7, geometry: { points: [[5, 5], [20, 5], [12, 15]], parts: [[[5, 5], [20, 5], [12, 15]], [[25, 5], [35, 5], [30, 12]]] } },
      { type: 'polyline', className: 'lane', geometry: { points: [[1, 50], [40, 45], [79, 50]] } },
      { type: 'points', className: 'lane', geometry: { points: [[10, 10], [11, 12]] } },
      { type: 'ellipse', className: 'ball', geometry: { cx: 60, cy: 45, rx: 8, ry: 5, rotation: 20 } },
      { type: 'keypoints', className: 'person', geometry: { points: [[30, 30, 2], [0, 0, 0], [36, 31, 1]], bbox: { x: 28, y: 28, width: 10, height: 6 } } },
      { type: 'mask', className: 'sky', geometry: { rle: mask } },
      { type: 'classification', className: 'day', geometry: {} },
    ] as Annotation[];
    const dataset: DatasetToWrite = {
      classes: ['car', 'lane', 'ball', 'person', 'sky', 'day'],
      classSpecs: new Map([['person', { skeleton }], ['car', { attributes: [{ name: 'color', type: 'select', values: ['red'] }, { name: 'doors', type: 'number' }, { name: 'occluded', type: 'checkbox' }] }]]),
      items: [{ split: 'train', fileName: 'a.png', width, height, source: { open: () => Readable.from([png]) }, annotations }],
    };
    const root = await writeToFolder(writeDatumaro, dataset);
    try {
      const source = await readDatumaro(root);
      const [item] = await collect(source);
      assert.equal(item.split, 'train');
      assert.deepEqual(item.annotations.map((a) => `${a.type}:${a.className}`), ['bbox:car', 'polygon:car', 'polyline:lane', 'points:lane', 'ellipse:ball', 'keypoints:person', 'mask:sky', 'classification:day']);
      for (const i of [0, 1, 2, 3, 4, 5]) assertClose(item.annotations[i].geometry, annotations[i].geometry, `annotation ${i}`);
      assert.deepEqual(decodeRle((item.annotations[6].geometry as { rle: never }).rle).data, data);
      assert.deepEqual(item.annotations[0].attributes, { occluded: false, color: 'red', doors: 4 });
      assert.equal(item.annotations[1].groupId, 7);
      assert.deepEqual(source.classSpecs?.get('person')?.skeleton, skeleton);
      assert.deepEqual(source.classSpecs?.get('car')?.attributes?.map((s) => [s.name, s.type]), [['occluded', 'checkbox'], ['color', 'select'], ['doors', 'number']]);
      assert.equal(source.ledger?.skippedCount, 0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shapes-datumaro reader: a CVAT Datumaro export with caption, cuboid and skeleton types lists each as skipped', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-dm-'));
    try {
      await mkdir(join(root, 'annotations'));
      await mkdir(join(root, 'images/default'), { recursive: true });
      await writeFile(join(root, 'images/default/x.png'), await greyImage(50, 40));
      const doc = {
        info: {},
        categories: { label: { labels: [{ name: 'car', parent: '', attributes: ['color'] }], attributes: ['occluded'] }, points: { items: [] } },
        items: [{
          id: 'x', image: { path: 'x.png', size: [40, 50] }, annotations: [
            { id: 1, type: 'bbox', label_id: 0, group: 0, z_order: 0, bbox: [1, 2, 10, 8], attributes: { occluded: true, rotation: 45, color: { rgb: 1 } } },
            { id: 2, type: 'caption', caption: 'a car', group: 0, attributes: {} },
            { id: 3, type: 'cuboid_3d', label_id: 0, group: 0, position: [0, 0, 0], attributes: {} },
            { id: 4, type: 'polygon', label_id: 3, group: 0, points: [1, 1, 5, 1, 3, 4], attributes: {} },
          ],
        }],
      };
      await writeFile(join(root, 'annotations/default.json'), JSON.stringify(doc));
      const source = await readDatumaro(root);
      const [item] = await collect(source);
      assert.deepEqual(item.annotations.map((a) => [a.type, a.geometry, a.attributes]), [['bbox', { x: 1, y: 2, width: 10, height: 8, rotation: 45 }, { occluded: true }]]);
      assert.deepEqual(source.ledger!.skippedList.map((s) => [s.item, s.reason]), [
        ['attribute "color" of item "x" annotation 1 (bbox)', 'the value is not true/false, a number or a text'],
        ['item "x" annotation 2 (caption)', "Versa has no shape for Datumaro's caption"],
        ['item "x" annotation 3 (cuboid_3d)', "Versa has no shape for Datumaro's cuboid_3d"],
        ['item "x" annotation 4 (polygon)', 'label_id 3 is not in the label categories'],
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
