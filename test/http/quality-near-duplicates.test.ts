/**
 * Issue 30, item 5: near duplicates are copies of one photo, not different photos of one scene. The 64-bit dHash alone
 * put different photos of one scene within its distance (44 of 45 webcam photos of one play mat grouped,
 * bench/near-duplicates.ts); a pair it finds now also needs the 256-bit fine hash to agree.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createProject, uploadImages } from '../helpers/version-fixtures.js';

/** A "play mat" (a smooth pattern) with toy cars (small red blocks) at the given places, as a webcam would see it. */
async function scene(cars: [number, number][]): Promise<Buffer> {
  const width = 640;
  const height = 480;
  const mat = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const v = 90 + Math.round(60 * Math.sin(x / 90) * Math.cos(y / 70));
      mat[i] = v;
      mat[i + 1] = v + 20;
      mat[i + 2] = v - 10;
    }
  }
  const blocks = cars.map(([left, top]) => ({ input: { create: { width: 60, height: 34, channels: 3 as const, background: { r: 200, g: 30, b: 30 } } }, left, top }));
  return sharp(mat, { raw: { width, height, channels: 3 } }).composite(blocks).jpeg({ quality: 90 }).toBuffer();
}

const CARS: [number, number][] = [[60, 60], [300, 200], [500, 380], [150, 350]];
/** The cars moved between shots (each of these is within the 64-bit hash's distance 8 of the first shot). */
const moved = (k: number) => CARS.map(([x, y], i) => [x + ((i + k) % 3) * 45, y + ((i * k) % 2) * 40] as [number, number]);

describe('near duplicates: copies, not photos of one scene', () => {
  let t: TestApp;
  let owner: Client;
  let projectId: number;
  const ids: Record<string, number> = {};
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    projectId = await createProject(owner, 'one play mat');
    const shot = await scene(CARS);
    const files = [
      { name: 'shot.jpg', data: shot },
      { name: 'shot-reencoded.jpg', data: await sharp(shot).jpeg({ quality: 50 }).toBuffer() },
      { name: 'shot-half.jpg', data: await sharp(shot).resize(320).jpeg().toBuffer() },
      ...(await Promise.all([1, 2, 4].map(async (k) => ({ name: `moved-${k}.jpg`, data: await scene(moved(k)) })))),
    ];
    const images = await uploadImages(owner, projectId, files);
    files.forEach((f, i) => (ids[f.name] = images[i].id));
  });
  after(() => t.close());

  const nearDuplicates = async () => {
    const res = await owner.get(`/api/projects/${projectId}/quality?checks=near_duplicates`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.checks.find((c: any) => c.id === 'near_duplicates');
  };

  it('groups the copies of a shot and none of the other shots of the scene', async () => {
    const check = await nearDuplicates();
    // The check flags every member of a group but its first.
    assert.deepEqual(check.image_ids.sort(), [ids['shot-reencoded.jpg'], ids['shot-half.jpg']].sort());
  });

  it('measures the fine hash of images hashed before it existed', async () => {
    const db = t.versa.deps.db;
    await db.updateTable('image_phashes').set({ fine: null }).execute();
    const check = await nearDuplicates();
    assert.deepEqual(check.image_ids.sort(), [ids['shot-reencoded.jpg'], ids['shot-half.jpg']].sort());
    const rows = await db.selectFrom('image_phashes').select('fine').execute();
    assert.equal(rows.length, 6);
    assert.ok(rows.every((r) => typeof r.fine === 'string' && r.fine.length === 64), 'every fine hash measured again');
  });
});
