import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { importZip } from '../helpers/dataset-import.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { uploadImages } from '../helpers/version-fixtures.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;

/** A 16×12 PNG of seeded noise: no two alike, not even near-duplicates (the grouped split's dHash tells them apart). */
function noise(seed: number): Promise<Buffer> {
  let state = seed * 2654435761 + 1;
  const pixels = Buffer.alloc(16 * 12 * 3);
  for (let i = 0; i < pixels.length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    pixels[i] = state >> 23;
  }
  return sharp(pixels, { raw: { width: 16, height: 12, channels: 3 } }).png().toBuffer();
}

/** Distinct little frames: 5 videos of 8 frames each (every frame its own bytes). */
async function sequences(): Promise<ZipEntry[]> {
  const entries: ZipEntry[] = [];
  for (let v = 0; v < 5; v++) {
    for (let f = 0; f < 8; f++) {
      const data = await noise(v * 100 + f);
      entries.push({ name: `clips/video${v}/frame_${String(f).padStart(6, '0')}.png`, data });
    }
  }
  return entries;
}

/** Issue 26: no split separates a video's frames (splits of every strategy, and the splits a version deals). */
describe('splits keep all frames of one video together (issue 26)', () => {
  let t: TestApp;
  let alice: User;

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  /** A project of 5 videos (40 frames) and 12 plain images; answers its frames' video by image id. */
  async function project(): Promise<{ id: number; videoOf: Map<number, number> }> {
    const res = await importZip(alice, await buildZip(await sequences()), { format: 'image_sequence' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const id = res.body.id as number;
    const plain = await Promise.all([...Array(12).keys()].map(async (i) => ({
      name: `still-${i}.png`,
      data: await noise(1000 + i),
    })));
    await uploadImages(alice, id, plain);
    const images = (await alice.get(`/api/projects/${id}/images?limit=1000`)).body as { id: number; video_id: number | null }[];
    assert.equal(images.length, 52);
    return { id, videoOf: new Map(images.filter((i) => i.video_id !== null).map((i) => [i.id, i.video_id!])) };
  }

  /** The splits each video's frames are in. */
  function splitsPerVideo(splitOf: Map<number, string>, videoOf: Map<number, number>): Map<number, Set<string>> {
    const out = new Map<number, Set<string>>();
    for (const [image, video] of videoOf) out.set(video, (out.get(video) ?? new Set()).add(splitOf.get(image)!));
    return out;
  }

  for (const strategy of ['random', 'stratified', 'grouped']) {
    it(`a ${strategy} split puts every frame of a video in the same split, for any seed`, async () => {
      const { id, videoOf } = await project();
      const used = new Set<string>();
      for (const seed of [1, 2, 3, 4, 5]) {
        const res = await alice.post(`/api/projects/${id}/splits?train=60&valid=20&test=20&strategy=${strategy}&seed=${seed}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const images = (await alice.get(`/api/projects/${id}/images?limit=1000`)).body as { id: number; split: string }[];
        const splitOf = new Map(images.map((i) => [i.id, i.split]));
        for (const [video, splits] of splitsPerVideo(splitOf, videoOf)) assert.equal(splits.size, 1, `video ${video} in ${[...splits].join(', ')} (seed ${seed})`);
        for (const split of splitOf.values()) used.add(split);
      }
      // Still a split: the videos and the other images spread over train, valid and test.
      assert.deepEqual([...used].sort(), ['test', 'train', 'valid']);
    });
  }

  it('a version deals the frames of videos with no split as units, and gathers a video split across splits into one', async () => {
    const { id, videoOf } = await project();
    // One frame of a video put in test by hand, two in valid: the version puts the whole video in valid.
    const [videoA] = [...new Set(videoOf.values())];
    const framesA = [...videoOf].filter(([, v]) => v === videoA).map(([image]) => image);
    for (const [i, split] of [[0, 'test'], [1, 'valid'], [2, 'valid']] as const) {
      assert.equal((await alice.request({ method: 'PATCH', url: `/api/images/${framesA[i]}`, payload: { split } })).status, 200);
    }
    const version = await alice.post(`/api/projects/${id}/versions`, { name: 'v1', split_config: { train: 60, valid: 20, test: 20 }, seed: 11 });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const outputs = (await alice.get(`/api/projects/${id}/versions/${version.body.id}/images?limit=1000`)).body as { split: string; source_image_id: number }[];
    assert.equal(outputs.length, 52);
    const splitOf = new Map(outputs.map((o) => [o.source_image_id, o.split]));
    const perVideo = splitsPerVideo(splitOf, videoOf);
    for (const [video, splits] of perVideo) assert.equal(splits.size, 1, `video ${video} in ${[...splits].join(', ')}`);
    assert.deepEqual([...perVideo.get(videoA)!], ['valid']);
  });
});
