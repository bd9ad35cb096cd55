import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

const png = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#357' } }).png().toBuffer();

/** One of everything a CVAT for images 1.1 file may hold that Versa cannot keep, beside shapes it keeps. */
const EVERYTHING = `<?xml version="1.0" encoding="utf-8"?>
<annotations>
  <version>1.1</version>
  <meta><task><labels>
    <label><name>car</name><type>any</type><attributes>
      <attribute><name>colour</name><mutable>False</mutable><input_type>select</input_type><default_value>red</default_value><values>red
blue</values></attribute>
    </attributes></label>
    <label><name>person</name><type>skeleton</type><attributes></attributes><svg></svg></label>
    <label><name>head</name><type>points</type><attributes></attributes><parent>person</parent></label>
    <label><name>hand</name><type>points</type><attributes></attributes><parent>person</parent></label>
  </labels></task></meta>
  <image id="0" name="a.png" width="100" height="50">
    <box label="car" occluded="0" xtl="10" ytl="10" xbr="30" ybr="20" rotation="30" z_order="0">
      <attribute name="colour">blue</attribute>
      <attribute name="speed">fast</attribute>
    </box>
    <cuboid label="car" occluded="0" xtl1="1" ytl1="1" xbl1="1" ybl1="5" xtr1="5" ytr1="1" xbr1="5" ybr1="5" xtl2="2" ytl2="2" xbl2="2" ybl2="6" xtr2="6" ytr2="2" xbr2="6" ybr2="6" z_order="0"/>
    <polyline label="" points="1,1;2,2"/>
    <mask label="car" occluded="0" rle="x, 3" left="0" top="0" width="2" height="2" z_order="0"/>
    <polygon label="car" occluded="0" points="1,1;2,2" z_order="0"/>
    <ellipse label="car" occluded="0" cx="500" cy="500" rx="5" ry="5" z_order="0"/>
    <skeleton label="person" z_order="0">
      <points label="head" occluded="0" outside="0" points="5,5"><attribute name="gaze">left</attribute></points>
      <points label="hand" occluded="1" outside="0" points="8,9"/>
      <points label="tail" occluded="0" outside="0" points="1,1"/>
    </skeleton>
    <polyline label="car" occluded="0" points="1,1;20,20;40,10" z_order="0"/>
    <points label="car" occluded="0" points="3,3;4,4" z_order="0"/>
  </image>
  <image id="1" name="missing.png" width="10" height="10">
    <box label="car" occluded="0" xtl="1" ytl="1" xbr="5" ybr="5" z_order="0"/>
  </image>
  <track id="0" label="car"><box frame="0" xtl="1" ytl="1" xbr="5" ybr="5" outside="0" occluded="0" keyframe="1"/></track>
</annotations>
`;

describe('CVAT import accounting: every item read is kept or listed as skipped, with why', () => {
  let t: TestApp;
  let alice: Client;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('lists each thing it cannot keep: cuboid, unlabelled shape, bad mask, 2-point polygon, ellipse off the image, skeleton point attribute and unknown point, undeclared attribute, missing image and its box, track', async () => {
    const res = await importZip(alice, await buildZip([{ name: 'annotations.xml', data: EVERYTHING }, { name: 'images/a.png', data: await png(100, 50) }]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { counts, skipped, skipped_count } = res.body.import;
    for (const kind of ['images', 'attributes', 'tracks'] as const) assert.equal(counts.read[kind], counts.kept[kind] + counts.skipped[kind], kind);
    for (const type of Object.keys(counts.read.annotations)) {
      assert.equal(counts.read.annotations[type], (counts.kept.annotations[type] ?? 0) + (counts.skipped.annotations[type] ?? 0), type);
    }
    assert.deepEqual(counts.kept.annotations, { bbox: 1, keypoints: 1, polyline: 1, points: 1 });
    assert.deepEqual(counts.skipped.annotations, { cuboid: 1, polyline: 1, mask: 1, polygon: 1, ellipse: 1, 'skeleton point': 1, box: 1 });
    assert.deepEqual([counts.read.images, counts.kept.images, counts.skipped.images], [2, 1, 1]);
    assert.deepEqual([counts.read.tracks, counts.skipped.tracks], [1, 1]);
    assert.deepEqual([counts.kept.attributes, counts.skipped.attributes], [1, 2]);
    assert.equal(skipped_count, skipped.length);
    const reasons = skipped.map((s: { item: string; reason: string }) => `${s.item} — ${s.reason}`).join('\n');
    for (const expected of [
      /cuboid.*Versa has no 3D cuboid shape/,
      /polyline\) — the shape has no label/,
      /mask, label "car".*needs integer left, top, width, height and rle counts/,
      /polygon, label "car".*at least 3 points/,
      /ellipse.*centre lies outside/,
      /attribute "gaze".*not per skeleton point/,
      /label "tail".*declares no point "tail"/,
      /attribute "speed".*declares no such attribute/,
      /image missing\.png — its file is not in the archive/,
      /box \(label "car"\) — its image is not in the archive/,
      /track 0.*CVAT for images 1\.1/,
    ]) assert.match(reasons, expected);
    const images = (await alice.get(`/api/projects/${res.body.id}/images`)).body as { id: number }[];
    const stored = (await alice.get(`/api/images/${images[0].id}/annotations`)).body as { annotation_type: string; geometry: any; attributes: any }[];
    const box = stored.find((a) => a.annotation_type === 'bbox')!;
    assert.equal(box.geometry.rotation, 30);
    assert.deepEqual(box.attributes, { colour: 'blue' });
    assert.deepEqual(stored.find((a) => a.annotation_type === 'keypoints')!.geometry.points, [[5, 5, 2], [8, 9, 1]]);
  });

  it('export → import through the API keeps every shape, attribute and skeleton (the real skeleton export)', async () => {
    const root = `${FIXTURES}cvat-skeleton`;
    const entries = [{ name: 'annotations.xml', data: await readFile(`${root}/annotations.xml`) }];
    for (const f of await readdir(`${root}/images`)) entries.push({ name: `images/${f}`, data: await readFile(`${root}/images/${f}`) });
    const first = await importZip(alice, await buildZip(entries));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const exported = await alice.post(`/api/projects/${first.body.id}/export`, { format: 'cvat' });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const zip = (await alice.get(exported.body.url)).raw as Buffer;
    const second = await importZip(alice, zip);
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body.import.skipped_count, 0, JSON.stringify(second.body.import.skipped));
    const shapes = async (projectId: number) => {
      const classes = new Map(((await alice.get(`/api/projects/${projectId}/classes`)).body as any[]).map((c) => [c.id, c]));
      const images = (await alice.get(`/api/projects/${projectId}/images`)).body as any[];
      const out: unknown[] = [];
      for (const image of images.sort((a, b) => a.original_name.localeCompare(b.original_name))) {
        for (const a of (await alice.get(`/api/images/${image.id}/annotations`)).body as any[]) {
          out.push([image.original_name, classes.get(a.class_id).name, a.annotation_type, a.geometry, a.attributes]);
        }
      }
      // CVAT requires a number's range: an unbounded one is written as [-1e6, 1e6, 1].
      const unbounded = (a: any) => (a.type === 'number' && JSON.stringify(a.values) === '[-1000000,1000000,1]' ? { ...a, values: undefined } : a);
      const specs = [...classes.values()].map((c) => JSON.stringify([c.name, c.skeleton, c.attributes?.map(unbounded)])).sort();
      return { out, specs };
    };
    const before = await shapes(first.body.id);
    const after = await shapes(second.body.id);
    assert.deepEqual(after.out, before.out);
    assert.deepEqual(after.specs, before.specs);
  });
});
