import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encode as encodeRlePack } from '@thi.ng/rle-pack';
import sharp from 'sharp';
import { decodeRle, rleArea } from '../../src/imaging/rle.js';
import type { DatasetItem, DatasetSource, FormatName } from '../../src/formats/dataset.js';
import { FormatError } from '../../src/formats/format-error.js';
import { detectFormat, readDataset } from '../../src/formats/readers/index.js';

/** Real exports of other tools (test/fixtures/interop/<name>/SOURCE.md) and real samples of the shared datasets. */
const INTEROP = new URL('../fixtures/interop/', import.meta.url).pathname;
const SHARED = new URL('../fixtures/', import.meta.url).pathname;

async function collect(source: DatasetSource): Promise<DatasetItem[]> {
  const items: DatasetItem[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

const summary = (items: DatasetItem[]) => items.map((i) => [i.split, i.fileName, i.annotations.map((a) => `${a.type}:${a.className}`)]);

describe('readers for other tools’ exports (real files)', () => {
  it('official COCO layout: instances_<split>.json beside images/<split>/; keypoints, captions, panoptic files left out', async () => {
    const source = await readDataset(join(INTEROP, 'coco-official'));
    assert.equal(source.format, 'coco');
    assert.deepEqual(source.classes, ['a', 'b', 'c']);
    const items = await collect(source);
    assert.deepEqual(summary(items), [
      ['train', 'a.jpg', ['bbox:b']],
      ['valid', 'b.jpg', ['bbox:a', 'mask:b']],
    ]);
    assert.deepEqual(items[0].annotations[0].geometry, { x: 2, y: 2, width: 3, height: 1 });
  });

  it('official COCO layout with <split>2017/ image folders (instances_val2017.json → valid)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-coco2017-'));
    try {
      await mkdir(join(root, 'annotations'));
      for (const [from, to] of [['train', 'train2017'], ['val', 'val2017']]) {
        await cp(join(INTEROP, `coco-official/images/${from}`), join(root, to), { recursive: true });
        await cp(join(INTEROP, `coco-official/annotations/instances_${from}.json`), join(root, `annotations/instances_${to}.json`));
        await cp(join(INTEROP, `coco-official/annotations/captions_${from}.json`), join(root, `annotations/captions_${to}.json`));
      }
      const items = await collect(await readDataset(root));
      assert.deepEqual(summary(items), [['train', 'a.jpg', ['bbox:b']], ['valid', 'b.jpg', ['bbox:a', 'mask:b']]]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('official COCO layout with only captions / panoptic files is refused with a message saying why', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-coco-'));
    try {
      await cp(join(INTEROP, 'coco-official/images'), join(root, 'images'), { recursive: true });
      await mkdir(join(root, 'annotations'));
      for (const f of ['captions_train.json', 'panoptic_val.json']) await cp(join(INTEROP, 'coco-official/annotations', f), join(root, 'annotations', f));
      await assert.rejects(
        async () => collect(await readDataset(root)),
        (e: unknown) => e instanceof FormatError && /none with object annotations: captions, panoptic/.test(e.message) && /captions_train\.json/.test(e.message),
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('CVAT for images 1.1 (project export): boxes, polygons, polylines, points, attributes, subsets as splits, z_order as drawing order', async () => {
    const source = await readDataset(join(INTEROP, 'cvat-images-1.1'));
    assert.equal(source.format, 'cvat');
    assert.equal(source.projectType, 'instance_segmentation');
    assert.deepEqual(source.classes, ['label1', 'label2']);
    const items = await collect(source);
    assert.deepEqual(summary(items).map(([split, name, a]) => [split, name, a]), [
      ['test', 'img0.jpg', ['polyline:label2', 'bbox:label1']],
      ['test', 'img1.jpg', ['polygon:label1', 'points:label2']],
      ['train', 'img0.jpg', ['polyline:label2', 'bbox:label1']],
      ['train', 'img1.jpg', ['polygon:label1', 'points:label2']],
      ['valid', 'img0.jpg', ['polyline:label2', 'bbox:label1']],
      ['valid', 'img1.jpg', ['polygon:label1', 'points:label2']],
    ]);
    // Drawing order (z_order): the polyline (0) under the box (1).
    assert.deepEqual(items[0].annotations[1].geometry, { x: 0, y: 2, width: 4, height: 2 });
    assert.deepEqual(items[0].annotations[1].attributes, { a1: true, a2: 'v3', a3: '0003', a4: 2.4, occluded: true });
    assert.deepEqual(items[1].annotations[0].geometry, { points: [[1, 2], [3, 4], [6, 5]] });
  });

  it('CVAT for video 1.1 (tracks) reads as cvat_video: its frames and tracks (issue 26)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-cvat-video-'));
    try {
      await writeFile(join(root, 'annotations.xml'), '<?xml version="1.0"?>\n<annotations><version>1.1</version><track id="0" label="car"><box frame="0" xtl="1" ytl="1" xbr="5" ybr="5" outside="0" occluded="0" keyframe="1"/></track></annotations>');
      await mkdir(join(root, 'images'));
      await sharp({ create: { width: 8, height: 4, channels: 3, background: '#000' } }).png().toFile(join(root, 'images/frame_000000.png'));
      const source = await readDataset(root);
      assert.equal(source.format, 'cvat_video');
      assert.deepEqual(source.tracks?.map((t) => [t.className, t.keyframes.map((k) => [k.frame, k.type, k.outside])]), [['car', [[0, 'bbox', false]]]]);
      const items = [];
      for await (const item of source.items()) items.push(item);
      assert.deepEqual(items.map((i) => i.video), [{ name: 'video', frame: 0 }]);
      await assert.rejects(readDataset(root, 'cvat'), /CVAT for video 1\.1 \(tracks\): import it with format=cvat_video/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('CVAT for video 1.1: a track\'s group_id is said in the ledger (tracks have no group), a tag\'s is kept (issue 25)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-cvat-video-'));
    try {
      await writeFile(join(root, 'annotations.xml'), '<?xml version="1.0"?>\n<annotations><version>1.1</version>'
        + '<track id="0" label="car" group_id="3"><box frame="0" xtl="1" ytl="1" xbr="5" ybr="5" outside="0" occluded="0" keyframe="1"/></track>'
        + '<track id="1" label="car"><box frame="0" xtl="2" ytl="1" xbr="5" ybr="5" outside="0" occluded="0" keyframe="1"/></track>'
        + '<tag frame="0" label="day" group_id="3"></tag></annotations>');
      await mkdir(join(root, 'images'));
      await sharp({ create: { width: 8, height: 4, channels: 3, background: '#000' } }).png().toFile(join(root, 'images/frame_000000.png'));
      const source = await readDataset(root, 'cvat_video');
      assert.equal(source.tracks?.length, 2);
      const items = [];
      for await (const item of source.items()) items.push(item);
      assert.deepEqual(items[0].annotations.map((a) => [a.type, a.className, a.groupId]), [['classification', 'day', 3]]);
      assert.deepEqual(source.ledger?.skippedList.map((e) => `${e.item}: ${e.reason}`), [
        'group_id 3 of track 0 (label "car"): Versa keeps no groups between tracks: the track is kept on its own',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('CVAT YOLO 1.1 (obj.data, obj.names, obj_train_data/) is YOLO detection, not classification by folder', async () => {
    const root = join(INTEROP, 'cvat-yolo-1.1');
    assert.equal(await detectFormat(root), 'yolo');
    const source = await readDataset(root);
    assert.equal(source.projectType, 'object_detection');
    assert.equal(source.classes.length, 10);
    const [item] = await collect(source);
    assert.equal(item.split, 'train');
    assert.deepEqual(item.annotations.map((a) => a.className), ['label_2', 'label_4']);
  });

  it('Pascal VOC release: boxes from Annotations/ with ImageSets splits; format=voc_masks reads SegmentationClass/', async () => {
    const root = join(INTEROP, 'voc-release');
    const boxes = await readDataset(root);
    assert.equal(boxes.format, 'voc');
    const [item] = await collect(boxes);
    // The person's <part> (head) is a box of its own in the person's group (issue 25: it used to be dropped unsaid).
    assert.deepEqual([item.split, item.annotations.map((a) => `${a.className}`)], ['train', ['cat', 'person', 'head']]);
    assert.ok(item.annotations[1].groupId !== undefined && item.annotations[2].groupId === item.annotations[1].groupId);
    assert.deepEqual(item.annotations[1].attributes, { other: true, phoning: true, reading: true, ridinghorse: true, takingphoto: true, walking: true }, 'the actions set to 1');
    const masks = await readDataset(root, 'voc_masks');
    assert.equal(masks.projectType, 'semantic_segmentation');
    assert.equal(masks.classes.length, 20, 'the VOC palette classes');
    const items = await collect(masks);
    assert.deepEqual(summary(items), [['train', '2007_000001.jpg', ['mask:bicycle']], ['test', '2007_000002.jpg', []]]);
    const mask = items[0].annotations[0];
    assert.ok(mask.type === 'mask' && rleArea(mask.geometry.rle) > 0);
  });

  it('LabelMe 3.0 XML: polygons, bounding_box polygons as boxes, segm masks', async () => {
    const source = await readDataset(join(INTEROP, 'labelme-3.0'));
    assert.equal(source.format, 'labelme');
    const [item] = await collect(source);
    assert.deepEqual(item.annotations.map((a) => `${a.type}:${a.className}`), [
      'polygon:window', 'mask:license plate', 'polygon:o1', 'polygon:q1', 'bbox:b1', 'mask:m1', 'polygon:hg',
    ]);
    assert.deepEqual(item.annotations[4].geometry, { x: 13, y: 19, width: 10, height: 11 });
  });

  it('Datumaro JSON: subsets as splits, image-level labels', async () => {
    const source = await readDataset(join(INTEROP, 'datumaro'));
    assert.equal(source.format, 'datumaro');
    assert.equal(source.projectType, 'classification');
    assert.deepEqual(source.classes, ['car', 'bicycle', 'tom', 'mary']);
    assert.deepEqual(summary(await collect(source)), [
      ['test', 'c.jpg', ['classification:bicycle', 'classification:mary']],
      ['train', 'a.jpg', ['classification:car']],
      ['train', 'b.jpg', ['classification:car', 'classification:bicycle', 'classification:tom', 'classification:mary']],
      ['valid', 'd.jpg', []],
    ]);
  });

  it('Roboflow multi-label classification CSV (_classes.csv one-hot)', async () => {
    const source = await readDataset(join(INTEROP, 'roboflow-multilabel-csv'));
    assert.equal(source.format, 'multilabel_csv');
    assert.equal(source.projectType, 'classification');
    assert.deepEqual(summary(await collect(source)), [
      ['train', 'train_001.jpg', ['classification:label_0']],
      ['train', 'train_002.jpg', ['classification:label_1']],
      ['valid', 'val_001.jpg', ['classification:label_0', 'classification:label_1']],
    ]);
  });

  it('Roboflow CreateML JSON: x, y are the box centre', async () => {
    const source = await readDataset(join(INTEROP, 'roboflow-createml'));
    assert.equal(source.format, 'createml');
    const items = await collect(source);
    assert.deepEqual(items[0].annotations[0], { type: 'bbox', className: 'label_0', geometry: { x: 0.5, y: 0.5, width: 3, height: 1 } });
    assert.equal(items[2].split, 'valid');
  });

  it('Label Studio JSON: rectangles and polygons in percent of the image, the first annotation of a task', async () => {
    const rects = await readDataset(join(INTEROP, 'labelstudio-rectangles'));
    assert.equal(rects.format, 'labelstudio');
    assert.deepEqual(rects.classes, ['parasites', 'white']);
    const [first] = await collect(rects);
    assert.equal(first.annotations.length, 2);
    const box = first.annotations[0].geometry as { x: number; y: number; width: number; height: number };
    assert.ok(Math.abs(box.x - 0.3715846994535519 * 2800) < 1e-6 && Math.abs(box.width - 0.04189435336976321 * 2800) < 1e-6);
    const polygons = await readDataset(join(INTEROP, 'labelstudio-polygons'));
    assert.equal(polygons.projectType, 'instance_segmentation');
    const [item] = await collect(polygons);
    const polygon = item.annotations[0];
    assert.equal(polygon.type, 'polygon');
    if (polygon.type === 'polygon') assert.deepEqual(polygon.geometry.points[0], [0.6 * 640, 0.1955922865013774 * 426]);
  });

  it('Label Studio brush RLE (the RGBA layer packed with @thi.ng/rle-pack, as the Label Studio editor does) becomes a mask', async () => {
    const root = await mkdtemp(join(tmpdir(), 'versa-ls-'));
    try {
      const rgba = new Uint8Array(8 * 4 * 4);
      for (const p of [9, 10, 17, 18]) rgba[p * 4 + 3] = 255; // a 2×2 block at x 1-2, y 1-2 of an 8×4 image
      const task = {
        id: 1,
        data: { image: '/data/upload/1/0a1b2c3d-scene.png' },
        annotations: [{ result: [{ type: 'brushlabels', original_width: 8, original_height: 4, value: { format: 'rle', rle: [...encodeRlePack(rgba, rgba.length)], brushlabels: ['blob'] } }] }],
      };
      await writeFile(join(root, 'export.json'), JSON.stringify([task]));
      await mkdir(join(root, 'images'));
      await sharp({ create: { width: 8, height: 4, channels: 3, background: '#000' } }).png().toFile(join(root, 'images/scene.png'));
      const [item] = await collect(await readDataset(root));
      const mask = item.annotations[0];
      assert.equal(mask.type, 'mask');
      if (mask.type === 'mask') {
        const bitmap = decodeRle(mask.geometry.rle);
        assert.deepEqual([...bitmap.data].flatMap((v, i) => (v ? [i] : [])), [9, 10, 17, 18]);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('layout detection never guesses', () => {
  let work: string;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-layout-'))));
  after(() => rm(work, { recursive: true, force: true }));
  let count = 0;
  const fresh = async () => {
    const dir = join(work, `case-${++count}`);
    await mkdir(dir, { recursive: true });
    return dir;
  };

  /** The indian-vehicles sample rearranged into Ultralytics' images/<split>/ + labels/<split>/ layout. */
  async function ultralytics(root: string) {
    const from = join(SHARED, 'indian-vehicles-yolo');
    for (const [src, dst] of [['train', 'train'], ['valid', 'val']]) {
      await cp(join(from, src, 'images'), join(root, 'images', dst), { recursive: true });
      await cp(join(from, src, 'labels'), join(root, 'labels', dst), { recursive: true });
    }
  }

  it('Ultralytics images/<split> + labels/<split> without data.yaml: names from classes.txt, else the indices', async () => {
    const root = await fresh();
    await ultralytics(root);
    const unnamed = await readDataset(root);
    assert.equal(unnamed.format, 'yolo');
    assert.deepEqual(unnamed.classes, ['0', '1', '2', '3', '4', '5', '6']);
    await writeFile(join(root, 'classes.txt'), 'Bicycle\nBus\nCar\nLCV\nThree-wheeler\nTruck\nTwo-wheelers\n');
    const named = await readDataset(root);
    assert.equal(named.classes[6], 'Two-wheelers');
    const items = await collect(named);
    assert.deepEqual([...new Set(items.map((i) => i.split))], ['train', 'valid']);
    assert.equal(items.flatMap((i) => i.annotations).length, 13);
  });

  it('a data.yaml in another folder with names as a map is found', async () => {
    const root = await fresh();
    await ultralytics(root);
    await mkdir(join(root, 'config'));
    await writeFile(join(root, 'config/data.yaml'), 'path: ..\ntrain: images/train\nval: images/val\nnames:\n  0: Bicycle\n  1: Bus\n  2: Car\n  3: LCV\n  4: Three-wheeler\n  5: Truck\n  6: Two-wheelers\n');
    const source = await readDataset(root);
    assert.equal(source.format, 'yolo');
    assert.equal(source.classes[2], 'Car');
  });

  it('two layouts in one folder: 422-style error naming the files and the format values; format picks one', async () => {
    const root = await fresh();
    await ultralytics(root);
    await writeFile(join(root, 'data.yaml'), 'train: images/train\nval: images/val\nnames: [a, b, c, d, e, f, g]\n');
    await cp(join(INTEROP, 'roboflow-multilabel-csv/train/_classes.csv'), join(root, '_classes.csv'));
    await assert.rejects(readDataset(root), (e: unknown) =>
      e instanceof FormatError && /ambiguous dataset layout/.test(e.message) && /data\.yaml \(format=yolo\)/.test(e.message) && /_classes\.csv \(format=multilabel_csv\)/.test(e.message));
    assert.equal((await readDataset(root, 'yolo')).format, 'yolo');
  });

  it('class folders are classification only when no annotation file is present', async () => {
    const root = await fresh();
    await cp(join(SHARED, 'fresh-rotten-cls/train'), join(root, 'train'), { recursive: true });
    assert.equal(await detectFormat(root), 'folders');
    await writeFile(join(root, 'train/notes.json'), '{"author": "me"}');
    await assert.rejects(readDataset(root), (e: unknown) =>
      e instanceof FormatError && /unrecognised dataset layout: found train\/notes\.json/.test(e.message) && /format=folders/.test(e.message));
    assert.equal((await readDataset(root, 'folders')).projectType, 'classification');
  });

  it('CVAT Segmentation mask 1.1: colours from labelmap.txt, one mask per class; an unknown colour is an error', async () => {
    const root = await fresh();
    await mkdir(join(root, 'SegmentationClass'), { recursive: true });
    await mkdir(join(root, 'JPEGImages'));
    await mkdir(join(root, 'ImageSets/Segmentation'), { recursive: true });
    await writeFile(join(root, 'labelmap.txt'), '# label:color_rgb:parts:actions\nbackground:0,0,0::\ncat:250,50,83::\ndog:36,179,83::\n');
    await writeFile(join(root, 'ImageSets/Segmentation/default.txt'), 'a\n');
    await sharp({ create: { width: 8, height: 4, channels: 3, background: '#808080' } }).jpeg().toFile(join(root, 'JPEGImages/a.jpg'));
    const pixels = Buffer.alloc(8 * 4 * 3);
    const paint = (i: number, rgb: number[]) => pixels.set(rgb, i * 3);
    [0, 1, 8, 9].forEach((i) => paint(i, [250, 50, 83]));
    [30, 31].forEach((i) => paint(i, [36, 179, 83]));
    await sharp(pixels, { raw: { width: 8, height: 4, channels: 3 } }).png().toFile(join(root, 'SegmentationClass/a.png'));
    const source = await readDataset(root);
    assert.equal(source.format, 'voc_masks');
    assert.deepEqual(source.classes, ['cat', 'dog']);
    const [item] = await collect(source);
    assert.deepEqual(item.annotations.map((a) => [a.className, a.type === 'mask' ? rleArea(a.geometry.rle) : 0]), [['cat', 4], ['dog', 2]]);
    paint(5, [1, 2, 3]);
    await sharp(pixels, { raw: { width: 8, height: 4, channels: 3 } }).png().toFile(join(root, 'SegmentationClass/a.png'));
    await assert.rejects(async () => collect(await readDataset(root)), /colour 1,2,3 is not in the label map/);
  });

  it('plain images: no annotations, splits from folder names; format=images forces it', async () => {
    const root = await fresh();
    await cp(join(SHARED, 'indian-vehicles-yolo/valid/images'), join(root, 'valid'), { recursive: true });
    const source = await readDataset(root);
    assert.equal(source.format, 'images');
    const items = await collect(source);
    assert.equal(items.length, 2);
    assert.ok(items.every((i) => i.split === 'valid' && i.annotations.length === 0));
    const forced: FormatName = 'images';
    assert.equal((await collect(await readDataset(join(SHARED, 'indian-vehicles-yolo'), forced))).length, 7);
  });
});
