import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { fixtureEntries } from '../helpers/fixture-entries.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';
import { zipEntries } from '../helpers/zip-entries.js';

type User = Awaited<ReturnType<TestApp['user']>>;
interface Keyframe { frame: number; annotation_type: string; geometry: Record<string, unknown>; outside: boolean; occluded: boolean }
interface Track { id: number; video_id: number; class_id: number; attributes: Record<string, unknown>; keyframes: Keyframe[] }
type Counts = { read: Record<string, unknown>; kept: Record<string, unknown>; skipped: Record<string, unknown> };

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'video-datumaro');

/** Every kind: read = kept + skipped (annotations by type too). */
function assertBalanced(counts: Counts): void {
  for (const kind of ['images', 'attributes', 'tracks'] as const) {
    assert.equal(counts.read[kind], (counts.kept[kind] as number) + (counts.skipped[kind] as number), kind);
  }
  const read = counts.read.annotations as Record<string, number>;
  const kept = counts.kept.annotations as Record<string, number>;
  const skipped = counts.skipped.annotations as Record<string, number>;
  for (const type of Object.keys(read)) assert.equal(read[type], (kept[type] ?? 0) + (skipped[type] ?? 0), type);
}

/** A project's videos, frames and tracks, comparable across projects: tracks by class name, keyframes rounded. */
async function snapshot(user: User, projectId: number) {
  const videos = (await user.get(`/api/projects/${projectId}/videos`)).body as { id: number; frame_count: number; name: string }[];
  const classes = new Map(((await user.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[]).map((c) => [c.id, c.name]));
  const out = [];
  for (const video of videos) {
    const frames = ((await user.get(`/api/projects/${projectId}/images?video_id=${video.id}&limit=1000`)).body as { frame: number }[]).map((f) => f.frame).sort((a, b) => a - b);
    const tracks = ((await user.get(`/api/videos/${video.id}/tracks`)).body as Track[]).map((t) => ({
      class: classes.get(t.class_id),
      attributes: t.attributes,
      keyframes: t.keyframes.map((k) => ({ ...k, geometry: JSON.parse(JSON.stringify(k.geometry), (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)) })),
    }));
    tracks.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    out.push({ frame_count: video.frame_count, frames, tracks });
  }
  return out;
}

async function exportZip(user: User, projectId: number, format: string): Promise<{ body: Record<string, unknown>; entries: Map<string, Buffer> }> {
  const res = await user.post(`/api/projects/${projectId}/export`, { format });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { body: res.body, entries: await zipEntries((await user.get(res.body.url)).raw as Buffer) };
}

const entriesOf = (files: Map<string, Buffer>): ZipEntry[] => [...files].map(([name, data]) => ({ name, data }));

/** A MOT sequence with known identities: a car across all 8 frames (occluded on frame 4), a pedestrian that leaves and comes back, an ignored object. */
async function generatedMot(): Promise<{ entries: ZipEntry[]; rows: string[] }> {
  const rows = [
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((f) => `${f},1,${2 + 4 * f},5,12,8,1,1,${f === 4 ? 0 : 1}`),
    ...[2, 3, 6, 7].map((f) => `${f},2,40,${2 + 2 * f},6,14,1,2,1`),
    ...[1, 2].map((f) => `${f},3,50,30,5,5,0,1,1`),
  ].sort((a, b) => {
    const [fa, ia] = a.split(',').map(Number);
    const [fb, ib] = b.split(',').map(Number);
    return fa - fb || ia - ib;
  });
  const entries: ZipEntry[] = [
    { name: 'seq-a/gt/gt.txt', data: rows.map((r) => `${r}\n`).join('') },
    { name: 'seq-a/gt/labels.txt', data: 'car\npedestrian\n' },
    { name: 'seq-a/seqinfo.ini', data: '[Sequence]\nname=seq-a\nimDir=img1\nframeRate=10\nseqLength=8\nimWidth=64\nimHeight=48\nimExt=.png\n' },
  ];
  for (let f = 1; f <= 8; f++) {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 20 * f, g: 100, b: 255 - 20 * f } } }).png().toBuffer();
    entries.push({ name: `seq-a/img1/${String(f).padStart(6, '0')}.png`, data: png });
  }
  return { entries, rows };
}

/** Issue 26: CVAT for video 1.1 and MOT 1.1 import as videos with tracks and export back; per-frame formats keep track ids. */
describe('video formats: CVAT for video, MOT, image sequences (issue 26)', () => {
  let t: TestApp;
  let alice: User;

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it("imports Datumaro's real CVAT for video export: a video of its frames, its tracks with keyframes, outside and occluded, all accounted for", async () => {
    const zip = await buildZip(await fixtureEntries(join(FIXTURES, 'cvat-for-video')));
    const res = await importZip(alice, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'cvat_video');
    const counts = res.body.import.counts as Counts;
    assertBalanced(counts);
    assert.equal(counts.read.tracks, 4, JSON.stringify(res.body.import));
    assert.equal(counts.kept.tracks, 3, JSON.stringify(res.body.import.skipped));
    // The skeleton's points lie outside the 25×20 frames: its keyframes are skipped with the reason, and so the track.
    const skipped = res.body.import.skipped as { item: string; reason: string }[];
    assert.ok(skipped.some((s) => /skeleton/.test(s.item) && /none of its keyframes/.test(s.reason)), JSON.stringify(skipped));
    // The points track's attribute changes between keyframes: the track keeps the first value, the other is accounted.
    assert.ok(skipped.some((s) => /attribute "hgl"/.test(s.item) && /first keyframe/.test(s.reason)), JSON.stringify(skipped));

    const [video] = await snapshot(alice, res.body.id);
    assert.equal(video.frame_count, 20);
    assert.deepEqual(video.frames, [10, 13]);
    const box = video.tracks.find((tr) => tr.class === 'II' && tr.keyframes[0].annotation_type === 'bbox')!;
    assert.deepEqual(box.keyframes.map((k) => [k.frame, k.outside, k.occluded]), [[10, false, true], [13, true, false], [16, true, false]]);
    assert.deepEqual(box.keyframes[0].geometry, { x: 3, y: 4, width: 7, height: 1 });
    const points = video.tracks.find((tr) => tr.class === 'klhg')!;
    assert.deepEqual(points.attributes, { hgl: 'hgkf' });
    assert.deepEqual(points.keyframes.map((k) => [k.frame, k.outside]), [[10, false], [13, true]]);
    const line = video.tracks.find((tr) => tr.keyframes[0].annotation_type === 'polyline')!;
    assert.deepEqual(line.keyframes.map((k) => [k.frame, k.outside]), [[13, false], [16, true]]);

    // A frame's annotation list shows the track's shape; the frame after the outside keyframe shows none.
    const frames = (await alice.get(`/api/projects/${res.body.id}/images?video_id=${(await alice.get(`/api/projects/${res.body.id}/videos`)).body[0].id}`)).body as { id: number; frame: number }[];
    const on10 = (await alice.get(`/api/images/${frames.find((f) => f.frame === 10)!.id}/annotations`)).body as { track_id?: number }[];
    assert.equal(on10.filter((a) => a.track_id !== undefined).length, 2);
  });

  it('a CVAT for video export round-trips: the same frames, tracks, keyframes, outside and occluded flags', async () => {
    const first = await importZip(alice, await buildZip(await fixtureEntries(join(FIXTURES, 'cvat-for-video'))));
    const before = await snapshot(alice, first.body.id);
    const exported = await exportZip(alice, first.body.id, 'cvat_video');
    assert.ok(exported.entries.has('annotations.xml'), [...exported.entries.keys()].join());
    assert.ok(exported.entries.has('images/frame_000013.png'));
    const xml = exported.entries.get('annotations.xml')!.toString();
    assert.match(xml, /<box frame="10" keyframe="1" outside="0" occluded="1"/);
    const again = await importZip(alice, await buildZip(entriesOf(exported.entries)));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.import.format, 'cvat_video');
    assert.equal(again.body.import.skipped_count, 0, JSON.stringify(again.body.import.skipped));
    assert.deepEqual(await snapshot(alice, again.body.id), before);
  });

  it('a MOT sequence round-trips: gt.txt rows, tracks, keyframes and outside flags equal', async () => {
    const { entries, rows } = await generatedMot();
    const first = await importZip(alice, await buildZip(entries));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.import.format, 'mot');
    assertBalanced(first.body.import.counts);
    assert.equal(first.body.import.skipped_count, 0, JSON.stringify(first.body.import.skipped));
    const before = await snapshot(alice, first.body.id);
    assert.equal(before.length, 1);
    assert.equal(before[0].frame_count, 8);
    assert.deepEqual(before[0].frames, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(before[0].tracks.length, 3);
    const pedestrian = before[0].tracks.find((tr) => tr.class === 'pedestrian')!;
    // Rows on frames 2, 3, 6, 7 (MOT counts from 1): it leaves on the 4th and after the 7th.
    assert.deepEqual(pedestrian.keyframes.map((k) => [k.frame, k.outside]), [[1, false], [2, false], [3, true], [5, false], [6, false], [7, true]]);
    const car = before[0].tracks.find((tr) => tr.class === 'car' && tr.keyframes.length === 8)!;
    assert.deepEqual(car.keyframes.filter((k) => k.occluded).map((k) => k.frame), [3]);
    assert.ok(before[0].tracks.some((tr) => tr.attributes.ignored === true));

    const exported = await exportZip(alice, first.body.id, 'mot');
    assert.deepEqual(exported.entries.get('gt/gt.txt')!.toString().trim().split('\n').map((r) => r.split(',').slice(0, 2).concat(r.split(',').slice(2)).join(',')).length, rows.length);
    assert.match(exported.entries.get('seqinfo.ini')!.toString(), /seqLength=8/);
    assert.equal(exported.entries.get('gt/labels.txt')!.toString(), 'car\npedestrian\n');
    // The exported rows are the original rows, object ids aside (they are the tracks' ids): same boxes per frame.
    const strip = (text: string) => text.trim().split('\n').map((r) => { const c = r.split(','); return [c[0], ...c.slice(2)].join(','); }).sort();
    assert.deepEqual(strip(exported.entries.get('gt/gt.txt')!.toString()), strip(rows.join('\n')));
    const again = await importZip(alice, await buildZip(entriesOf(exported.entries)));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.import.skipped_count, 0, JSON.stringify(again.body.import.skipped));
    assert.deepEqual(await snapshot(alice, again.body.id), before);
  });

  it("imports Datumaro's real MOT sequence: a box with no object id is an annotation of its frame, and exports back as one", async () => {
    const res = await importZip(alice, await buildZip(await fixtureEntries(join(FIXTURES, 'mot-seq'))));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.format, 'mot');
    assertBalanced(res.body.import.counts);
    const [video] = (await alice.get(`/api/projects/${res.body.id}/videos`)).body;
    assert.equal(video.name, 'Test');
    assert.equal(video.fps, 10);
    const [frame] = (await alice.get(`/api/projects/${res.body.id}/images?video_id=${video.id}`)).body;
    assert.equal(frame.frame, 0);
    const annotations = (await alice.get(`/api/images/${frame.id}/annotations`)).body;
    assert.equal(annotations.length, 1);
    assert.deepEqual(annotations[0].geometry, { x: 0, y: 4, width: 4, height: 8 });
    const classes = (await alice.get(`/api/projects/${res.body.id}/classes`)).body as { id: number; name: string }[];
    assert.equal(classes.find((c) => c.id === annotations[0].class_id)!.name, 'label_2');
    const exported = await exportZip(alice, res.body.id, 'mot');
    assert.equal(exported.entries.get('gt/gt.txt')!.toString(), '1,-1,0,4,4,8,1,3,1\n');
  });

  it('per-frame formats keep the track: COCO writes each frame\'s track shapes with track_id and keyframe attributes', async () => {
    const { entries } = await generatedMot();
    const project = await importZip(alice, await buildZip(entries));
    const tracks = (await alice.get(`/api/videos/${(await alice.get(`/api/projects/${project.body.id}/videos`)).body[0].id}/tracks`)).body as Track[];
    const res = await alice.post(`/api/projects/${project.body.id}/export`, { format: 'coco' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const coco = JSON.parse((await alice.get(res.body.url)).raw.toString());
    assert.equal(coco.images.length, 8);
    const byTrack = new Map<number, number>();
    for (const a of coco.annotations) byTrack.set(a.attributes.track_id, (byTrack.get(a.attributes.track_id) ?? 0) + 1);
    assert.deepEqual([...byTrack.keys()].sort((a, b) => a - b), tracks.map((tr) => tr.id).sort((a, b) => a - b));
    // The car on all 8 frames, the pedestrian on the 4 it is in view, the ignored object on 2.
    assert.deepEqual([...byTrack.values()].sort((a, b) => a - b), [2, 4, 8]);
    assert.ok(coco.annotations.every((a: { attributes: { keyframe: boolean } }) => a.attributes.keyframe === true));

    // Imported back, COCO keeps the ids as attribute values of each frame's boxes.
    const zipped = await exportZip(alice, project.body.id, 'coco_zip');
    const again = await importZip(alice, await buildZip(entriesOf(zipped.entries)));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.import.format, 'coco');
    const images = (await alice.get(`/api/projects/${again.body.id}/images?limit=100`)).body as { id: number }[];
    const ids = new Set<unknown>();
    for (const image of images) for (const a of (await alice.get(`/api/images/${image.id}/annotations`)).body) ids.add(a.attributes.track_id);
    assert.deepEqual([...ids].sort(), tracks.map((tr) => tr.id).sort());

    // YOLO labels keep Ultralytics' five columns: each frame's track boxes are its labels (their ids go in tracks/).
    const yolo = await exportZip(alice, project.body.id, 'yolo');
    const lines = [...yolo.entries].filter(([name]) => name.endsWith('.txt') && name.includes('labels/')).flatMap(([, data]) => data.toString().trim().split('\n').filter(Boolean));
    assert.equal(lines.length, 14);
  });

  it('Datumaro keeps the tracks: its export (track_id, keyframe, attr.frame) imports back to the same video and tracks', async () => {
    const { entries } = await generatedMot();
    const first = await importZip(alice, await buildZip(entries));
    const before = await snapshot(alice, first.body.id);
    const exported = await exportZip(alice, first.body.id, 'datumaro');
    const doc = JSON.parse(exported.entries.get('annotations/default.json')!.toString());
    assert.deepEqual(doc.items.map((i: { attr: { frame: number } }) => i.attr.frame).sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.ok(doc.items.every((i: { annotations: { attributes: { track_id: unknown } }[] }) => i.annotations.every((a) => typeof a.attributes.track_id === 'number')));
    const again = await importZip(alice, await buildZip(entriesOf(exported.entries)));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.import.format, 'datumaro');
    assertBalanced(again.body.import.counts);
    assert.equal(again.body.import.skipped_count, 0, JSON.stringify(again.body.import.skipped));
    assert.equal(again.body.import.counts.kept.tracks, 3);
    assert.deepEqual(await snapshot(alice, again.body.id), before);
  });

  it('a MOT sequence imported into an existing project brings its video and tracks, on the project\'s classes', async () => {
    const projectId = (await alice.post('/api/projects', { name: 'into' })).body.id as number;
    const car = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const { entries } = await generatedMot();
    const { payload, headers } = multipart([{ name: 'file', filename: 'seq.zip', data: await buildZip(entries), contentType: 'application/zip' }]);
    const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/import`, payload, headers });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.classes_matched, ['car']);
    const [video] = (await alice.get(`/api/projects/${projectId}/videos`)).body;
    assert.equal(video.frame_count, 8);
    const tracks = (await alice.get(`/api/videos/${video.id}/tracks`)).body as Track[];
    assert.equal(tracks.length, 3);
    assert.ok(tracks.every((tr) => tr.video_id === video.id));
    assert.equal(tracks.filter((tr) => tr.class_id === car).length, 2);
    const frames = (await alice.get(`/api/projects/${projectId}/images?video_id=${video.id}`)).body as { id: number }[];
    assert.equal(frames.length, 8);
  });

  it('imports a folder of ordered frames as one video per folder, numbered by their names (format=image_sequence)', async () => {
    const png = (n: number) => sharp({ create: { width: 8, height: 6, channels: 3, background: { r: n, g: 0, b: 0 } } }).png().toBuffer();
    const zip = await buildZip([
      { name: 'clip/img_2.png', data: await png(2) },
      { name: 'clip/img_10.png', data: await png(10) },
      { name: 'clip/img_1.png', data: await png(1) },
    ]);
    const res = await importZip(alice, zip, { format: 'image_sequence' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const [video] = (await alice.get(`/api/projects/${res.body.id}/videos`)).body;
    assert.equal(video.name, 'clip');
    assert.equal(video.frame_count, 10);
    const frames = (await alice.get(`/api/projects/${res.body.id}/images?video_id=${video.id}`)).body as { frame: number; original_name: string }[];
    assert.deepEqual(frames.map((f) => [f.frame, f.original_name]).sort((a, b) => (a[0] as number) - (b[0] as number)), [[0, 'img_1.png'], [1, 'img_2.png'], [9, 'img_10.png']]);
  });
});
