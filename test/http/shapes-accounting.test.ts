import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { fixtureEntries as folderEntries } from '../helpers/fixture-entries.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const fixtureEntries = (name: string) => folderEntries(join(FIXTURES, name));

const png = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 90, g: 90, b: 90 } } }).png().toBuffer();

type Counts = { images: number; annotations: Record<string, number>; attributes: number; tracks: number };
interface Row {
  reader: string;
  /** What the archive holds that the reader cannot keep. */
  holds: string;
  entries: () => Promise<ZipEntry[]>;
  /** Every skipped item, as [item, reason], in any order. */
  skipped: [string, string][];
  kept: Partial<Counts>;
  /** Form fields of the import (a layout only asked for by name: `format=image_sequence`). */
  fields?: Record<string, string>;
}

/**
 * One row per reader: an archive with one of everything that reader cannot keep (real exports where the tools' own
 * repositories have them). Readers with their own accounting test elsewhere: CVAT (shapes-cvat-import), LabelMe
 * (shapes-labelme-import; the real labelme primitives example is GPL-3.0, so it is not kept here), COCO, Ultralytics pose/OBB and DOTA (shapes-formats-import), KITTI, Open Images, VoTT,
 * WIDER Face and MPII (shapes-layouts). MOT, CVAT for video, image sequences, class folders and both mask layouts
 * are generated here (small hand-made archives: frames and masks drawn with sharp, the XML and text written as those
 * tools write them). A mask value no class names is refused with 422.
 */
/** CVAT's YOLO 1.1 (Darknet) layout with one line naming a class index past obj.names. */
async function darknetEntries(): Promise<ZipEntry[]> {
  return [
    { name: 'obj.data', data: 'classes = 2\nnames = data/obj.names\ntrain = data/train.txt\n' },
    { name: 'obj.names', data: 'car\nbus\n' },
    { name: 'train.txt', data: 'data/obj_train_data/a.png\n' },
    { name: 'obj_train_data/a.png', data: await png(40, 40) },
    { name: 'obj_train_data/a.txt', data: '1 0.5 0.5 0.25 0.25\n5 0.5 0.5 0.1 0.1\n' },
  ];
}


/** A 20×10 class-index mask: the left columns background (0), then a band of each value. */
async function greyMask(values: number[]): Promise<Buffer> {
  const data = Buffer.alloc(20 * 10);
  for (let y = 0; y < 10; y++) values.forEach((v, i) => data.fill(v, y * 20 + 4 + i * 5, y * 20 + 8 + i * 5));
  return sharp(data, { raw: { width: 20, height: 10, channels: 1 } }).png().toBuffer();
}

/** A 20×10 VOC colour mask: black background, then a band of each colour. */
async function colourMask(colours: [number, number, number][]): Promise<Buffer> {
  const data = Buffer.alloc(20 * 10 * 3);
  for (let y = 0; y < 10; y++) colours.forEach((c, i) => { for (let x = 4 + i * 5; x < 8 + i * 5; x++) data.set(c, (y * 20 + x) * 3); });
  return sharp(data, { raw: { width: 20, height: 10, channels: 3 } }).png().toBuffer();
}

/** CVAT for video 1.1 as CVAT writes a task: two frames, a car track, and one of each thing the reader leaves out. */
const cvatVideoXml = `<?xml version="1.0" encoding="utf-8"?>
<annotations>
  <version>1.1</version>
  <meta><task><name>clip</name><size>2</size><mode>interpolation</mode><start_frame>0</start_frame><stop_frame>1</stop_frame>
    <labels><label><name>car</name><attributes></attributes></label></labels>
    <original_size><width>40</width><height>30</height></original_size></task></meta>
  <track id="0" label="car" source="manual">
    <box frame="0" outside="0" occluded="0" keyframe="1" xtl="2" ytl="2" xbr="12" ybr="12" z_order="0"></box>
    <box frame="1" outside="1" occluded="0" keyframe="1" xtl="2" ytl="2" xbr="12" ybr="12" z_order="0"></box>
  </track>
  <track id="1" label="car" source="manual" group_id="3">
    <box frame="0" outside="0" occluded="0" keyframe="1" xtl="20" ytl="2" xbr="30" ybr="12" z_order="0"></box>
  </track>
  <track id="2" label="" source="manual">
    <box frame="0" outside="0" occluded="0" keyframe="1" xtl="2" ytl="15" xbr="12" ybr="25" z_order="0"></box>
  </track>
  <tag frame="7" label="car"></tag>
  <image id="5" width="40" height="30"></image>
</annotations>
`;

const ROWS: Row[] = [
  {
    reader: 'datumaro',
    holds: "Datumaro's diverse asset: captions, a box without a label, a mask of the wrong size, an unknown label id, an item without its image",
    entries: () => fixtureEntries('datumaro-real/diverse'),
    skipped: [
      ['item "100" annotation 1 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "100" annotation 2 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "100" annotation 5 (bbox)', 'the annotation has no label'],
      ['item "100" annotation 5 (mask)', "a mask needs an rle whose size is the image's [height, width]"],
      ['item "21" annotation 0 (caption)', "Versa has no shape for Datumaro's caption"],
      ['item "21" annotation 42 (bbox)', 'label_id 5 is not in the label categories'],
      ['image "21.jpg" (annotations/train.json item "21")', 'the labels name this image but its file is not in the dataset'],
      ['label 1 of "21.jpg" (annotations/train.json item "21") (classification, class "cat2")', 'its image is not in the dataset'],
    ],
    kept: { images: 1, annotations: { classification: 1, bbox: 1, points: 1 }, attributes: 5 },
  },
  {
    reader: 'datumaro skeleton',
    holds: "Datumaro's skeleton asset: attributes on single skeleton points",
    entries: () => fixtureEntries('datumaro-real/with_skeleton'),
    skipped: [
      ['attribute "point3-attribute-checkbox" of point "point3-label" of item "100" annotation 0 (skeleton)', 'Versa keeps no attributes per keypoint'],
      ['attribute "point2-attribute-text" of point "point2-label" of item "100" annotation 0 (skeleton)', 'Versa keeps no attributes per keypoint'],
    ],
    kept: { images: 1, annotations: { keypoints: 1 }, attributes: 2 },
  },
  {
    reader: 'labelstudio',
    holds: "a real export of rotated rectangles and the editor's ellipse, choice and keypoints beside a video task with a videorectangle track",
    entries: () => fixtureEntries('labelstudio-real'),
    skipped: [
      ['task 28 result M-XUImr4kg (videorectangle) "Possum"', 'a video track (6 keyframes): Versa does not import video tracks yet'],
      ['image (none) of task 28', "the task's data names no image (video); Versa imports images"],
    ],
    kept: { images: 5, annotations: { bbox: 25, ellipse: 1, classification: 1, points: 2 }, tracks: 0 },
  },
  {
    reader: 'yolo',
    holds: 'a line whose class index data.yaml does not name, a label file without its image',
    entries: async () => [
      { name: 'data.yaml', data: 'train: train/images\nnames: [car]\n' },
      { name: 'train/images/a.png', data: await png(40, 40) },
      { name: 'train/labels/a.txt', data: '0 0.5 0.5 0.25 0.25\n3 0.5 0.5 0.1 0.1\n' },
      { name: 'train/labels/ghost.txt', data: '0 0.5 0.5 0.1 0.1\n' },
    ],
    skipped: [
      ['line 2', 'class index 3 is not one of 0…0 (data.yaml names)'],
      ['line 1', 'no image named ghost.* is in the images folder'],
    ],
    kept: { images: 1, annotations: { bbox: 1 } },
  },
  {
    reader: 'darknet',
    holds: "a CVAT YOLO 1.1 line whose class index obj.names does not name (it refused the whole import)",
    entries: darknetEntries,
    skipped: [['line 2', 'class index 5 is not one of 0…1 (obj.names)']],
    kept: { images: 1, annotations: { bbox: 1 } },
  },
  {
    reader: 'voc',
    holds: 'an image ImageSets lists whose XML and image are both missing',
    entries: async () => [
      { name: 'ImageSets/Main/train.txt', data: 'a\nghost\n' },
      { name: 'JPEGImages/a.png', data: await png(40, 30) },
      {
        name: 'Annotations/a.xml',
        data: '<annotation><filename>a.png</filename><size><width>40</width><height>30</height><depth>3</depth></size><object><name>cat</name><bndbox><xmin>2</xmin><ymin>3</ymin><xmax>20</xmax><ymax>25</ymax></bndbox></object></annotation>',
      },
    ],
    skipped: [['image ghost', 'listed, but neither its XML nor its image is in the dataset']],
    kept: { images: 1, annotations: { bbox: 1 } },
  },
  {
    reader: 'createml',
    holds: 'an entry whose image is not in the archive (it failed the whole import)',
    entries: async () => [
      { name: 'train/_annotations.createml.json', data: JSON.stringify([
        { image: 'a.png', annotations: [{ label: 'cat', coordinates: { x: 20, y: 15, width: 10, height: 8 } }] },
        { image: 'ghost.png', annotations: [{ label: 'dog', coordinates: { x: 5, y: 5, width: 4, height: 4 } }] },
      ]) },
      { name: 'train/a.png', data: await png(40, 30) },
    ],
    skipped: [
      ['image ghost.png', 'the labels name this image but its file is not in the dataset'],
      ['label 1 of ghost.png (bbox, class "dog")', 'its image is not in the dataset'],
    ],
    kept: { images: 1, annotations: { bbox: 1 } },
  },
  {
    reader: 'multilabel_csv',
    holds: 'a row whose image is not in the archive (it failed the whole import)',
    entries: async () => [
      { name: 'train/_classes.csv', data: 'filename, cat, dog\na.png,1,1\nghost.png,0,1\n' },
      { name: 'train/a.png', data: await png(20, 20) },
    ],
    skipped: [
      ['image "ghost.png" (train/_classes.csv line 3)', 'the labels name this image but its file is not in the dataset'],
      ['label 1 of "ghost.png" (train/_classes.csv line 3) (classification, class "dog")', 'its image is not in the dataset'],
    ],
    kept: { images: 1, annotations: { classification: 2 } },
  },
  {
    reader: 'mot',
    holds: 'an image that is no frame, a box with no area, a class id labels.txt does not name, an untracked box on a frame not in the archive',
    entries: async () => [
      { name: 'seq/gt/gt.txt', data: '1,1,2,2,10,10,1,1,1\n2,1,4,2,10,10,1,1,1\n1,2,5,5,0,5,1,1,1\n1,3,5,5,4,4,1,7,1\n5,-1,5,5,4,4,1,1,1\n' },
      { name: 'seq/gt/labels.txt', data: 'car\n' },
      { name: 'seq/img1/000001.png', data: await png(40, 30) },
      { name: 'seq/img1/000002.png', data: await png(40, 30) },
      { name: 'seq/img1/cover.png', data: await png(40, 30) },
    ],
    skipped: [
      ['image img1/cover.png', 'not a frame: MOT names frames by their number from 1 (000001.jpg)'],
      ['line 3', 'the box has no area'],
      ['line 4', 'class_id 7 is not a label of gt/labels.txt'],
      ['line 5', 'a box in no track on frame 5, whose image is not in the archive'],
    ],
    kept: { images: 2, annotations: { 'bbox keyframe': 2 }, tracks: 1 },
  },
  {
    reader: 'cvat_video',
    holds: 'an image that is no frame, a grouped track, a track without a label, a tag on a frame not in the archive, an <image>',
    entries: async () => [
      { name: 'annotations.xml', data: cvatVideoXml },
      { name: 'images/frame_000000.png', data: await png(40, 30) },
      { name: 'images/frame_000001.png', data: await png(40, 30) },
      { name: 'images/cover.png', data: await png(40, 30) },
    ],
    skipped: [
      ['image images/cover.png', 'not a frame: its name carries no frame number (frame_000012.png)'],
      ['group_id 3 of track 1 (label "car")', 'Versa keeps no groups between tracks: the track is kept on its own'],
      ['track 2 (label "")', 'the track has no label'],
      ['track 2 (label ""): box on frame 0', 'the track has no label'],
      ['tag on frame 7 (label "car")', 'its frame is not in the archive'],
      ['image 5', 'an <image> in a CVAT for video document: import CVAT for images 1.1 exports with format=cvat'],
    ],
    kept: { images: 2, tracks: 2 },
  },
  {
    reader: 'image_sequence',
    holds: 'a file that is not an image beside the frames',
    fields: { format: 'image_sequence' },
    entries: async () => [
      { name: 'seq/000001.png', data: await png(20, 20) },
      { name: 'seq/000002.png', data: await png(20, 20) },
      { name: 'seq/notes.txt', data: 'shot on a tripod\n' },
    ],
    skipped: [['file notes.txt', 'not an image: an image sequence is a folder of frames']],
    kept: { images: 2 },
  },
  {
    reader: 'folders',
    holds: 'files in class folders that are not images (detection refuses an archive with files no reader reads: asked for by name)',
    fields: { format: 'folders' },
    entries: async () => [
      { name: 'cat/a.png', data: await png(20, 20) },
      { name: 'dog/b.png', data: await png(20, 20) },
      { name: 'dog/deep/c.png', data: await png(20, 20) },
      { name: 'cat/notes.txt', data: 'tabby\n' },
      { name: 'dog/labels.csv', data: 'b.png,dog\n' },
    ],
    skipped: [
      ['file cat/notes.txt', 'not an image: the class folder "cat" holds images'],
      ['file dog/labels.csv', 'not an image: the class folder "dog" holds images'],
    ],
    kept: { images: 3, annotations: { classification: 3 } },
  },
  {
    reader: 'masks',
    holds: 'a mask whose image is not beside it (two classes), a file that is neither image nor mask',
    entries: async () => [
      { name: 'train/_classes.csv', data: 'Pixel Value, Class\n0, background\n1, road\n2, car\n' },
      { name: 'train/a.png', data: await png(20, 10) },
      { name: 'train/a_mask.png', data: await greyMask([1]) },
      { name: 'train/b_mask.png', data: await greyMask([1, 2]) },
      { name: 'train/readme.txt', data: 'masks\n' },
    ],
    skipped: [
      ['mask of class "road"', 'its image b.* is not beside it'],
      ['mask of class "car"', 'its image b.* is not beside it'],
      ['file train/readme.txt', 'neither an image nor a mask (<image stem>_mask.png)'],
    ],
    kept: { images: 1, annotations: { mask: 1 } },
  },
  {
    reader: 'voc_masks',
    holds: 'a mask whose image is not in JPEGImages (two classes), a name ImageSets lists with neither mask nor image',
    entries: async () => [
      { name: 'ImageSets/Segmentation/train.txt', data: 'a\nb\nghost\n' },
      { name: 'JPEGImages/a.png', data: await png(20, 10) },
      { name: 'SegmentationClass/a.png', data: await colourMask([[128, 0, 0]]) },
      { name: 'SegmentationClass/b.png', data: await colourMask([[128, 0, 0], [0, 128, 0]]) },
    ],
    skipped: [
      ['mask of class "aeroplane"', 'its image b.* is not in JPEGImages/'],
      ['mask of class "bicycle"', 'its image b.* is not in JPEGImages/'],
      ['image ghost', 'listed, but neither its mask nor its image is in the dataset'],
    ],
    kept: { images: 1, annotations: { mask: 1 } },
  },
];

describe('shapes-accounting: for each reader, an archive with one of everything it cannot keep lists each of them (issue 25)', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  for (const row of ROWS) {
    it(`shapes-accounting ${row.reader}: ${row.holds}`, async () => {
      const res = await importZip(alice, await buildZip(await row.entries()), row.fields);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const summary = res.body.import as { counts: { read: Counts; kept: Counts; skipped: Counts }; skipped: { item: string; reason: string }[]; skipped_count: number };
      const { read, kept, skipped } = summary.counts;
      for (const kind of ['images', 'attributes', 'tracks'] as const) assert.equal(read[kind], kept[kind] + skipped[kind], kind);
      for (const type of new Set([...Object.keys(read.annotations), ...Object.keys(kept.annotations), ...Object.keys(skipped.annotations)])) {
        assert.equal(read.annotations[type] ?? 0, (kept.annotations[type] ?? 0) + (skipped.annotations[type] ?? 0), `annotations ${type}`);
      }
      assert.deepEqual(summary.skipped.map((s) => [s.item, s.reason]).sort(), [...row.skipped].sort());
      assert.equal(summary.skipped_count, row.skipped.length);
      for (const [kind, want] of Object.entries(row.kept)) assert.deepEqual(kept[kind as keyof Counts], want, `kept ${kind}`);
    });
  }

  it('shapes-accounting darknet strict=true: the unknown class index refuses the import (422 listing the line)', async () => {
    const res = await importZip(alice, await buildZip(await darknetEntries()), { strict: 'true' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.skipped.map((s: { file: string; item: string }) => `${s.file} ${s.item}`), ['obj_train_data/a.txt line 2']);
  });
});
