import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Annotation, DatasetItem } from '../../src/formats/dataset.js';
import { readDataset, readDatasetZip } from '../../src/formats/readers/index.js';
import { WRITERS } from '../../src/formats/writers/index.js';
import { assertClose, collect } from '../helpers/shapes-roundtrip.js';
import { encodeRle, rleArea } from '../../src/imaging/rle.js';

const INTEROP = new URL('../fixtures/interop/', import.meta.url).pathname;

describe('LabelMe: every shape', () => {
  let work: string;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-shapes-labelme-'))));
  after(() => rm(work, { recursive: true, force: true }));

  it('LabelMe 3.0 XML: a coloured RGBA mask is read by its alpha (the blue one read as empty and was refused as having no pixels); occluded, attributes and parts kept', async () => {
    const source = await readDataset(join(INTEROP, 'labelme-3.0'));
    const [item] = await collect(source);
    const masks = item.annotations.filter((a) => a.type === 'mask');
    assert.deepEqual(masks.map((m) => [m.className, m.type === 'mask' ? rleArea(m.geometry.rle) : 0]), [['license plate', 10], ['m1', 130]]);
    const byName = new Map(item.annotations.map((a) => [a.className, a]));
    assert.deepEqual(byName.get('o1')?.attributes, { a1: true, occluded: true });
    // o1 has parts 3 and 4 (q1, b1); m1 (5) has part 6 (hg): two objects made of parts.
    assert.deepEqual(['o1', 'q1', 'b1', 'm1', 'hg', 'window'].map((n) => byName.get(n)?.groupId), [1, 1, 1, 2, 2, undefined]);
    assert.deepEqual(source.classSpecs?.get('o1')?.attributes, [{ name: 'a1', type: 'checkbox' }, { name: 'occluded', type: 'checkbox' }]);
  });

  it('labelme JSON: circle, line, point, points, linestrip, rectangle, polygon, mask (0/1 PNG bytes as labelme writes them), group_id, flags', async () => {
    const root = join(work, 'json');
    await mkdir(root, { recursive: true });
    await sharp({ create: { width: 60, height: 40, channels: 3, background: '#123' } }).jpeg().toFile(join(root, 'a.jpg'));
    const mask = await sharp(Buffer.from([0, 1, 1, 0, 1, 1]), { raw: { width: 3, height: 2, channels: 1 } }).png().toBuffer();
    const shape = (shape_type: string, points: number[][], extra: object = {}) => ({ label: 'x', points, group_id: null, description: '', shape_type, flags: {}, ...extra });
    await writeFile(join(root, 'a.json'), JSON.stringify({
      version: '5.5.0',
      flags: { sunny: true, night: false },
      imagePath: 'a.jpg',
      imageData: null,
      shapes: [
        shape('circle', [[10, 10], [13, 14]], { flags: { round: true } }),
        shape('line', [[1, 1], [5, 5]]),
        shape('point', [[7, 8]]),
        shape('points', [[1, 2], [3, 4]]),
        shape('linestrip', [[0, 0], [10, 0], [10, 10]]),
        shape('rectangle', [[20, 30], [10, 20]], { description: 'parked' }),
        shape('polygon', [[0, 0], [5, 0], [5, 5]], { group_id: 7 }),
        shape('polygon', [[20, 20], [25, 20], [25, 25]], { group_id: 7 }),
        shape('mask', [[30, 10], [32, 11]], { mask: mask.toString('base64') }),
        shape('cuboid', [[1, 1]]),
      ],
    }));
    const source = await readDataset(root);
    const [item] = await collect(source);
    assert.deepEqual(item.annotations.map((a) => a.type), ['ellipse', 'polyline', 'points', 'points', 'polyline', 'bbox', 'polygon', 'mask', 'classification']);
    assert.deepEqual(item.annotations[0].geometry, { cx: 10, cy: 10, rx: 5, ry: 5, rotation: 0 });
    assert.deepEqual(item.annotations[0].attributes, { round: true });
    assert.deepEqual(item.annotations[5].geometry, { x: 10, y: 20, width: 10, height: 10 });
    assert.deepEqual(item.annotations[5].attributes, { description: 'parked' });
    assert.deepEqual(item.annotations[6].geometry, { points: [[0, 0], [5, 0], [5, 5]], parts: [[[0, 0], [5, 0], [5, 5]], [[20, 20], [25, 20], [25, 25]]] });
    assert.equal(item.annotations[6].groupId, 7);
    const m = item.annotations[7];
    assert.ok(m.type === 'mask' && rleArea(m.geometry.rle) === 4, 'the 4 pixels of value 1');
    assert.deepEqual(source.ledger?.skippedList, [{ file: 'a.json', item: 'shape 10 (cuboid, label "x")', reason: '"cuboid" is not a LabelMe shape type Versa knows' }]);
  });

  it('labelme 3.x JSON (no shape_type, colour keys, the image embedded as imageData and not beside it) keeps its image and shapes', async () => {
    const root = join(work, 'v3');
    await mkdir(root, { recursive: true });
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#345' } }).jpeg().toBuffer();
    await writeFile(join(root, 'old.json'), JSON.stringify({
      version: '3.16.7', flags: {}, lineColor: [0, 255, 0, 128], fillColor: [255, 0, 0, 128], imagePath: '..\\photos\\old.jpg', imageData: jpeg.toString('base64'),
      shapes: [
        { label: 'roof', line_color: null, fill_color: null, points: [[1, 1], [30, 2], [20, 25]] },
        { label: 'door', line_color: null, fill_color: null, points: [[5, 5], [15, 20]], shape_type: 'rectangle', flags: {} },
      ],
    }));
    const source = await readDataset(root);
    const [item] = await collect(source);
    assert.equal(item.fileName, 'old.jpg');
    assert.deepEqual([item.width, item.height], [64, 48]);
    assert.deepEqual(item.annotations.map((a) => [a.type, a.className]), [['polygon', 'roof'], ['bbox', 'door']]);
    const chunks: Buffer[] = [];
    for await (const chunk of await (item.source as { open: () => Promise<AsyncIterable<Buffer>> }).open()) chunks.push(chunk);
    assert.deepEqual(Buffer.concat(chunks), jpeg, 'the embedded bytes are the image');
    assert.deepEqual(source.ledger?.skippedList, []);
  });

  it('the export opens in every labelme version: 5.5 schema and version, with the colour keys labelme 3.x reads by name', async () => {
    const png = join(work, 'v.png');
    await sharp({ create: { width: 20, height: 20, channels: 3, background: '#111' } }).png().toFile(png);
    const zip = join(work, 'versions.zip');
    await WRITERS.labelme.write({ classes: ['car'], items: [{ split: 'train', fileName: 'v.png', source: { path: png }, width: 20, height: 20, annotations: [{ type: 'bbox', className: 'car', geometry: { x: 1, y: 1, width: 5, height: 5 } }] }] }, createWriteStream(zip));
    const back = await readDatasetZip(zip);
    try {
      const doc = JSON.parse(await readFile(join(back.dir, 'train', 'v.json'), 'utf8'));
      assert.equal(doc.version, '5.5.0');
      assert.deepEqual([doc.lineColor, doc.fillColor, doc.imageData], [null, null, null]);
      assert.deepEqual([doc.shapes[0].line_color, doc.shapes[0].fill_color, doc.shapes[0].shape_type], [null, null, 'rectangle']);
    } finally {
      await back.cleanup();
    }
  });

  it('round trip: every shape LabelMe carries comes back (within 0.5 px), with its attributes and group', async () => {
    const width = 80;
    const height = 60;
    const png = join(work, 'img.png');
    await sharp({ create: { width, height, channels: 3, background: '#642' } }).png().toFile(png);
    const bitmap = new Uint8Array(width * height);
    for (let y = 5; y < 9; y++) for (let x = 40; x < 47; x++) bitmap[y * width + x] = 1;
    const annotations: Annotation[] = [
      { type: 'bbox', className: 'car', geometry: { x: 10.25, y: 5.5, width: 30, height: 20 }, attributes: { parked: true, colour: 'red', doors: 4, description: 'left lane' }, groupId: 2 },
      { type: 'polygon', className: 'road', geometry: { points: [[0, 0], [20, 0], [20, 10]] } },
      { type: 'polygon', className: 'road', geometry: { points: [[50, 50], [60, 50], [60, 55]], parts: [[[50, 50], [60, 50], [60, 55]], [[70, 50], [75, 50], [75, 55]]] }, groupId: 4 },
      { type: 'polyline', className: 'lane', geometry: { points: [[1, 1], [50.5, 40.25]] } },
      { type: 'polyline', className: 'lane', geometry: { points: [[1, 1], [20, 30], [40, 2]] } },
      { type: 'points', className: 'lane', geometry: { points: [[3, 4]] } },
      { type: 'points', className: 'lane', geometry: { points: [[3, 4], [5, 6], [7, 8]] } },
      { type: 'ellipse', className: 'wheel', geometry: { cx: 30, cy: 30, rx: 6, ry: 6, rotation: 0 } },
      { type: 'mask', className: 'road', geometry: { rle: encodeRle({ width, height, data: bitmap }) } },
      { type: 'classification', className: 'car', geometry: {} },
    ];
    const zip = join(work, 'out.zip');
    await WRITERS.labelme.write({ classes: ['car', 'road', 'lane', 'wheel'], items: [{ split: 'train', fileName: 'a.png', source: { path: png }, width, height, annotations }] }, createWriteStream(zip));
    const back = await readDatasetZip(zip);
    const [item] = await collect(back);
    assert.equal(item.split, 'train');
    assert.equal(item.annotations.length, annotations.length);
    annotations.forEach((want, i) => {
      const have = item.annotations[i];
      assert.equal(have.type, want.type, `annotation ${i}`);
      assert.equal(have.className, want.className);
      assert.deepEqual(have.attributes, want.attributes, `attributes of annotation ${i}`);
      assert.equal(have.groupId, want.groupId);
      if (want.type === 'mask' && have.type === 'mask') assert.equal(rleArea(have.geometry.rle), rleArea(want.geometry.rle));
      else assertClose(have.geometry, want.geometry);
    });
  });
});
