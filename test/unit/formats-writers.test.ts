import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import sharp from 'sharp';
import yauzl from 'yauzl';
import { parse as parseYaml } from 'yaml';
import { decodeRle, encodeRle, rleArea } from '../../src/imaging/rle.js';
import type { DatasetItem, DatasetSource, DatasetToWrite } from '../../src/formats/dataset.js';
import { FormatError } from '../../src/formats/format-error.js';
import { readDataset, readDatasetZip } from '../../src/formats/readers/index.js';
import { WRITERS, writeExportFile, type ExportFormat } from '../../src/formats/writers/index.js';
import { geometryBox } from '../../src/imaging/geometry.js';

/** Real samples copied from the shared datasets (test/fixtures/<name>/SOURCE.md). */
const DATASETS = new URL('../fixtures/', import.meta.url).pathname;

async function collect(items: AsyncIterable<DatasetItem>): Promise<DatasetItem[]> {
  const out: DatasetItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('dataset writers', () => {
  let work: string;
  let count = 0;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-writers-'))));
  after(() => rm(work, { recursive: true, force: true }));

  async function write(format: ExportFormat, dataset: DatasetToWrite): Promise<string> {
    const writer = WRITERS[format];
    const path = join(work, `out-${++count}.${writer.extension}`);
    await writer.write(dataset, createWriteStream(path));
    return path;
  }

  /** Reads, writes in `format`, reads the archive back and checks images, classes, splits and boxes (±0.5 px). */
  async function roundTrip(
    source: DatasetSource,
    format: ExportFormat,
    keep: (item: DatasetItem) => boolean = () => true,
    options: { classes?: 'exact' | 'used'; exactGeometry?: boolean } = {},
  ) {
    const before = (await collect(source.items())).filter(keep);
    const zip = await write(format, { classes: source.classes, projectType: source.projectType, items: before });
    const back = await readDatasetZip(zip);
    try {
      if (options.classes === 'used') {
        const used = [...new Set(before.flatMap((i) => i.annotations.map((a) => a.className)))].sort();
        assert.deepEqual([...back.classes].sort(), used);
      } else {
        assert.deepEqual(back.classes, source.classes);
      }
      const after = await collect(back.items());
      const key = (i: DatasetItem) => `${i.split}/${i.fileName}`;
      assert.deepEqual(after.map(key).sort(), before.map(key).sort());
      const byKey = new Map(after.map((i) => [key(i), i]));
      for (const original of before) {
        const copy = byKey.get(key(original))!;
        assert.equal(copy.annotations.length, original.annotations.length, key(original));
        // Greedy matching: every original annotation has a copy of the same class whose box is within 0.5 px.
        const unmatched = copy.annotations.map((a) => ({ className: a.className, box: geometryBox(a.type, a.geometry) }));
        for (const annotation of original.annotations) {
          const box = geometryBox(annotation.type, annotation.geometry);
          const index = unmatched.findIndex(
            (c) =>
              c.className === annotation.className &&
              (box === null ? c.box === null : c.box !== null && (['x', 'y', 'width', 'height'] as const).every((f) => Math.abs(c.box![f] - box[f]) <= 0.5)),
          );
          assert.ok(index >= 0, `${key(original)}: no copy of ${annotation.className} ${JSON.stringify(box)}`);
          unmatched.splice(index, 1);
        }
        if (options.exactGeometry) assertSameGeometry(original, copy, key(original));
      }
      return { before, after, format: back.format };
    } finally {
      await back.cleanup();
    }
  }

  it('YOLO detection round trip (indian-vehicles-yolo), empty label files kept', async () => {
    const { after, format } = await roundTrip(await readDataset(join(DATASETS, 'indian-vehicles-yolo')), 'yolo');
    assert.equal(format, 'yolo');
    assert.equal(after.filter((i) => i.annotations.length === 0).length, 4);
  });

  it('Pascal VOC round trip (indian-vehicles-yolo → voc)', async () => {
    const { format } = await roundTrip(await readDataset(join(DATASETS, 'indian-vehicles-yolo')), 'voc');
    assert.equal(format, 'voc');
  });

  it('YOLO segmentation round trip keeps polygons and the mixed-in boxes (toy-cars-yolo-seg)', async () => {
    const { after } = await roundTrip(await readDataset(join(DATASETS, 'toy-cars-yolo-seg')), 'yolo');
    const annotations = after.flatMap((i) => i.annotations);
    assert.equal(annotations.filter((a) => a.type === 'polygon').length, 55);
    assert.equal(annotations.filter((a) => a.type === 'bbox').length, 3);
  });

  it('COCO round trip through the Roboflow zip layout (plants-coco-seg, car-damage-coco-seg)', async () => {
    const plants = await roundTrip(await readDataset(join(DATASETS, 'plants-coco-seg')), 'coco_zip');
    assert.equal(plants.format, 'coco');
    assert.equal(plants.after.filter((i) => i.annotations.length === 0).length, 3);
    const cars = await roundTrip(await readDataset(join(DATASETS, 'car-damage-coco-seg')), 'coco_zip', (i) => i.split !== 'train');
    const polygons = (items: DatasetItem[]) => items.flatMap((i) => i.annotations).filter((a) => a.type === 'polygon').length;
    assert.ok(polygons(cars.before) > 0);
    assert.equal(polygons(cars.after), polygons(cars.before));
  });

  it('COCO → YOLO round trip (car-damage-coco-seg valid split)', async () => {
    await roundTrip(await readDataset(join(DATASETS, 'car-damage-coco-seg')), 'yolo', (i) => i.split === 'valid');
  });

  it('class-per-folder round trip (fresh-rotten-cls)', async () => {
    const { after, format } = await roundTrip(await readDataset(join(DATASETS, 'fresh-rotten-cls')), 'folders');
    assert.equal(format, 'folders');
    assert.equal(after.length, 18);
  });

  it('PNG mask round trip keeps every class pixel (plants-semantic-masks, valid and test)', async () => {
    const { before, after } = await roundTrip(await readDataset(join(DATASETS, 'plants-semantic-masks')), 'masks', (i) => i.split !== 'train');
    const area = (items: DatasetItem[]) => items.flatMap((i) => i.annotations).reduce((sum, a) => sum + (a.type === 'mask' ? rleArea(a.geometry.rle) : 0), 0);
    assert.ok(area(before) > 0);
    assert.equal(area(after), area(before));
  });

  for (const format of ['cvat', 'datumaro', 'labelme'] as const) {
    const classes = format === 'labelme' ? 'used' : 'exact';
    it(`${format} round trip keeps boxes, polygons, masks and image-level labels exactly (toy-cars, plants masks, fresh-rotten)`, async () => {
      await roundTrip(await readDataset(join(DATASETS, 'toy-cars-yolo-seg')), format, undefined, { classes, exactGeometry: true });
      const masks = await roundTrip(await readDataset(join(DATASETS, 'plants-semantic-masks')), format, undefined, { classes, exactGeometry: true });
      assert.ok(masks.after.some((i) => i.annotations.some((a) => a.type === 'mask')));
      const labels = await roundTrip(await readDataset(join(DATASETS, 'fresh-rotten-cls')), format, undefined, { classes, exactGeometry: true });
      assert.equal(labels.format, format);
      assert.equal(labels.after.length, 18);
    });
  }

  it('Ultralytics-ready YOLO: images/<split> + labels/<split>, a data.yaml without path and with names as a map', async () => {
    const detection = await roundTrip(await readDataset(join(DATASETS, 'indian-vehicles-yolo')), 'yolo_ultralytics');
    assert.equal(detection.format, 'yolo');
    await roundTrip(await readDataset(join(DATASETS, 'toy-cars-yolo-seg')), 'yolo_ultralytics', undefined, { exactGeometry: true });
    const zip = await write('yolo_ultralytics', { classes: ['cat', 'dog'], items: [{ split: 'train', fileName: 'a.jpg', source: (await jpegSource()), width: 100, height: 50, annotations: [] }] });
    const archive = await yauzl.openPromise(zip, { lazyEntries: true });
    const names: string[] = [];
    let yaml = '';
    for await (const entry of archive.eachEntry()) {
      names.push(entry.fileName);
      if (entry.fileName === 'data.yaml') for await (const chunk of await archive.openReadStreamPromise(entry)) yaml += chunk;
    }
    archive.close();
    assert.deepEqual(names.sort(), ['data.yaml', 'images/train/a.jpg', 'labels/train/a.txt']);
    const config = parseYaml(yaml);
    assert.deepEqual(config, { train: 'images/train', val: 'images/train', names: { 0: 'cat', 1: 'dog' } });
    assert.match(yaml, /val points at the training images/);
  });

  it('CreateML round trip (indian-vehicles-yolo): boxes by their centre', async () => {
    const { format } = await roundTrip(await readDataset(join(DATASETS, 'indian-vehicles-yolo')), 'createml', undefined, { classes: 'used' });
    assert.equal(format, 'createml');
  });

  const jpegSource = async () => {
    const jpeg = await sharp({ create: { width: 100, height: 50, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    return { path: await writeTemp(work, 'img.jpg', jpeg) };
  };

  it('COCO JSON: boxes, polygons, masks with area, bbox, segmentation and iscrowd; parsed back', async () => {
    const source = await jpegSource();
    const bitmap = new Uint8Array(100 * 50);
    for (let y = 10; y < 20; y++) for (let x = 30; x < 35; x++) bitmap[y * 100 + x] = 1;
    const items: DatasetItem[] = [
      {
        split: 'train',
        fileName: 'a "quoted".jpg',
        source,
        width: 100,
        height: 50,
        annotations: [
          { type: 'bbox', className: 'cat', geometry: { x: 1.234, y: 2, width: 10, height: 5 } },
          { type: 'polygon', className: 'dog', geometry: { points: [[0, 0], [10, 0], [10, 10]] } },
          { type: 'mask', className: 'cat', geometry: { rle: encodeRle({ width: 100, height: 50, data: bitmap }) } },
          { type: 'classification', className: 'cat', geometry: {} },
          { type: 'mask', className: 'dog', geometry: { rle: encodeRle({ width: 100, height: 50, data: bitmap }), crowd: true } as never },
        ],
      },
      { split: null, fileName: 'b.jpg', source, width: 100, height: 50, annotations: [] },
    ];
    const path = await write('coco', { classes: ['cat', 'dog'], items });
    const doc = JSON.parse(await readFile(path, 'utf8'));
    assert.deepEqual(doc.categories, [
      { id: 1, name: 'cat', supercategory: 'none' },
      { id: 2, name: 'dog', supercategory: 'none' },
    ]);
    assert.deepEqual(doc.images, [
      { id: 1, file_name: 'a "quoted".jpg', width: 100, height: 50, split: 'train' },
      { id: 2, file_name: 'b.jpg', width: 100, height: 50 },
    ]);
    assert.equal(doc.annotations.length, 4, 'image-level labels have no COCO form');
    assert.deepEqual(doc.annotations[0], { id: 1, image_id: 1, category_id: 1, bbox: [1.23, 2, 10, 5], area: 50, segmentation: [], iscrowd: 0 });
    assert.deepEqual(doc.annotations[1], { id: 2, image_id: 1, category_id: 2, bbox: [0, 0, 10, 10], area: 50, segmentation: [[0, 0, 10, 0, 10, 10]], iscrowd: 0 });
    assert.deepEqual(doc.annotations[2].bbox, [30, 10, 5, 10]);
    assert.equal(doc.annotations[2].area, 50);
    assert.equal(doc.annotations[2].iscrowd, 0, 'a drawn mask is a normal instance, not a crowd region');
    assert.deepEqual(doc.annotations[2].segmentation.size, [50, 100]);
    assert.deepEqual(doc.annotations[2].segmentation.counts, encodeRle({ width: 100, height: 50, data: bitmap }).counts, 'uncompressed RLE');
    assert.equal(doc.annotations[3].iscrowd, 1, 'only a mask marked as a crowd region keeps iscrowd 1');
  });

  it('COCO JSON with many annotations is one valid document (batched writes)', async () => {
    const source = await jpegSource();
    const items = function* () {
      for (let i = 0; i < 3000; i++) {
        yield {
          split: 'train' as const,
          fileName: `${i}.jpg`,
          source,
          width: 100,
          height: 50,
          annotations: Array.from({ length: 5 }, (_, k) => ({ type: 'bbox' as const, className: 'cat', geometry: { x: k, y: k, width: 3, height: 4 } })),
        };
      }
    };
    const doc = JSON.parse(await readFile(await write('coco', { classes: ['cat'], items: items() }), 'utf8'));
    assert.equal(doc.images.length, 3000);
    assert.equal(doc.annotations.length, 15000);
    assert.equal(doc.annotations[14999].id, 15000);
    assert.equal(doc.annotations[14999].image_id, 3000);
  });

  it('CSV neutralises formula cells and writes one row per annotation', async () => {
    const source = await jpegSource();
    const classes = ['=HYPERLINK("http://evil")', '+cmd', '-2+3', '@SUM(A1)', '\tTab', 'plain'];
    const items: DatasetItem[] = [
      {
        split: 'train',
        fileName: '=evil.jpg',
        source,
        width: 100,
        height: 50,
        annotations: classes.map((className, k) => ({ type: 'bbox' as const, className, geometry: { x: k, y: 1, width: 2, height: 3 } })),
      },
      { split: null, fileName: 'empty.jpg', source, width: 100, height: 50, annotations: [] },
    ];
    const text = await readFile(await write('csv', { classes, items }), 'utf8');
    const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
    assert.equal(rows.length, 7);
    assert.deepEqual(rows.slice(0, 6).map((r) => r.class), [`'=HYPERLINK("http://evil")`, "'+cmd", "'-2+3", "'@SUM(A1)", "'\tTab", 'plain']);
    assert.equal(rows[0].image, "'=evil.jpg");
    assert.deepEqual([rows[1].x, rows[1].y, rows[1].width, rows[1].height], ['1', '1', '2', '3']);
    assert.deepEqual([rows[6].image, rows[6].class], ['empty.jpg', '']);
  });

  it('JSONL writes one image a line with API-shaped geometry', async () => {
    const source = await jpegSource();
    const items: DatasetItem[] = [
      { split: 'valid', fileName: 'a.jpg', source, width: 100, height: 50, annotations: [{ type: 'bbox', className: 'cat', geometry: { x: 1, y: 2, width: 3, height: 4 } }] },
      { split: null, fileName: 'b.jpg', source, annotations: [] },
    ];
    const lines = (await readFile(await write('jsonl', { classes: ['cat'], items }), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines, [
      { image: 'a.jpg', split: 'valid', width: 100, height: 50, annotations: [{ class: 'cat', type: 'bbox', geometry: { x: 1, y: 2, width: 3, height: 4 } }] },
      { image: 'b.jpg', split: null, width: null, height: null, annotations: [] },
    ]);
  });

  it('writers refuse an annotation whose class is not in the class list', async () => {
    const source = await jpegSource();
    const items: DatasetItem[] = [{ split: 'train', fileName: 'a.jpg', source, width: 100, height: 50, annotations: [{ type: 'bbox', className: 'ghost', geometry: { x: 1, y: 1, width: 2, height: 2 } }] }];
    for (const format of ['coco', 'yolo', 'masks'] as const) {
      await assert.rejects(write(format, { classes: ['cat'], items }), (error: unknown) => error instanceof FormatError && /"ghost" is not in the class list/.test(error.message));
    }
  });

  it('writeExportFile: a write failing midway leaves no partial file, in every format', async () => {
    const source = await jpegSource();
    const dir = await mkdtemp(join(work, 'partial-'));
    const item = (i: number): DatasetItem => ({
      split: 'train',
      fileName: `${i}.jpg`,
      source,
      width: 100,
      height: 50,
      annotations: [{ type: 'classification', className: 'cat', geometry: {} }, { type: 'bbox', className: 'cat', geometry: { x: 1, y: 1, width: 5, height: 5 } }],
    });
    async function* failing() {
      // The file exists from the start, and the zip formats have written 40 images into it before the failure.
      for (let i = 0; i < 40; i++) yield item(i);
      throw new Error('database connection lost');
    }
    for (const format of Object.keys(WRITERS) as ExportFormat[]) {
      const path = join(dir, `${format}.${WRITERS[format].extension}`);
      await assert.rejects(writeExportFile(format, { classes: ['cat'], projectType: 'object_detection', items: failing() }, path), /database connection lost/, format);
    }
    // Same for a failure inside the zip writer itself (an image that cannot be read).
    const missing: DatasetItem = { ...item(99), source: { path: join(dir, 'missing.jpg') } };
    await assert.rejects(writeExportFile('yolo', { classes: ['cat'], items: [item(1), missing] }, join(dir, 'yolo.zip')), { code: 'ENOENT' });
    assert.deepEqual(await readdir(dir), []);

    const done = await writeExportFile('yolo', { classes: ['cat'], items: [item(1)] }, join(dir, 'ok.zip'));
    // The classification has no YOLO line: counted as left out, not dropped silently (issue 25).
    assert.deepEqual(done, { imageCount: 1, annotationCount: 1, kept: { bbox: 1 }, skipped: { classification: 1 }, extras: { attributes: {}, groups: {}, tracks: {} }, bytes: (await stat(join(dir, 'ok.zip'))).size });
    // An existing file is never overwritten, nor removed by the failure.
    await assert.rejects(writeExportFile('yolo', { classes: ['cat'], items: [item(2)] }, join(dir, 'ok.zip')), { code: 'EEXIST' });
    assert.equal((await stat(join(dir, 'ok.zip'))).size, done.bytes);
  });

  it('zip writers store JPEG images uncompressed and name entries safely', async () => {
    const source = await jpegSource();
    const items: DatasetItem[] = [{ split: 'test', fileName: '../../x.jpg', source, width: 100, height: 50, annotations: [{ type: 'classification', className: '../up', geometry: {} }] }];
    const zip = await write('folders', { classes: ['../up'], items });
    const archive = await yauzl.openPromise(zip, { lazyEntries: true });
    const methods: [string, number][] = [];
    for await (const entry of archive.eachEntry()) methods.push([entry.fileName, entry.compressionMethod]);
    archive.close();
    assert.deepEqual(methods, [['test/.._up/.._.._x.jpg', 0]]);
    const back = await readDatasetZip(zip);
    try {
      const [item] = await collect(back.items());
      assert.equal(item.split, 'test');
      assert.equal(item.fileName, '.._.._x.jpg');
      assert.deepEqual(back.classes, ['.._up']);
    } finally {
      await back.cleanup();
    }
  });
});

/** Same annotation types per class, polygons point by point (±0.5 px), masks pixel for pixel. */
function assertSameGeometry(original: DatasetItem, copy: DatasetItem, where: string): void {
  const describe = (item: DatasetItem) => item.annotations.map((a) => `${a.type}:${a.className}`).sort();
  assert.deepEqual(describe(copy), describe(original), `${where}: annotation types`);
  for (const a of original.annotations) {
    if (a.type === 'polygon') {
      const found = copy.annotations.some(
        (b) => b.type === 'polygon' && b.className === a.className && b.geometry.points.length === a.geometry.points.length &&
          b.geometry.points.every(([x, y], k) => Math.abs(x - a.geometry.points[k][0]) <= 0.5 && Math.abs(y - a.geometry.points[k][1]) <= 0.5),
      );
      assert.ok(found, `${where}: polygon of ${a.className} with ${a.geometry.points.length} points`);
    }
    if (a.type === 'mask') {
      const pixels = decodeRle(a.geometry.rle).data.join('');
      assert.ok(copy.annotations.some((b) => b.type === 'mask' && b.className === a.className && decodeRle(b.geometry.rle).data.join('') === pixels), `${where}: mask of ${a.className}`);
    }
  }
}

async function writeTemp(dir: string, name: string, data: Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, data);
  return path;
}
