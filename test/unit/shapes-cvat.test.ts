import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import yauzl from 'yauzl';
import type { Annotation, ClassSpec, DatasetItem } from '../../src/formats/dataset.js';
import { readDataset, readDatasetZip } from '../../src/formats/readers/index.js';
import { WRITERS } from '../../src/formats/writers/index.js';
import { assertClose, collect } from '../helpers/shapes-roundtrip.js';
import { encodeRle, rleArea } from '../../src/imaging/rle.js';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

async function zipEntry(zip: string, name: string): Promise<string> {
  const archive = await yauzl.openPromise(zip, { lazyEntries: true });
  let text = '';
  for await (const entry of archive.eachEntry()) {
    if (entry.fileName === name) for await (const chunk of await archive.openReadStreamPromise(entry)) text += chunk;
  }
  archive.close();
  return text;
}

describe('CVAT for images 1.1: every shape', () => {
  let work: string;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-shapes-cvat-'))));
  after(() => rm(work, { recursive: true, force: true }));

  it('reads a real CVAT export with a skeleton (svg edges, sublabels), declared attributes, and accounts for unlabelled shapes', async () => {
    const source = await readDataset(join(FIXTURES, 'cvat-skeleton'));
    assert.equal(source.format, 'cvat');
    assert.deepEqual(source.classes, ['label1', 'label2', 'skeleton']);
    assert.deepEqual(source.classSpecs?.get('skeleton')?.skeleton, { points: ['1', '2', '3', '4'], edges: [[2, 1], [0, 3]], flip_pairs: [] });
    assert.deepEqual(source.classSpecs?.get('label1')?.attributes, [
      { name: 'a1', type: 'checkbox', default: false },
      { name: 'a2', type: 'select', values: ['v1', 'v2', 'v3'], default: 'v1' },
      { name: 'a3', type: 'text', default: '0000' },
      // "2.4 1 -5.6" is no [min, max, step] range: a number without bounds.
      { name: 'a4', type: 'number', default: 0 },
      { name: 'occluded', type: 'checkbox', default: false },
    ]);
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.fileName, i.annotations.map((a) => `${a.type}:${a.className}`)]), [
      ['img0.jpg', ['keypoints:skeleton', 'bbox:label1']],
      ['img1.jpg', ['keypoints:skeleton', 'points:label2']],
    ]);
    assert.deepEqual(items[0].annotations[0].geometry, { points: [[0, 0, 0], [2, 2, 2], [3, 3, 2], [4, 4, 2]] });
    assert.deepEqual(items[0].annotations[1].attributes, { a1: true, a2: 'v3', a3: '0003', a4: 2.4, occluded: true });
    assert.deepEqual(items[1].annotations[0].geometry, { points: [[3, 3, 2], [4, 4, 2], [0, 0, 0], [6, 6, 2]] });
    assert.deepEqual(source.ledger?.skipped.annotations, { polyline: 1, polygon: 1 });
    assert.deepEqual(source.ledger?.skippedList.map((s) => s.reason), ['the shape has no label', 'the shape has no label']);
  });

  it('a box with rotation="30" keeps its rotation (issue 25: it came in axis-aligned, 34.6 px off)', async () => {
    const root = join(work, 'rotated');
    await mkdir(join(root, 'images'), { recursive: true });
    await sharp({ create: { width: 200, height: 100, channels: 3, background: '#000' } }).png().toFile(join(root, 'images/a.png'));
    await writeFile(
      join(root, 'annotations.xml'),
      '<?xml version="1.0"?><annotations><version>1.1</version><image id="0" name="a.png" width="200" height="100">' +
        '<box label="car" occluded="0" xtl="50.00" ytl="20.00" xbr="150.00" ybr="60.00" rotation="30.00" z_order="0"/>' +
        '<ellipse label="wheel" occluded="0" cx="100.00" cy="50.00" rx="20.00" ry="10.00" rotation="45.00" z_order="0"/>' +
        '<box label="car" occluded="0" xtl="1" ytl="1" xbr="5" ybr="5" rotation="-90" z_order="0"/></image></annotations>',
    );
    const [item] = await collect(await readDataset(root));
    assert.deepEqual(item.annotations.map((a) => a.geometry), [
      { x: 50, y: 20, width: 100, height: 40, rotation: 30 },
      { cx: 100, cy: 50, rx: 20, ry: 10, rotation: 45 },
      { x: 1, y: 1, width: 4, height: 4, rotation: 270 },
    ]);
  });

  it('round trip: every shape, attributes, groups and skeletons come back (within 0.5 px / 0.5°); the archive is a CVAT project export', async () => {
    const width = 120;
    const height = 80;
    const png = join(work, 'img.png');
    await sharp({ create: { width, height, channels: 3, background: '#246' } }).png().toFile(png);
    const bitmap = new Uint8Array(width * height);
    for (let y = 10; y < 20; y++) for (let x = 30; x < 37; x++) bitmap[y * width + x] = 1;
    const classSpecs = new Map<string, ClassSpec>([
      ['car', { attributes: [{ name: 'parked', type: 'checkbox' }, { name: 'colour', type: 'select', values: ['red', 'blue'] }, { name: 'doors', type: 'number', values: [0, 6, 1] }, { name: 'plate', type: 'text' }, { name: 'occluded', type: 'checkbox', default: false }] }],
      ['person', { skeleton: { points: ['head', 'left hand', 'right hand'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] } }],
    ]);
    const annotations: Annotation[] = [
      { type: 'bbox', className: 'car', geometry: { x: 10.25, y: 5.5, width: 40, height: 20, rotation: 30 }, attributes: { parked: true, colour: 'blue', doors: 4, plate: 'AB 12', occluded: true }, groupId: 3 },
      { type: 'bbox', className: 'car', geometry: { x: 1, y: 2, width: 3, height: 4 } },
      { type: 'polygon', className: 'road', geometry: { points: [[0, 0], [20, 0], [20, 10]] } },
      { type: 'polygon', className: 'road', geometry: { points: [[50, 50], [60, 50], [60, 60]], parts: [[[50, 50], [60, 50], [60, 60]], [[70, 70], [80, 70], [80, 75]]] } },
      { type: 'polyline', className: 'lane', geometry: { points: [[1, 1], [50.5, 40.25], [100, 79]] } },
      { type: 'points', className: 'lane', geometry: { points: [[3, 4]] } },
      { type: 'ellipse', className: 'wheel', geometry: { cx: 60, cy: 40, rx: 10, ry: 5, rotation: 15.5 } },
      { type: 'mask', className: 'road', geometry: { rle: encodeRle({ width, height, data: bitmap }) } },
      { type: 'keypoints', className: 'person', geometry: { points: [[10, 10, 2], [0, 0, 0], [30.5, 12, 1]] }, groupId: 3 },
      { type: 'classification', className: 'car', geometry: {}, attributes: { colour: 'red' } },
    ];
    const items: DatasetItem[] = [
      { split: 'train', fileName: 'a.png', source: { path: png }, width, height, annotations },
      { split: 'valid', fileName: 'b.png', source: { path: png }, width, height, annotations: [annotations[1]] },
      { split: null, fileName: 'c.png', source: { path: png }, width, height, annotations: [] },
    ];
    const zip = join(work, 'out.zip');
    await WRITERS.cvat.write({ classes: ['car', 'road', 'lane', 'wheel', 'person'], classSpecs, items }, createWriteStream(zip));
    const xml = await zipEntry(zip, 'annotations.xml');
    // CVAT's project importer reads the subsets from <meta><project><subsets>, one a line, and images/<subset>/.
    assert.match(xml, /<project>[\s\S]*<subsets>train\nvalid\ndefault<\/subsets>[\s\S]*<\/project>/);
    assert.match(xml, /<image id="0" name="b\.png" subset="valid" task_id="2" width="120" height="80">/);
    assert.match(xml, /<type>skeleton<\/type>[\s\S]*<svg>[^<]*data-label-name=&quot;left hand&quot;/);
    assert.match(xml, /<name>left hand<\/name>\s*<type>points<\/type>\s*<attributes>\s*<\/attributes>\s*<parent>person<\/parent>/);
    const back = await readDatasetZip(zip);
    assert.deepEqual(back.classes, ['car', 'road', 'lane', 'wheel', 'person']);
    assert.deepEqual(back.classSpecs?.get('person')?.skeleton, { points: ['head', 'left hand', 'right hand'], edges: [[0, 1], [0, 2]], flip_pairs: [] });
    assert.deepEqual(back.classSpecs?.get('car')?.attributes, [
      { name: 'parked', type: 'checkbox', default: false },
      { name: 'colour', type: 'select', values: ['red', 'blue'], default: 'red' },
      { name: 'doors', type: 'number', values: [0, 6, 1], default: 0 },
      { name: 'plate', type: 'text' },
      { name: 'occluded', type: 'checkbox', default: false },
    ]);
    const after = await collect(back);
    assert.deepEqual(after.map((i) => [i.split, i.fileName]), [['train', 'a.png'], ['valid', 'b.png'], [null, 'c.png']]);
    const got = after[0].annotations;
    assert.equal(got.length, annotations.length);
    // Tags are written after the shapes; the rest keep their order.
    const expected = [...annotations.filter((a) => a.type !== 'classification'), annotations[annotations.length - 1]];
    expected.forEach((want, i) => {
      const have = got[i];
      assert.equal(have.type, want.type, `annotation ${i}`);
      assert.equal(have.className, want.className);
      assert.deepEqual(have.attributes, want.attributes, `attributes of annotation ${i}`);
      assert.equal(have.groupId, want.type === 'polygon' && 'parts' in want.geometry ? have.groupId : want.groupId);
      if (want.type === 'mask' && have.type === 'mask') assert.equal(rleArea(have.geometry.rle), rleArea(want.geometry.rle));
      else assertClose(have.geometry, want.geometry);
    });
  });
});
