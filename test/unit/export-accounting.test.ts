import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import yauzl from 'yauzl';
import type { Annotation, ClassSpec, DatasetToWrite, ProjectType, WriteStats } from '../../src/formats/dataset.js';
import { readDatasetZip } from '../../src/formats/readers/index.js';
import { WRITERS, type ExportFormat } from '../../src/formats/writers/index.js';
import { encodeRle } from '../../src/imaging/rle.js';

const W = 200;
const H = 100;

function squareMask(x0: number, y0: number, size: number) {
  const data = new Uint8Array(W * H);
  for (let y = y0; y < y0 + size; y++) data.fill(1, y * W + x0, y * W + x0 + size);
  return encodeRle({ width: W, height: H, data });
}

const skeleton = { points: ['head', 'left_hand', 'right_hand'], edges: [[0, 1], [0, 2]] as [number, number][], flip_pairs: [[1, 2]] as [number, number][] };

/** One of every shape kind, and the awkward cases of each (a one-point set, an empty mask, keypoints with none labelled). */
const EVERY_SHAPE: Annotation[] = [
  { type: 'bbox', className: 'thing', geometry: { x: 5, y: 5, width: 20, height: 10 } },
  { type: 'bbox', className: 'thing', geometry: { x: 60, y: 30, width: 50, height: 20, rotation: 30 } },
  { type: 'polygon', className: 'thing', geometry: { points: [[10, 10], [40, 10], [40, 40]] } },
  { type: 'polygon', className: 'thing', geometry: { points: [[10, 10], [40, 10], [40, 40], [10, 40]] } },
  { type: 'polygon', className: 'thing', geometry: { points: [[10, 10], [40, 10], [40, 40]], parts: [[[10, 10], [40, 10], [40, 40]], [[150, 60], [190, 60], [170, 90]]] } },
  { type: 'polygon', className: 'thing', geometry: { points: [[0, 0], [60, 0], [60, 60], [0, 60]], holes: [[[20, 20], [40, 20], [40, 40], [20, 40]]] } },
  { type: 'mask', className: 'thing', geometry: { rle: squareMask(120, 10, 20) } },
  { type: 'mask', className: 'thing', geometry: { rle: encodeRle({ width: W, height: H, data: new Uint8Array(W * H) }) } },
  { type: 'keypoints', className: 'person', geometry: { points: [[100, 20, 2], [80, 50, 1], [0, 0, 0]], bbox: { x: 70, y: 10, width: 50, height: 70 } } },
  { type: 'keypoints', className: 'person', geometry: { points: [[0, 0, 0], [0, 0, 0], [0, 0, 0]] } },
  { type: 'polyline', className: 'thing', geometry: { points: [[1, 1], [50, 5], [90, 40]] } },
  { type: 'points', className: 'thing', geometry: { points: [[3, 3], [30, 30]] } },
  { type: 'points', className: 'thing', geometry: { points: [[7, 7]] } },
  { type: 'ellipse', className: 'thing', geometry: { cx: 150, cy: 30, rx: 20, ry: 10, rotation: 20 } },
  { type: 'ellipse', className: 'thing', geometry: { cx: 30, cy: 70, rx: 10, ry: 10, rotation: 0 } },
  { type: 'classification', className: 'thing', geometry: {} },
];

/**
 * Attribute values, groups and tracks (issue 25): two frames of a video, with 4 attribute values besides the track
 * keys, 2 groups (a box and a polygon; keypoints and their outline) and 2 tracks (7 on both frames, 8 on the second).
 */
const FRAME_1: Annotation[] = [
  { type: 'bbox', className: 'thing', groupId: 1, attributes: { occluded: true, color: 'red' }, geometry: { x: 5, y: 5, width: 20, height: 10 } },
  { type: 'polygon', className: 'thing', groupId: 1, attributes: { difficult: true }, geometry: { points: [[10, 10], [40, 10], [40, 40]] } },
  { type: 'keypoints', className: 'person', groupId: 2, geometry: { points: [[100, 20, 2], [80, 50, 1], [90, 60, 2]], bbox: { x: 70, y: 10, width: 50, height: 70 } } },
  { type: 'polygon', className: 'person', groupId: 2, geometry: { points: [[70, 10], [120, 10], [120, 80], [70, 80]] } },
  { type: 'bbox', className: 'thing', attributes: { track_id: 7, keyframe: true }, geometry: { x: 130, y: 50, width: 20, height: 20 } },
  { type: 'classification', className: 'thing', attributes: { weather: 'sunny' }, geometry: {} },
];
const FRAME_2: Annotation[] = [
  { type: 'bbox', className: 'thing', attributes: { track_id: 7, keyframe: false }, geometry: { x: 132, y: 50, width: 20, height: 20 } },
  { type: 'bbox', className: 'thing', attributes: { track_id: 8, keyframe: true }, geometry: { x: 20, y: 60, width: 20, height: 20 } },
];
const EXTRAS_TOTAL = { attributes: 4, groups: 2, tracks: 2 };

const total = (counts: Record<string, number> | undefined, except?: string) =>
  Object.entries(counts ?? {}).reduce((sum, [what, n]) => sum + (what === except ? 0 : n), 0);

describe('export accounting (issue 25): every writer accounts for every shape it is given', () => {
  let work: string;
  let count = 0;
  let image: string;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'versa-accounting-'));
    image = join(work, 'scene.png');
    await writeFile(image, await sharp({ create: { width: W, height: H, channels: 3, background: { r: 90, g: 120, b: 30 } } }).png().toBuffer());
  });
  after(() => rm(work, { recursive: true, force: true }));

  async function write(format: ExportFormat, projectType: ProjectType, annotations: Annotation[], size = { width: W, height: H }, path = image) {
    const dataset: DatasetToWrite = {
      classes: ['thing', 'person'],
      classSpecs: new Map<string, ClassSpec>([['person', { skeleton }]]),
      projectType,
      items: [{ split: 'train', fileName: 'scene.png', source: { path }, ...size, annotations }],
    };
    const out = join(work, `out-${++count}.${WRITERS[format].extension}`);
    const stats = await WRITERS[format].write(dataset, createWriteStream(out));
    return { stats, out };
  }

  async function writeFrames(format: ExportFormat) {
    const item = (frame: number, annotations: Annotation[]) => ({
      split: 'train' as const, fileName: `frame_${frame}.png`, source: { path: image }, width: W, height: H, annotations, video: { name: 'clip', frame },
    });
    const dataset: DatasetToWrite = {
      classes: ['thing', 'person'],
      classSpecs: new Map<string, ClassSpec>([['person', { skeleton }], ['thing', { attributes: [{ name: 'occluded', type: 'checkbox' }, { name: 'difficult', type: 'checkbox' }, { name: 'color', type: 'text' }, { name: 'weather', type: 'text' }] }]]),
      projectType: 'instance_segmentation',
      videos: [{ name: 'clip', frameCount: 2, width: W, height: H }],
      tracks: [
        { video: 'clip', id: 7, className: 'thing', keyframes: [{ type: 'bbox', frame: 0, outside: false, occluded: false, geometry: FRAME_1[4].geometry as never }, { type: 'bbox', frame: 1, outside: false, occluded: false, geometry: FRAME_2[0].geometry as never }] },
        { video: 'clip', id: 8, className: 'thing', keyframes: [{ type: 'bbox', frame: 1, outside: false, occluded: false, geometry: FRAME_2[1].geometry as never }] },
      ],
      items: [item(0, FRAME_1), item(1, FRAME_2)],
    };
    const out = join(work, `frames-${++count}.${WRITERS[format].extension}`);
    return { stats: await WRITERS[format].write(dataset, createWriteStream(out)), out };
  }

  for (const format of Object.keys(WRITERS) as ExportFormat[]) {
    it(`${format}: attribute values, groups and tracks are each kept, converted or skipped`, async () => {
      const { stats } = await writeFrames(format);
      for (const kind of ['attributes', 'groups', 'tracks'] as const) {
        const t = stats.extras?.[kind];
        assert.equal(total(t?.kept) + total(t?.converted) + total(t?.skipped), EXTRAS_TOTAL[kind], `${format} ${kind}: ${JSON.stringify(t)}`);
        for (const what of Object.keys(t?.skipped ?? {})) assert.match(what, /\(.+\)$/, `${format}: a skipped ${kind} entry says why`);
      }
    });
  }

  it('formats without attributes, groups or tracks say so: VOC keeps its three flags, YOLO its track ids, COCO a keypoints group', async () => {
    const voc = (await writeFrames('voc')).stats.extras!;
    assert.deepEqual(voc.attributes.kept, { occluded: 1, difficult: 1 });
    assert.deepEqual(voc.attributes.skipped, { 'color (VOC objects hold only difficult, truncated and occluded flags)': 1, 'weather (its shape is not written)': 1 });
    assert.deepEqual(voc.groups.skipped, { 'group (VOC has no groups)': 2 });
    assert.deepEqual(voc.tracks.skipped, { 'track (VOC has no track identity)': 2 });
    const yolo = (await writeFrames('yolo')).stats.extras!;
    assert.deepEqual(yolo.tracks.converted, { 'track→track ids in tracks/ beside the labels': 2 });
    assert.deepEqual(yolo.attributes.skipped, { 'occluded (YOLO label lines hold no attributes)': 1, 'color (YOLO label lines hold no attributes)': 1, 'difficult (YOLO label lines hold no attributes)': 1, 'weather (its shape is not written)': 1 });
    const coco = (await writeFrames('coco')).stats.extras!;
    assert.deepEqual(coco.groups, { skipped: { 'group (COCO has no groups)': 1 }, converted: { 'group→one COCO annotation (keypoints with their outline)': 1 } });
    assert.deepEqual(coco.attributes, { kept: { occluded: 1, color: 1, difficult: 1 }, skipped: { 'weather (its shape is not written)': 1 } });
    const mot = (await writeFrames('mot')).stats.extras!;
    assert.deepEqual(mot.tracks, { kept: { track: 2 } });
  });

  it('attribute values of a shape a format leaves out as drawing nothing (an empty mask, keypoints none labelled) are counted as skipped with it', async () => {
    for (const format of ['cvat', 'labelme', 'labelstudio'] as const) {
      const { stats } = await write(format, 'instance_segmentation', [
        { type: 'mask', className: 'thing', attributes: { color: 'red' }, geometry: { rle: encodeRle({ width: W, height: H, data: new Uint8Array(W * H) }) } },
        { type: 'keypoints', className: 'person', attributes: { color: 'blue' }, geometry: { points: [[0, 0, 0], [0, 0, 0], [0, 0, 0]] } },
      ]);
      const skippedShapes = total(stats.skipped);
      assert.equal(total(stats.extras?.attributes.skipped), skippedShapes, `${format}: ${JSON.stringify(stats)}`);
      assert.equal(total(stats.extras?.attributes.kept), 2 - skippedShapes, format);
    }
  });

  it('accounting is what the writer did, not what its format could hold: the extras of a shape it leaves out go with it', async () => {
    // Each writer here can hold the extra in general, and leaves out the one shape that carries it: a VOC box outside
    // the image (no area), a rotated box in MOT (boxes only), a polyline in COCO (no form), all in their groups and tracks.
    const outside = { type: 'bbox', className: 'thing', geometry: { x: 500, y: 500, width: 10, height: 10 } } as const;
    const voc = (await write('voc', 'object_detection', [
      { ...outside, attributes: { difficult: true }, groupId: 3 },
      { type: 'bbox', className: 'thing', attributes: { truncated: true }, geometry: { x: 5, y: 5, width: 20, height: 10 } },
    ])).stats.extras!;
    assert.deepEqual(voc.attributes, { skipped: { 'difficult (its shape is not written)': 1 }, kept: { truncated: 1 } });
    assert.deepEqual(voc.groups, { skipped: { 'group (its shapes are not written)': 1 } });
    const rotated = { type: 'bbox', className: 'thing', geometry: { x: 5, y: 5, width: 20, height: 10, rotation: 30 } } as const;
    const mot = await WRITERS.mot.write({
      classes: ['thing'], videos: [{ name: 'clip', frameCount: 1, width: W, height: H }],
      items: [{ split: 'train', fileName: 'f.png', source: { path: image }, width: W, height: H, video: { name: 'clip', frame: 0 }, annotations: [
        { ...rotated, attributes: { occluded: true, track_id: 4, keyframe: true } },
        { type: 'bbox', className: 'thing', attributes: { ignored: true, track_id: 5, keyframe: true }, geometry: { x: 50, y: 5, width: 20, height: 10 } },
      ] }],
    }, createWriteStream(join(work, `mot-${++count}.zip`)));
    assert.deepEqual(mot.extras!.attributes, { skipped: { 'occluded (its shape is not written)': 1 }, kept: { ignored: 1 } });
    assert.deepEqual(mot.extras!.tracks, { skipped: { 'track (none of its shapes is written)': 1 }, kept: { track: 1 } });
    const coco = (await write('coco', 'instance_segmentation', [
      { type: 'polyline', className: 'thing', attributes: { color: 'red' }, geometry: { points: [[1, 1], [50, 5]] } },
    ])).stats.extras!;
    assert.deepEqual(coco.attributes, { skipped: { 'color (its shape is not written)': 1 } });
  });

  it("labelme: a keypoints instance's description is left out (each point's description is its name), its other values kept", async () => {
    const { stats } = await write('labelme', 'keypoint_detection', [
      { type: 'keypoints', className: 'person', attributes: { description: 'runner', pose: 'standing' }, geometry: { points: [[100, 20, 2], [80, 50, 1], [90, 60, 2]] } },
    ]);
    assert.deepEqual(stats.extras?.attributes, { kept: { pose: 1 }, skipped: { "description (each point's description is its name)": 1 } });
  });

  it('coco: the outline merged into its keypoints keeps its attribute values (they were counted kept and not written)', async () => {
    const { out, stats } = await write('coco', 'keypoint_detection', [
      { type: 'keypoints', className: 'person', groupId: 1, attributes: { pose: 'standing' }, geometry: { points: [[100, 20, 2], [80, 50, 1], [90, 60, 2]] } },
      { type: 'polygon', className: 'person', groupId: 1, attributes: { crowded: true }, geometry: { points: [[70, 10], [120, 10], [120, 80]] } },
    ]);
    const doc = JSON.parse(await readFile(out, 'utf8'));
    assert.deepEqual(doc.annotations.map((a: { attributes?: object }) => a.attributes), [{ crowded: true, pose: 'standing' }]);
    assert.deepEqual(stats.extras?.attributes.kept, { pose: 1, crowded: 1 });
  });

  it('what the writers call kept is in the files: read back, the attribute values, groups and track ids are there', async () => {
    for (const format of ['cvat', 'datumaro', 'labelme', 'coco_zip', 'voc'] as const) {
      const { out, stats } = await writeFrames(format);
      const back = await readDatasetZip(out);
      try {
        const items = [];
        for await (const item of back.items()) items.push(item);
        const first = items.find((i) => i.fileName === 'frame_0.png')!;
        // (LabelMe names each keypoint in its point's description: a shape's conversion, not an attribute.)
        const attributes = first.annotations.flatMap((a) => Object.entries(a.attributes ?? {}).filter(([k]) => !['track_id', 'keyframe', 'description'].includes(k)).map(([k]) => k));
        assert.deepEqual(attributes.sort(), Object.keys(stats.extras!.attributes.kept ?? {}).sort(), `${format}: ${JSON.stringify(first.annotations)}`);
        const groups = new Set(first.annotations.map((a) => a.groupId).filter((g) => g));
        assert.equal(groups.size, stats.extras!.groups.kept?.group ?? 0, `${format} groups`);
        const tracks = new Set(items.flatMap((i) => i.annotations.map((a) => a.attributes?.track_id)).filter((t) => t !== undefined));
        assert.equal(tracks.size, total(stats.extras!.tracks.kept) + total(stats.extras!.tracks.converted), `${format} tracks`);
      } finally {
        await back.cleanup();
      }
    }
  });

  it('jsonl keeps attribute values and group ids (it wrote neither)', async () => {
    const { out, stats } = await writeFrames('jsonl');
    const [first] = (await readFile(out, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(first.annotations[0].attributes, { occluded: true, color: 'red' });
    assert.equal(first.annotations[0].group_id, 1);
    assert.deepEqual(stats.extras?.groups.kept, { group: 2 });
  });

  const unaccounted = (stats: WriteStats) =>
    EVERY_SHAPE.length - total(stats.kept) - total(stats.converted) - total(stats.skipped, 'image (not a video frame)');

  for (const format of Object.keys(WRITERS) as ExportFormat[]) {
    it(`${format}: kept + converted + skipped = every shape`, async () => {
      const { stats } = await write(format, 'instance_segmentation', EVERY_SHAPE);
      assert.equal(unaccounted(stats), 0, `${format}: ${JSON.stringify({ kept: stats.kept, converted: stats.converted, skipped: stats.skipped })}`);
    });
  }

  for (const projectType of ['object_detection', 'keypoint_detection', 'oriented_detection'] as const) {
    it(`yolo in a ${projectType} project: kept + converted + skipped = every shape`, async () => {
      const { stats } = await write('yolo', projectType, EVERY_SHAPE);
      assert.equal(unaccounted(stats), 0, JSON.stringify(stats));
    });
  }

  it('VOC and CreateML: shapes other than upright boxes are converted, classifications and zero-size boxes skipped', async () => {
    for (const format of ['voc', 'createml'] as const) {
      const { stats } = await write(format, 'object_detection', EVERY_SHAPE);
      assert.deepEqual(stats.kept, { bbox: 1 }, format);
      assert.equal(stats.skipped?.classification, 1, format);
      assert.equal(stats.skipped?.['points (no area in the image)'], 1, format);
      assert.equal(stats.skipped?.['mask (no area in the image)'], 1, format);
      assert.equal(stats.converted?.['bbox (rotated)→bbox'], 1, format);
      assert.equal(stats.converted?.['ellipse→bbox'], 2, format);
      assert.equal(stats.converted?.['polygon→bbox'], 4, format);
      assert.equal(stats.annotationCount, total(stats.kept) + total(stats.converted), format);
    }
  });

  it('masks: what has no area is counted as skipped', async () => {
    const { stats } = await write('masks', 'semantic_segmentation', EVERY_SHAPE);
    assert.deepEqual(stats.skipped, { keypoints: 2, polyline: 1, points: 2, classification: 1 });
  });

  it('masks: rotated boxes painted rotated, every part filled, holes cut, ellipses painted', async () => {
    const size = { width: 100, height: 100 };
    const path = join(work, 'square.png');
    await writeFile(path, await sharp({ create: { ...size, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer());
    const { out } = await write('masks', 'semantic_segmentation', [
      // Class values: thing 1, person 2. A background of `thing`, then `person` shapes over it.
      { type: 'polygon', className: 'thing', geometry: { points: [[0, 0], [100, 0], [100, 100], [0, 100]] } },
      { type: 'polygon', className: 'person', geometry: { points: [[5, 5], [45, 5], [45, 45], [5, 45]], holes: [[[15, 15], [35, 15], [35, 35], [15, 35]]] } },
      { type: 'bbox', className: 'person', geometry: { x: 55, y: 22, width: 40, height: 6, rotation: 90 } },
      { type: 'polygon', className: 'person', geometry: { points: [[55, 55], [65, 55], [65, 65], [55, 65]], parts: [[[55, 55], [65, 55], [65, 65], [55, 65]], [[80, 80], [95, 80], [95, 95], [80, 95]]] } },
      { type: 'ellipse', className: 'person', geometry: { cx: 25, cy: 75, rx: 15, ry: 5, rotation: 90 } },
    ], size, path);
    const archive = await yauzl.openPromise(out, { lazyEntries: true });
    let png: Buffer | null = null;
    for await (const entry of archive.eachEntry()) {
      if (entry.fileName !== 'train/scene_mask.png') continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await archive.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      png = Buffer.concat(chunks);
    }
    archive.close();
    assert.ok(png, 'the mask PNG is in the archive');
    const { data, info } = await sharp(png).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => data[y * info.width + x];
    assert.equal(at(10, 10), 2, 'the outline with holes is painted');
    assert.equal(at(25, 25), 1, 'its hole is cut: what lies beneath shows');
    assert.equal(at(75, 8), 2, 'the box turned 90° is painted upright');
    assert.equal(at(58, 25), 1, 'and not where the unrotated box would be');
    assert.equal(at(60, 60), 2, 'first part');
    assert.equal(at(88, 88), 2, 'second part');
    assert.equal(at(25, 65), 2, 'the ellipse turned 90° is painted');
    assert.equal(at(12, 75), 1, 'and not along its unrotated axis');
  });

  it('cvat: attribute values the class does not declare (a track shape\'s track_id, keyframe) are declared in <meta> and read back', async () => {
    const { out } = await write('cvat', 'object_detection', [
      { type: 'bbox', className: 'thing', geometry: { x: 5, y: 5, width: 20, height: 10 }, attributes: { track_id: 7, keyframe: true, note: 'left' } },
    ]);
    const back = await readDatasetZip(out);
    try {
      assert.deepEqual(back.classSpecs?.get('thing')?.attributes?.map((a) => [a.name, a.type]), [['track_id', 'number'], ['keyframe', 'checkbox'], ['note', 'text']]);
      const items = [];
      for await (const item of back.items()) items.push(item);
      assert.deepEqual(items[0].annotations[0].attributes, { track_id: 7, keyframe: true, note: 'left' });
      assert.deepEqual(back.ledger?.skippedList, []);
    } finally {
      await back.cleanup();
    }
  });
});
