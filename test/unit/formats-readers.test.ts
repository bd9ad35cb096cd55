import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { decodeRle, rleArea } from '../../src/imaging/rle.js';
import type { DatasetItem, DatasetSource } from '../../src/formats/dataset.js';
import { FormatError } from '../../src/formats/format-error.js';
import { detectFormat, readDataset } from '../../src/formats/readers/index.js';

/** Real samples copied from the shared datasets (test/fixtures/<name>/SOURCE.md). */
const DATASETS = new URL('../fixtures/', import.meta.url).pathname;

async function collect(source: DatasetSource): Promise<DatasetItem[]> {
  const items: DatasetItem[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

function splitCounts(items: DatasetItem[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[String(item.split)] = (counts[String(item.split)] ?? 0) + 1;
  return counts;
}

describe('dataset readers on real samples of the shared datasets', () => {
  it('YOLO detection: data.yaml with ../train/images paths and a roboflow block, empty label files', async () => {
    const source = await readDataset(join(DATASETS, 'indian-vehicles-yolo'));
    assert.equal(source.format, 'yolo');
    assert.equal(source.projectType, 'object_detection');
    assert.deepEqual(source.classes, ['Bicycle', 'Bus', 'Car', 'LCV', 'Three-wheeler', 'Truck', 'Two-wheelers']);
    const items = await collect(source);
    assert.deepEqual(splitCounts(items), { train: 4, valid: 2, test: 1 });
    assert.equal(items.flatMap((i) => i.annotations).length, 17);
    // The 4 empty label files are images without annotations, not errors.
    assert.equal(items.filter((i) => i.annotations.length === 0).length, 4);
    for (const item of items) {
      assert.equal(item.width, 640);
      for (const a of item.annotations) {
        assert.equal(a.type, 'bbox');
        if (a.type === 'bbox') assert.ok(a.geometry.x >= -0.01 && a.geometry.x + a.geometry.width <= 640.01);
      }
    }
  });

  it('YOLO segmentation: polygons open and closed, 5-field box lines mixed in', async () => {
    const source = await readDataset(join(DATASETS, 'toy-cars-yolo-seg'));
    assert.equal(source.projectType, 'instance_segmentation');
    assert.deepEqual(source.classes, ['driver car f', 'emergency car', 'small cars']);
    const annotations = (await collect(source)).flatMap((i) => i.annotations);
    assert.equal(annotations.length, 58);
    const boxes = annotations.filter((a) => a.type === 'bbox');
    assert.equal(boxes.length, 3);
    assert.ok(boxes.every((b) => b.className === 'small cars'));
    const polygons = annotations.filter((a) => a.type === 'polygon');
    assert.equal(polygons.length, 55);
    for (const p of polygons) {
      if (p.type !== 'polygon') continue;
      const points = p.geometry.points;
      const [first, last] = [points[0], points[points.length - 1]];
      assert.ok(first[0] !== last[0] || first[1] !== last[1], 'closed polygons lose their repeated first point');
      assert.ok(points.length >= 3);
    }
  });

  it('COCO per-split: placeholder category id 0 with the same name is dropped, ids from 0, unannotated images kept', async () => {
    const source = await readDataset(join(DATASETS, 'plants-coco-seg'));
    assert.equal(source.format, 'coco');
    assert.equal(source.projectType, 'instance_segmentation');
    assert.deepEqual(source.classes, ['plants']);
    const items = await collect(source);
    assert.deepEqual(splitCounts(items), { train: 6, valid: 2, test: 1 });
    assert.equal(items.filter((i) => i.annotations.length === 0).length, 3);
    const annotations = items.flatMap((i) => i.annotations);
    assert.equal(annotations.length, 21);
    assert.ok(annotations.every((a) => a.type === 'polygon' && a.className === 'plants'));
    // Image id 0 and annotation id 0 exist and are not lost to a falsy check.
    assert.ok(items.some((i) => i.fileName.startsWith('jn9vyid8m5oiqbbk5rilvvlbq2ql') && i.annotations.length > 0));
  });

  it('COCO with empty and box-shaped segmentations keeps the real outlines, and its type follows them (issue 25)', async () => {
    const source = await readDataset(join(DATASETS, 'car-damage-coco-seg'));
    // A polygon stays a polygon: the files hold outlines, so the project is a segmentation project (issue 25).
    assert.equal(source.projectType, 'instance_segmentation');
    assert.equal(source.classes.length, 9);
    assert.ok(!source.classes.includes('car-damaged-parts'));
    const annotations = (await collect(source)).flatMap((i) => i.annotations);
    assert.equal(annotations.length, 23);
    // The skewed quadrilateral and the one real outline stay polygons; rectangles become boxes.
    const polygons = annotations.filter((a) => a.type === 'polygon');
    assert.equal(polygons.length, 2);
    assert.ok(polygons.some((p) => p.type === 'polygon' && p.geometry.points.length === 4));
    // The outline's 22 points repeat the first one at the end; the ring keeps 21.
    assert.ok(polygons.some((p) => p.type === 'polygon' && p.geometry.points.length === 21));
  });

  it('class-per-folder classification', async () => {
    const source = await readDataset(join(DATASETS, 'fresh-rotten-cls'));
    assert.equal(source.format, 'folders');
    assert.equal(source.projectType, 'classification');
    assert.deepEqual(source.classes, ['freshapples', 'freshbanana', 'freshoranges', 'rottenapples', 'rottenbanana', 'rottenoranges']);
    const items = await collect(source);
    assert.deepEqual(splitCounts(items), { test: 6, train: 6, valid: 6 });
    assert.ok(items.every((i) => i.annotations.length === 1 && i.annotations[0].type === 'classification'));
    assert.equal(items.filter((i) => i.split === 'train' && i.annotations[0].className === 'rottenbanana').length, 1);
  });

  it('PNG masks: background dropped, wrong-size masks resized to the image, one mask annotation per class', async () => {
    const source = await readDataset(join(DATASETS, 'plants-semantic-masks'));
    assert.equal(source.format, 'masks');
    assert.equal(source.projectType, 'semantic_segmentation');
    assert.deepEqual(source.classes, ['plants']);
    const items = (await collect(source)).filter((i) => i.split !== 'train' || i.fileName.startsWith('18f4lq885') || i.fileName.startsWith('nq5xib6wt'));
    const wrongSize = items.filter((i) => i.split === 'train');
    assert.equal(wrongSize.length, 6);
    // The 3840×2160 all-zero masks read as "no annotation" on their 640×640 images.
    assert.ok(wrongSize.every((i) => i.width === 640 && i.annotations.length === 0));
    for (const item of items.filter((i) => i.annotations.length > 0)) {
      const [mask] = item.annotations;
      assert.equal(mask.type, 'mask');
      if (mask.type === 'mask') {
        assert.deepEqual(mask.geometry.rle.size, [640, 640]);
        assert.ok(rleArea(mask.geometry.rle) > 0);
      }
    }
  });

  it('PNG masks with 11 classes from class indices', async () => {
    const source = await readDataset(join(DATASETS, 'indoor-semantic-masks'));
    assert.deepEqual(source.classes, ['cabinet', 'ceiling', 'chair', 'door', 'elevator', 'railing', 'road', 'stair', 'tree', 'wall']);
    let seen = 0;
    for await (const item of source.items()) {
      if (item.split !== 'test') continue;
      const classes = item.annotations.map((a) => a.className);
      assert.equal(new Set(classes).size, classes.length, 'one mask per class per image');
      if (++seen === 5) break;
    }
    assert.equal(seen, 5);
  });
});

describe('dataset readers on synthetic inputs', () => {
  let work: string;
  let count = 0;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-readers-'))));
  after(() => rm(work, { recursive: true, force: true }));

  async function folder(files: Record<string, string | Buffer>): Promise<string> {
    const root = join(work, `case-${++count}`);
    for (const [name, data] of Object.entries(files)) {
      await mkdir(join(root, name, '..'), { recursive: true });
      await writeFile(join(root, name), data);
    }
    return root;
  }

  let jpeg: Buffer;
  before(async () => {
    jpeg = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#808080' } }).jpeg().toBuffer();
  });

  async function expectFormatError(root: string, pattern: RegExp) {
    await assert.rejects(async () => collect(await readDataset(root)), (error: unknown) => error instanceof FormatError && pattern.test(error.message));
  }

  it('YOLO names given as an index map, Ultralytics images/<split> layout, missing label file', async () => {
    const root = await folder({
      'data.yaml': 'path: .\ntrain: images/train\nval: images/val\nnames:\n  0: cat\n  1: dog\n',
      'images/train/a.jpg': jpeg,
      'images/train/b.jpg': jpeg,
      'labels/train/a.txt': '1 0.5 0.5 0.5 0.5\n',
      'images/val/c.jpg': jpeg,
    });
    const source = await readDataset(root);
    assert.deepEqual(source.classes, ['cat', 'dog']);
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.split, i.fileName, i.annotations.length]), [
      ['train', 'a.jpg', 1],
      ['train', 'b.jpg', 0],
      ['valid', 'c.jpg', 0],
    ]);
    assert.deepEqual(items[0].annotations[0], { type: 'bbox', className: 'dog', geometry: { x: 10, y: 5, width: 20, height: 10 } });
  });

  it('YOLO errors name the file and line', async () => {
    const base = { 'data.yaml': 'train: train/images\nnames: [cat]\n', 'train/images/a.jpg': jpeg };
    // A class index past the names is skipped through the ledger, with its file and line (issue 25).
    const unknown = await readDataset(await folder({ ...base, 'train/labels/a.txt': '0 0.5 0.5 0.2 0.2\n3 0.5 0.5 0.2 0.2' }));
    assert.equal((await collect(unknown))[0].annotations.length, 1);
    assert.deepEqual(unknown.ledger?.skippedList.map((e) => [e.file, e.item]), [['train/a.txt', 'line 2']]);
    assert.match(unknown.ledger!.skippedList[0].reason, /class index 3/);
    await expectFormatError(await folder({ ...base, 'train/labels/a.txt': '0 0.5 0.5 0.2' }), /line 1: expected "class cx cy w h"/);
    await expectFormatError(await folder({ ...base, 'train/labels/a.txt': '0 0.5 abc 0.2 0.2' }), /coordinates must be numbers/);
    await expectFormatError(await folder({ 'data.yaml': 'train: train/images\nnc: 2\nnames: [cat]\n', 'train/images/a.jpg': jpeg }), /nc is 2 but names lists 1/);
    await expectFormatError(await folder({ 'data.yaml': 'train: [unclosed\n', 'train/images/a.jpg': jpeg }), /not valid YAML/);
    await expectFormatError(await folder({ 'data.yaml': 'train: ok/../../../etc\nnames: [a]\n' }), /leaves the dataset folder/);
  });

  it('COCO single JSON with compressed RLE, an images/ folder and multi-part polygons', async () => {
    const coco = {
      images: [{ id: 0, file_name: 'a.jpg', width: 40, height: 20 }],
      categories: [{ id: 0, name: 'shape' }],
      annotations: [
        // pycocotools encodes a 2×2 block at rows 1-2, columns 1-2 of a 20×40 image as "e02<0k?0" style strings;
        // here: 21 background, 2 fg, 18 bg, 2 fg, rest bg.
        { id: 0, image_id: 0, category_id: 0, segmentation: { size: [20, 40], counts: compressCounts([21, 2, 18, 2, 757]) }, iscrowd: 1 },
        { id: 1, image_id: 0, category_id: 0, segmentation: [[0, 0, 5, 0, 5, 5], [10, 10, 15, 10, 12, 18]], bbox: [0, 0, 15, 18] },
      ],
    };
    const root = await folder({ 'annotations.json': JSON.stringify(coco), 'images/a.jpg': jpeg });
    assert.equal(await detectFormat(root), 'coco');
    const [item] = await collect(await readDataset(root));
    assert.equal(item.split, null);
    const mask = item.annotations[0];
    assert.equal(mask.type, 'mask');
    if (mask.type === 'mask') {
      const bitmap = decodeRle(mask.geometry.rle);
      assert.equal(bitmap.data[1 * 40 + 1], 1);
      assert.equal(bitmap.data[2 * 40 + 2], 1);
      assert.equal(rleArea(mask.geometry.rle), 4);
    }
    // The two polygons of one segmentation are one object in two parts (issue 25).
    assert.equal(item.annotations.length, 2);
    const object = item.annotations[1];
    assert.ok(object.type === 'polygon' && object.geometry.parts?.length === 2);
  });

  it('COCO errors: unknown image, unknown category, missing file, bad JSON', async () => {
    const doc = (annotations: unknown[], images = [{ id: 1, file_name: 'a.jpg', width: 40, height: 20 }]) =>
      JSON.stringify({ images, annotations, categories: [{ id: 1, name: 'x' }] });
    // What cannot be kept is skipped through the ledger, each with its reason (issue 25).
    const skippedBy = async (files: Record<string, string | Buffer>) => {
      const source = await readDataset(await folder(files));
      await collect(source);
      return source.ledger!.skippedList.map((e) => `${e.item}: ${e.reason}`);
    };
    assert.deepEqual(await skippedBy({ 'c.json': doc([{ id: 7, image_id: 9, category_id: 1, bbox: [0, 0, 1, 1] }]), 'a.jpg': jpeg }), ['annotation 7: it refers to image 9, which is not listed']);
    assert.deepEqual(await skippedBy({ 'c.json': doc([{ id: 7, image_id: 1, category_id: 4, bbox: [0, 0, 1, 1] }]), 'a.jpg': jpeg }), ['annotation 7: it uses category 4, which is not listed']);
    // An attribute value that is not true/false, a number or a text is said, not dropped (the plain ones are kept).
    assert.deepEqual(await skippedBy({ 'c.json': doc([{ id: 7, image_id: 1, category_id: 1, bbox: [0, 0, 1, 1], attributes: { colour: 'red', parts: [1, 2], meta: { a: 1 }, gone: null } }]), 'a.jpg': jpeg }), [
      'attribute "parts" of annotation 7: the value is not true/false, a number or a text',
      'attribute "meta" of annotation 7: the value is not true/false, a number or a text',
      'attribute "gone" of annotation 7: the value is not true/false, a number or a text',
    ]);
    assert.deepEqual(await skippedBy({ 'c.json': doc([{ id: 7, image_id: 1, category_id: 1, bbox: [0, 0, 1, 1] }]) }), [
      'image 1 "a.jpg": its file is not in the dataset',
      'annotation (bbox, class "x") of image 1: its image is not in the dataset',
    ]);
    await expectFormatError(await folder({ 'c.json': doc([], [{ id: 1, file_name: '../../etc/passwd', width: 1, height: 1 }]) }), /leaves the dataset folder/);
    await expectFormatError(await folder({ 'c.json': '{"images": [' }), /not valid JSON/);
  });

  it('Pascal VOC in the original layout with ImageSets splits', async () => {
    const xml = (name: string) =>
      `<annotation><filename>${name}.jpg</filename><size><width>40</width><height>20</height></size>` +
      `<object><name>cat &amp; dog</name><bndbox><xmin>2</xmin><ymin>3</ymin><xmax>12</xmax><ymax>13</ymax></bndbox></object></annotation>`;
    const root = await folder({
      'Annotations/a.xml': xml('a'),
      'Annotations/b.xml': xml('b'),
      'JPEGImages/a.jpg': jpeg,
      'JPEGImages/b.jpg': jpeg,
      'ImageSets/Main/train.txt': 'a\n',
      'ImageSets/Main/val.txt': 'b\n',
    });
    assert.equal(await detectFormat(root), 'voc');
    const source = await readDataset(root);
    assert.deepEqual(source.classes, ['cat & dog']);
    const items = await collect(source);
    assert.deepEqual(items.map((i) => [i.fileName, i.split]), [['a.jpg', 'train'], ['b.jpg', 'valid']]);
    assert.deepEqual(items[0].annotations[0].geometry, { x: 2, y: 3, width: 10, height: 10 });
    await expectFormatError(await folder({ 'a.xml': '<annotation><object><name>x</name></object></annotation>', 'a.jpg': jpeg }), /needs a <bndbox>/);
  });

  it('PNG masks: a pixel value missing from _classes.csv is an error', async () => {
    const mask = await sharp(Buffer.alloc(40 * 20, 3), { raw: { width: 40, height: 20, channels: 1 } }).png().toBuffer();
    await expectFormatError(await folder({ 'train/_classes.csv': 'Pixel Value, Class\n0, background\n1, a\n', 'train/x.jpg': jpeg, 'train/x_mask.png': mask }), /pixel value 3/);
  });

  it('an unrecognised folder is a clear error', async () => {
    await assert.rejects(readDataset(await folder({ 'notes.txt': 'hello' })), /unrecognised dataset layout/);
  });
});

/** pycocotools' string encoding of run lengths, to feed the reader a compressed RLE. */
function compressCounts(counts: number[]): string {
  let out = '';
  for (let i = 0; i < counts.length; i++) {
    let x = counts[i];
    if (i > 2) x -= counts[i - 2];
    let more = true;
    while (more) {
      let c = x & 0x1f;
      x >>= 5;
      more = c & 0x10 ? x !== -1 : x !== 0;
      if (more) c |= 0x20;
      out += String.fromCharCode(c + 48);
    }
  }
  return out;
}
