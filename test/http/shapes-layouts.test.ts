import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { fixtureEntries as folderEntries } from '../helpers/fixture-entries.js';
import { buildZip } from '../helpers/zip-build.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'shapes-layouts');
const fixtureEntries = (name: string) => folderEntries(join(FIXTURES, name));

type Counts = { images: number; annotations: Record<string, number>; attributes: number; tracks: number };

/** read = kept + skipped for every kind, and the list holds every skipped item. */
function assertBalanced(body: { counts: { read: Counts; kept: Counts; skipped: Counts }; skipped: unknown[]; skipped_count: number }) {
  const { read, kept, skipped } = body.counts;
  for (const kind of ['images', 'attributes', 'tracks'] as const) assert.equal(read[kind], kept[kind] + skipped[kind], kind);
  for (const type of Object.keys(read.annotations)) {
    assert.equal(read.annotations[type], (kept.annotations[type] ?? 0) + (skipped.annotations[type] ?? 0), `annotations ${type}`);
  }
  assert.equal(body.skipped.length, body.skipped_count);
}

async function annotationsOf(client: Client, projectId: number) {
  const images = (await client.get(`/api/projects/${projectId}/images?limit=100`)).body as { id: number; original_name: string; split: string | null }[];
  const classes = (await client.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string; skeleton: unknown; attributes: unknown }[];
  const byImage = new Map<string, { class: string; type: string; geometry: Record<string, unknown>; attributes: Record<string, unknown> }[]>();
  for (const image of images) {
    const list = (await client.get(`/api/images/${image.id}/annotations`)).body as { class_id: number; annotation_type: string; geometry: Record<string, unknown>; attributes: Record<string, unknown> }[];
    byImage.set(image.original_name, list.map((a) => ({ class: classes.find((c) => c.id === a.class_id)!.name, type: a.annotation_type, geometry: a.geometry, attributes: a.attributes })));
  }
  return { images, classes, byImage };
}

const near = (a: number, b: number) => Math.abs(a - b) <= 0.5;

describe('shapes-layouts: KITTI, Open Images, VoTT, WIDER Face and MPII imports (issue 25)', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('shapes-layouts KITTI: boxes with 3D columns as attributes, DontCare kept as a class, unlabelled test frame kept, missing image listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('kitti')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'kitti');
    assertBalanced(res.body.import);
    assert.deepEqual(res.body.import.counts.skipped, { images: 1, annotations: { bbox: 1 }, attributes: 0, tracks: 0 });
    assert.match(JSON.stringify(res.body.import.skipped), /000009/);
    const { images, byImage, classes } = await annotationsOf(alice, res.body.id);
    assert.equal(images.length, 3, 'the frame without labels is kept');
    assert.equal(images.find((i) => i.original_name === '000002.png')!.split, 'test');
    const [pedestrian] = byImage.get('000000.png')!;
    assert.equal(pedestrian.class, 'Pedestrian');
    assert.ok(near(pedestrian.geometry.x as number, 712.4) && near(pedestrian.geometry.width as number, 98.33));
    assert.deepEqual(pedestrian.attributes, { truncated: 0, occluded: 0, alpha: -0.2, height_3d: 1.89, width_3d: 0.48, length_3d: 1.2, x_3d: 1.84, y_3d: 1.47, z_3d: 8.41, rotation_y: 0.01 });
    assert.deepEqual(byImage.get('000001.png')!.map((a) => a.class), ['Truck', 'Car', 'Cyclist', 'DontCare']);
    assert.ok(classes.find((c) => c.name === 'Car')!.attributes);
  });

  it('shapes-layouts Open Images: relative boxes in pixels, names from class descriptions, flags as checkboxes; clicks, missing image and empty box listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('openimages')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'openimages');
    assertBalanced(res.body.import);
    const reasons = res.body.import.skipped.map((s: { item: string }) => s.item).join('\n');
    assert.match(reasons, /extreme clicks of row 2/);
    assert.match(reasons, /fffffff000000001/);
    assert.match(reasons, /Flower/, 'the box with XMin = XMax has no area');
    const { byImage } = await annotationsOf(alice, res.body.id);
    const people = byImage.get('000002b66c9c498e.jpg')!;
    assert.equal(people.length, 2);
    assert.equal(people[0].class, 'Person');
    assert.ok(near(people[0].geometry.x as number, 0.0125 * 1024) && near(people[0].geometry.height as number, (0.5875 - 0.148438) * 683));
    assert.equal(people[0].attributes.IsTruncated, true);
    assert.equal(people[0].attributes.IsOccluded, false);
    const plant = byImage.get('000002b97e5471a0.jpg')!.find((a) => a.class === 'Plant')!;
    assert.equal(plant.attributes.IsGroupOf, true);
    assert.equal('IsInside' in plant.attributes, false, '-1 is unknown: no value');
    assert.deepEqual(byImage.get('00000c5d1f29da7e.jpg'), [], 'an image no row names is kept unlabelled');
  });

  it('shapes-layouts VoTT CSV: pixel boxes; a row naming a missing image is listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('vott-csv')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'vott');
    assertBalanced(res.body.import);
    assert.equal(res.body.import.counts.skipped.images, 1);
    const { byImage } = await annotationsOf(alice, res.body.id);
    const [car] = byImage.get('IMG_0001.jpg')!;
    assert.deepEqual([car.class, car.geometry.x, car.geometry.y, car.geometry.width, car.geometry.height], ['car', 112.5, 80.25, 188.25, 179.75]);
  });

  it('shapes-layouts VoTT JSON: rectangles, polygons, polylines and points; untagged, unknown, video and missing-image regions listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('vott-json')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'vott');
    assertBalanced(res.body.import);
    const items = res.body.import.skipped.map((s: { item: string; reason: string }) => `${s.item}: ${s.reason}`).join('\n');
    assert.match(items, /region r5 .*no tag/);
    assert.match(items, /region r6 .*CUBOID/);
    assert.match(items, /image missing\.jpg/);
    assert.match(items, /video asset .*not importable yet/);
    const { byImage } = await annotationsOf(alice, res.body.id);
    const street = byImage.get('street.jpg')!;
    assert.deepEqual(street.map((a) => `${a.type}:${a.class}`), ['bbox:car', 'polygon:person', 'polyline:lane', 'points:person', 'bbox:car', 'bbox:person']);
    assert.deepEqual(street[2].geometry.points, [[0, 600], [50, 500], [100, 400]]);
    assert.deepEqual(byImage.get('park.jpg'), []);
  });

  it('shapes-layouts WIDER Face: faces with their six flags as attributes; the zero-face placeholder is no face; degenerate and missing listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('widerface')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'widerface');
    assertBalanced(res.body.import);
    assert.equal(res.body.import.counts.read.images, 4);
    assert.equal(res.body.import.counts.skipped.images, 1);
    assert.equal(res.body.import.counts.skipped.annotations.bbox, 2, 'the face of width 0 and the face of the missing image');
    const { byImage, images } = await annotationsOf(alice, res.body.id);
    assert.ok(images.every((i) => i.split === 'valid'));
    const [face] = byImage.get('0_Parade_marchingband_1_849.jpg')!;
    assert.deepEqual(face.geometry, { x: 449, y: 330, width: 122, height: 149 });
    assert.deepEqual(face.attributes, { blur: 'clear', expression: 'typical', illumination: 'normal', invalid: false, occlusion: 'no', pose: 'typical' });
    assert.equal(byImage.get('0_Parade_Parade_0_904.jpg')!.length, 2);
    assert.deepEqual(byImage.get('0_Parade_marchingband_1_799.jpg'), []);
  });

  it('shapes-layouts MPII: people as 16 keypoints with the MPII skeleton; unannotated joints not labelled; missing image and empty person listed', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('mpii')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'mpii');
    assertBalanced(res.body.import);
    assert.equal(res.body.import.counts.skipped.annotations.keypoints, 2);
    const { byImage, classes } = await annotationsOf(alice, res.body.id);
    const person = classes.find((c) => c.name === 'person')! as { skeleton: { points: string[]; flip_pairs: number[][] } };
    assert.equal(person.skeleton.points.length, 16);
    assert.equal(person.skeleton.points[9], 'head_top');
    assert.deepEqual(person.skeleton.flip_pairs[0], [0, 5]);
    const [first] = byImage.get('015601864.jpg')!;
    const points = first.geometry.points as number[][];
    assert.deepEqual(points[0], [620, 394, 2]);
    const [second] = byImage.get('015599452.jpg')!;
    assert.deepEqual((second.geometry.points as number[][])[0], [0, 0, 0]);
    assert.deepEqual((second.geometry.points as number[][])[2], [806, 543, 2]);
    assert.ok(first.geometry.bbox, 'the centre and scale become the box');
  });

  it('shapes-layouts MOT: a video of its frames with a track per object id (issue 26); format=images still takes the frames alone', async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries('mot')));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'mot');
    const [video] = (await alice.get(`/api/projects/${res.body.id}/videos`)).body;
    assert.deepEqual([video.name, video.frame_count, video.fps], ['MOT17-02-FRCNN', 600, 30]);
    // Its one frame is a tiny stand-in: the object's box (at 912, 484 of 1920×1080) lies outside it, so the track is
    // skipped with that reason, keyframe by keyframe.
    assert.deepEqual((await alice.get(`/api/videos/${video.id}/tracks`)).body, []);
    const { counts, skipped } = res.body.import;
    assert.deepEqual([counts.read.tracks, counts.skipped.tracks], [1, 1]);
    assert.ok(skipped.some((s: { item: string; reason: string }) => /track 1 \(class "static_person"\)/.test(s.item) && /none of its keyframes/.test(s.reason)), JSON.stringify(skipped));
    assert.equal(counts.skipped.annotations['bbox keyframe'], 3);
    const frames = await importZip(alice, await buildZip(await fixtureEntries('mot')), { format: 'images' });
    assert.equal(frames.status, 201, JSON.stringify(frames.body));
    assert.equal(frames.body.image_count, 1, 'format=images takes its frames without tracks');
  });

  it('shapes-layouts class folders: root images kept unlabelled, nested folders under their top class folder', async () => {
    const pic = (n: number) => sharp({ create: { width: 8, height: 8, channels: 3, background: { r: n * 40, g: 10, b: 10 } } }).png().toBuffer();
    const res = await importZip(alice, await buildZip([
      { name: 'cat/a.png', data: await pic(1) },
      { name: 'cat/tabby/b.png', data: await pic(2) },
      { name: 'dog/c.png', data: await pic(3) },
      { name: 'loose.png', data: await pic(4) },
    ]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'folders');
    const { byImage } = await annotationsOf(alice, res.body.id);
    assert.deepEqual([...byImage].map(([name, list]) => `${name}:${list.map((a) => a.class).join(',')}`).sort(), ['a.png:cat', 'b.png:cat', 'c.png:dog', 'loose.png:']);
  });

  it('shapes-layouts VOC: flags and pose as attributes, person-layout parts as grouped boxes, images no XML names kept', async () => {
    const pic = (n: number) => sharp({ create: { width: 353, height: 500, channels: 3, background: { r: n * 40, g: 10, b: 10 } } }).jpeg().toBuffer();
    // VOC2007 000001.xml's objects, and a person-layout object with a head part.
    const xml = '<annotation><folder>VOC2007</folder><filename>000001.jpg</filename><size><width>353</width><height>500</height><depth>3</depth></size>'
      + '<object><name>dog</name><pose>Left</pose><truncated>1</truncated><difficult>0</difficult><bndbox><xmin>48</xmin><ymin>240</ymin><xmax>195</xmax><ymax>371</ymax></bndbox></object>'
      + '<object><name>person</name><pose>Unspecified</pose><truncated>0</truncated><difficult>1</difficult><bndbox><xmin>8</xmin><ymin>12</ymin><xmax>352</xmax><ymax>498</ymax></bndbox>'
      + '<part><name>head</name><bndbox><xmin>100</xmin><ymin>20</ymin><xmax>160</xmax><ymax>90</ymax></bndbox></part></object></annotation>';
    const res = await importZip(alice, await buildZip([
      { name: 'Annotations/000001.xml', data: xml },
      { name: 'JPEGImages/000001.jpg', data: await pic(1) },
      { name: 'JPEGImages/000002.jpg', data: await pic(2) },
      { name: 'SegmentationClass/000001.png', data: await sharp({ create: { width: 353, height: 500, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer() },
    ]), { format: 'voc' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assertBalanced(res.body.import);
    assert.equal(res.body.import.skipped_count, 0);
    const { byImage, images } = await annotationsOf(alice, res.body.id);
    assert.deepEqual(images.map((i) => i.original_name).sort(), ['000001.jpg', '000002.jpg'], 'the unlabelled image is kept, the mask is not an image');
    const [dog, person, head] = byImage.get('000001.jpg')!;
    assert.deepEqual(dog.attributes, { pose: 'Left', truncated: true });
    assert.deepEqual(person.attributes, { difficult: true });
    assert.equal(head.class, 'head');
    assert.deepEqual(head.geometry, { x: 100, y: 20, width: 60, height: 70 });
    const groups = ((await alice.get(`/api/images/${images.find((i) => i.original_name === '000001.jpg')!.id}/annotations`)).body as { group_id: number | null }[]).map((a) => a.group_id);
    assert.equal(groups[0], null);
    assert.ok(groups[1] !== null && groups[1] === groups[2], 'the part is in its object\'s group');
  });

  it('shapes-layouts VOC: an image ImageSets lists without an XML is kept unlabelled', async () => {
    const pic = (n: number) => sharp({ create: { width: 20, height: 20, channels: 3, background: { r: n * 40, g: 10, b: 10 } } }).jpeg().toBuffer();
    const xml = '<annotation><filename>a.jpg</filename><size><width>20</width><height>20</height></size><object><name>cat</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>10</xmax><ymax>10</ymax></bndbox></object></annotation>';
    const res = await importZip(alice, await buildZip([
      { name: 'Annotations/a.xml', data: xml },
      { name: 'JPEGImages/a.jpg', data: await pic(1) },
      { name: 'JPEGImages/b.jpg', data: await pic(2) },
      { name: 'ImageSets/Main/train.txt', data: 'a\nb\nc\n' },
    ]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assertBalanced(res.body.import);
    const { byImage, images } = await annotationsOf(alice, res.body.id);
    assert.deepEqual(byImage.get('b.jpg'), []);
    assert.equal(images.find((i) => i.original_name === 'b.jpg')!.split, 'train');
    assert.equal(res.body.import.counts.skipped.images, 1, 'c is listed but has neither an XML nor an image');
  });
});
