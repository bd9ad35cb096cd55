import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';
import { zipEntries } from '../helpers/zip-entries.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Box = { x: number; y: number; width: number; height: number };
interface Keyframe { frame: number; annotation_type: string; geometry: Box; outside: boolean; occluded: boolean }
interface Track { id: number; class_id: number; attributes: Record<string, unknown>; keyframes: Keyframe[] }
interface Shape { class_name: string; annotation_type: string; geometry: Box; attributes: Record<string, unknown> }

/** Every box coordinate within 0.5 px. */
function near(actual: Box, expected: Box, what: string): void {
  for (const key of ['x', 'y', 'width', 'height'] as const) assert.ok(Math.abs(actual[key] - expected[key]) <= 0.5, `${what}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`);
}

/** The source boxes ×2: the version resizes the 64×48 frames to 128×96. */
const scaled = (b: Box): Box => ({ x: 2 * b.x, y: 2 * b.y, width: 2 * b.width, height: 2 * b.height });
const FIRST = { x: 4, y: 6, width: 10, height: 8 };
const LAST = { x: 24, y: 14, width: 14, height: 12 };
const MIDDLE = { x: 14, y: 10, width: 12, height: 10 };

/** Issue 26: a dataset version freezes each frame's track shapes, and its video exports write them back as tracks. */
describe('versions of tracked videos (issue 26)', () => {
  let t: TestApp;
  let alice: User;
  let projectId: number;
  let trackId: number;
  /** The project's frames: image id → frame number. */
  let frameOf: Map<number, number>;

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    const frames = await Promise.all([...Array(8).keys()].map(async (f) => ({
      name: `clip/frame_${String(f).padStart(6, '0')}.png`,
      data: await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 30 * f, g: 90, b: 200 - 20 * f } } }).png().toBuffer(),
    })));
    const res = await importZip(alice, await buildZip(frames), { format: 'image_sequence' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    projectId = res.body.id;
    const [video] = (await alice.get(`/api/projects/${projectId}/videos`)).body;
    const car = await alice.post(`/api/projects/${projectId}/classes`, { name: 'car', attributes: [{ name: 'colour', type: 'select', values: ['red', 'blue'] }] });
    assert.equal(car.status, 201, JSON.stringify(car.body));
    // Two keyframes four frames apart, occluded on the second, and an outside keyframe after it.
    const track = await alice.post(`/api/videos/${video.id}/tracks`, {
      class_id: car.body.id,
      attributes: { colour: 'red' },
      keyframes: [
        { frame: 1, annotation_type: 'bbox', geometry: FIRST },
        { frame: 5, annotation_type: 'bbox', geometry: LAST, occluded: true },
        { frame: 6, annotation_type: 'bbox', geometry: LAST, outside: true },
      ],
    });
    assert.equal(track.status, 201, JSON.stringify(track.body));
    trackId = track.body.id;
    const images = (await alice.get(`/api/projects/${projectId}/images?limit=100`)).body as { id: number; frame: number }[];
    frameOf = new Map(images.map((i) => [i.id, i.frame]));
  });
  after(() => t.close());

  async function version(name: string): Promise<number> {
    const res = await alice.post(`/api/projects/${projectId}/versions`, { name, seed: 3, preprocessing_config: { resize: { enabled: true, width: 128, height: 96 } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    assert.equal((await alice.get(`/api/projects/${projectId}/versions/${res.body.id}`)).body.status, 'ready');
    return res.body.id;
  }

  /** A version's output annotations by frame number. */
  async function shapesByFrame(versionId: number): Promise<Map<number, Shape[]>> {
    const res = await alice.get(`/api/projects/${projectId}/versions/${versionId}/images?limit=100`);
    assert.equal(res.status, 200);
    return new Map((res.body as { source_image_id: number; annotations: Shape[] }[]).map((i) => [frameOf.get(i.source_image_id)!, i.annotations]));
  }

  async function exportVersion(versionId: number, format: string): Promise<Map<string, Buffer>> {
    const res = await alice.post(`/api/projects/${projectId}/export`, { format, version_id: versionId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return zipEntries((await alice.get(res.body.url)).raw as Buffer);
  }

  /** The one track of the one video of a project imported from `entries`. */
  async function reimported(entries: Map<string, Buffer>): Promise<Track> {
    const res = await importZip(alice, await buildZip([...entries].map(([name, data]) => ({ name, data }))));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.skipped_count, 0, JSON.stringify(res.body.import.skipped));
    const [video] = (await alice.get(`/api/projects/${res.body.id}/videos`)).body;
    assert.equal(video.frame_count, 8);
    const tracks = (await alice.get(`/api/videos/${video.id}/tracks`)).body as Track[];
    assert.equal(tracks.length, 1, JSON.stringify(tracks));
    return tracks[0];
  }

  it('holds every frame\'s track box (keyframes, the interpolated middle exactly, none from the outside keyframe), and keeps it after the track is edited', async () => {
    const v1 = await version('v1');
    const before = await shapesByFrame(v1);
    assert.equal(before.size, 8);
    for (const frame of [0, 6, 7]) assert.deepEqual(before.get(frame), [], `frame ${frame}`);
    const on = (frame: number) => {
      const shapes = before.get(frame)!;
      assert.equal(shapes.length, 1, `frame ${frame}`);
      assert.equal(shapes[0].class_name, 'car');
      assert.equal(shapes[0].attributes.track_id, trackId);
      assert.equal(shapes[0].attributes.colour, 'red');
      return shapes[0];
    };
    assert.deepEqual(on(1).geometry, scaled(FIRST));
    assert.equal(on(1).attributes.keyframe, true);
    assert.deepEqual(on(3).geometry, scaled(MIDDLE));
    assert.equal(on(3).attributes.keyframe, false);
    assert.deepEqual(on(5).geometry, scaled(LAST));
    assert.deepEqual(on(5).attributes, { colour: 'red', track_id: trackId, keyframe: true, occluded: true });

    // The recipe preview of a frame shows its track box, as generation renders it.
    const frame3 = [...frameOf].find(([, f]) => f === 3)![0];
    const preview = await alice.post(`/api/projects/${projectId}/versions/preview`, { image_id: frame3, limit: 1, preprocessing_config: { resize: { enabled: true, width: 128, height: 96 } } });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(preview.body.outputs[0].annotations.map((a: Shape) => a.geometry), [scaled(MIDDLE)]);

    // The track moves, loses its outside keyframe and changes colour: the version, regenerated too, does not change.
    const edit = await alice.patch(`/api/tracks/${trackId}`, { attributes: { colour: 'blue' }, keyframes: [{ frame: 3, annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 5, height: 5 } }], delete_frames: [6] });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.deepEqual(await shapesByFrame(v1), before);
    assert.equal((await alice.post(`/api/projects/${projectId}/versions/${v1}/regenerate`)).status, 202);
    await t.versa.deps.queue.drain();
    assert.deepEqual(await shapesByFrame(v1), before);

    // A version made after the edit holds the track as it is now, and the diff counts the moved boxes.
    const v2 = await version('v2');
    assert.deepEqual((await shapesByFrame(v2)).get(3)![0].geometry, scaled({ x: 0, y: 0, width: 5, height: 5 }));
    const diff = await alice.get(`/api/projects/${projectId}/versions/${v1}/diff/${v2}`);
    assert.equal(diff.status, 200);
    assert.ok(diff.body.annotations.added >= 6 && diff.body.annotations.removed >= 5, JSON.stringify(diff.body.annotations));
    assert.deepEqual(diff.body.images.added, []);

    // Put the track back for the next tests.
    await alice.patch(`/api/tracks/${trackId}`, { attributes: { colour: 'red' }, keyframes: [{ frame: 6, annotation_type: 'bbox', geometry: LAST, outside: true }], delete_frames: [3] });
  });

  it('exports as CVAT for video and Datumaro with the track\'s keyframes and outside flag, which import back as the same track', async () => {
    const v = await version('cvat');
    await alice.patch(`/api/tracks/${trackId}`, { keyframes: [{ frame: 2, annotation_type: 'bbox', geometry: { x: 40, y: 30, width: 4, height: 4 } }] });
    const cvat = await exportVersion(v, 'cvat_video');
    assert.ok(cvat.has('images/frame_000007.jpg'), [...cvat.keys()].join());
    assert.match(cvat.get('annotations.xml')!.toString(), /<track id="0" label="car"/);
    for (const entries of [cvat, await exportVersion(v, 'datumaro')]) {
      const track = await reimported(entries);
      assert.deepEqual(track.attributes, { colour: 'red' });
      assert.deepEqual(track.keyframes.map((k) => [k.frame, k.outside, k.occluded]), [[1, false, false], [5, false, true], [6, true, false]]);
      near(track.keyframes[0].geometry, scaled(FIRST), 'frame 1');
      near(track.keyframes[1].geometry, scaled(LAST), 'frame 5');
    }
    await alice.patch(`/api/tracks/${trackId}`, { delete_frames: [2] });
  });

  it('augmented copies of a frame are images that keep the track id, not frames of the video', async () => {
    const res = await alice.post(`/api/projects/${projectId}/versions`, {
      name: 'augmented', seed: 3, split_config: { train: 100, valid: 0, test: 0 }, augmentation_config: { enabled: true, outputs_per_image: 2, brightness: 10 },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    const exported = await alice.post(`/api/projects/${projectId}/export`, { format: 'cvat_video', version_id: res.body.id });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    // The copies are no frames of the video: each copy, and each shape on it, is counted as left out (issue 25).
    assert.deepEqual(exported.body.shapes_skipped, { 'image (not a video frame)': 16, 'bbox (not on a video frame)': 10 });
    const coco = await alice.post(`/api/projects/${projectId}/export`, { format: 'coco', version_id: res.body.id });
    const json = JSON.parse((await alice.get(coco.body.url)).raw.toString());
    assert.equal(json.annotations.filter((a: { attributes: { track_id: number } }) => a.attributes.track_id === trackId).length, 10);
  });

  it('exports as MOT with the track id on every frame it is visible on, which imports back as the same track', async () => {
    const v = await version('mot');
    const entries = await exportVersion(v, 'mot');
    const rows = entries.get('gt/gt.txt')!.toString().trim().split('\n');
    assert.deepEqual(rows.map((r) => r.split(',').slice(0, 2).map(Number)), [2, 3, 4, 5, 6].map((f) => [f, trackId]));
    const track = await reimported(entries);
    assert.deepEqual(track.keyframes.map((k) => [k.frame, k.outside, k.occluded]), [[1, false, false], [2, false, false], [3, false, false], [4, false, false], [5, false, true], [6, true, false]]);
    near(track.keyframes[0].geometry, scaled(FIRST), 'frame 1');
    near(track.keyframes[2].geometry, scaled(MIDDLE), 'frame 3');
    near(track.keyframes[4].geometry, scaled(LAST), 'frame 5');
  });

  it('per-frame exports keep the track id: COCO as an attribute, YOLO in tracks/ beside labels/, both read back', async () => {
    const v = await version('frames');
    const coco = await exportVersion(v, 'coco_zip');
    const json = JSON.parse([...coco].find(([name]) => name.endsWith('.json'))![1].toString());
    assert.deepEqual(json.annotations.map((a: { attributes: { track_id: number } }) => a.attributes.track_id), [trackId, trackId, trackId, trackId, trackId]);

    const yolo = await exportVersion(v, 'yolo');
    const sidecars = [...yolo].filter(([name]) => name.includes('/tracks/'));
    assert.equal(sidecars.length, 5, [...yolo.keys()].join());
    for (const [name, data] of sidecars) {
      assert.equal(data.toString(), `${trackId}\n`);
      assert.equal(yolo.get(name.replace('/tracks/', '/labels/'))!.toString().trim().split(' ').length, 5, 'Ultralytics\' five columns');
    }
    const again = await importZip(alice, await buildZip([...yolo].map(([name, data]) => ({ name, data }))));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.import.format, 'yolo');
    assert.equal(again.body.import.skipped_count, 0, JSON.stringify(again.body.import.skipped));
    const ids: unknown[] = [];
    for (const image of (await alice.get(`/api/projects/${again.body.id}/images?limit=100`)).body) {
      for (const a of (await alice.get(`/api/images/${image.id}/annotations`)).body) ids.push(a.attributes.track_id);
    }
    assert.deepEqual(ids, [trackId, trackId, trackId, trackId, trackId]);
  });
});
