/**
 * Drills: a real server process is killed with SIGKILL in the middle of an import, an upload, a version
 * generation and an export, then started again on the same data. Afterwards counters agree with rows, no half project is visible,
 * interrupted jobs are failed (and can be run again), and the temporary area and orphan blobs are swept.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { eventually, serverProcess, type ServerProcess } from '../helpers/server-process.js';
import { buildZip } from '../helpers/zip-build.js';

async function noise(i: number, width = 320, height = 240): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: i % 256, g: (i * 7) % 256, b: 90 }, noise: { type: 'gaussian', mean: 100, sigma: 40 } } })
    .jpeg({ quality: 85 })
    .toBuffer();
}

async function post(server: ServerProcess, path: string, body: { payload: Buffer; headers: Record<string, string> }, token: string): Promise<number> {
  const res = await fetch(server.url + path, { method: 'POST', headers: { ...body.headers, authorization: `Bearer ${token}` }, body: new Uint8Array(body.payload) });
  await res.arrayBuffer();
  return res.status;
}

/** Counters of every project against its rows, straight from the database. */
async function assertCountersMatchRows(server: ServerProcess): Promise<void> {
  const drift = await server.count(`select count(*) from projects p where
    p.image_count <> (select count(*) from images i where i.project_id = p.id)
    or p.annotation_count <> (select count(*) from annotations a where a.project_id = p.id)
    or p.class_count <> (select count(*) from classes c where c.project_id = p.id)
    or p.annotated_image_count <> (select count(*) from images i where i.project_id = p.id and i.annotation_count > 0)`);
  assert.equal(drift, 0, 'every project counter equals its rows');
  const imageDrift = await server.count('select count(*) from images i where i.annotation_count <> (select count(*) from annotations a where a.image_id = i.id)');
  assert.equal(imageDrift, 0, 'every image annotation_count equals its rows');
}

describe('kill -9 drills', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  let token: string;
  before(async () => {
    server = await serverProcess({ IMPORT_STALE_SECONDS: '1' });
    token = await server.login('drill@example.com');
  });
  after(async () => {
    await server?.dispose();
  });

  /** Kills the server, waits past the stale threshold, starts it again and logs in again. */
  async function restart(): Promise<void> {
    await server.kill();
    await new Promise((r) => setTimeout(r, 1200));
    await server.start();
    token = await server.login('drill@example.com');
  }

  it('during an import: no project, no rows, no files, no temporary files once restarted', async () => {
    const images = await Promise.all(Array.from({ length: 240 }, (_, i) => noise(i)));
    const coco = {
      categories: [{ id: 1, name: 'thing' }],
      images: images.map((_, i) => ({ id: i + 1, file_name: `img_${i}.jpg`, width: 320, height: 240 })),
      annotations: Array.from({ length: 60_000 }, (_, k) => ({ id: k + 1, image_id: (k % images.length) + 1, category_id: 1, bbox: [k % 200, 10, 30, 40] })),
    };
    const zip = await buildZip([{ name: 'annotations.json', data: JSON.stringify(coco) }, ...images.map((data, i) => ({ name: `images/img_${i}.jpg`, data, compress: false }))]);
    let answered = false;
    const request = post(server, '/api/projects/import', multipart([{ name: 'file', filename: 'big.zip', data: zip }]), token)
      .then(() => (answered = true))
      .catch(() => undefined);
    // Killed once the import has stored part of the images (rows and blobs are being written).
    await eventually(async () => (await server.files('blobs/projects')).filter((f) => f.includes('/images/')).length >= 20, 60_000, 'images being stored');
    assert.equal(answered, false, 'the import was still running when killed');
    await server.kill();
    await request;
    assert.ok((await server.count('select count(*) from projects')) >= 1, 'the killed import left its (hidden) project row');

    await restart();
    assert.equal(await server.count('select count(*) from projects'), 0);
    assert.equal(await server.count('select count(*) from images'), 0);
    assert.equal(await server.count('select count(*) from annotations'), 0);
    assert.equal(await server.count('select count(*) from classes'), 0);
    const listed = await server.api('GET', '/api/projects', undefined, token);
    assert.deepEqual(listed.body, []);
    const stats = await server.api('GET', '/api/stats', undefined, token);
    assert.equal(stats.body.total_images, 0);
    await eventually(async () => (await server.files('blobs/projects')).length === 0, 15_000, 'orphan blobs swept');
    await eventually(async () => (await server.files('tmp')).length === 0, 15_000, 'temporary files swept');
  });

  it('during an upload: counters equal rows, X-Total-Count equals the rows listed, orphan blobs swept', async () => {
    const project = await server.api('POST', '/api/projects', { name: 'upload drill' }, token);
    assert.equal(project.status, 201);
    const files = await Promise.all(Array.from({ length: 120 }, (_, i) => noise(1000 + i, 640, 480)));
    const requests: Promise<unknown>[] = [];
    for (let i = 0; i < files.length; i += 10) {
      const body = multipart(files.slice(i, i + 10).map((data, k) => ({ filename: `u_${i + k}.jpg`, data, contentType: 'image/jpeg' })));
      requests.push(post(server, `/api/projects/${project.body.id}/images`, body, token).catch(() => undefined));
    }
    await eventually(async () => (await server.files(`blobs/projects/${project.body.id}/images`)).length >= 10, 60_000, 'uploads being stored');
    await server.kill();
    await Promise.all(requests);

    await restart();
    await assertCountersMatchRows(server);
    const got = await server.api('GET', `/api/projects/${project.body.id}`, undefined, token);
    const list = await server.api('GET', `/api/projects/${project.body.id}/images?limit=500`, undefined, token);
    assert.equal(Number(list.headers.get('x-total-count')), got.body.image_count);
    assert.equal(list.body.length, got.body.image_count);
    const rows = await server.count(`select count(*) from images where project_id = ${project.body.id}`);
    assert.ok(rows < files.length, 'the kill interrupted the uploads');
    // Every stored image file has its row, once the sweep has run (files written just before the kill included).
    await eventually(async () => (await server.files(`blobs/projects/${project.body.id}/images`)).length === rows, 15_000, 'orphan image blobs swept');
    await eventually(async () => (await server.files(`blobs/projects/${project.body.id}/thumbs`)).length === rows, 15_000, 'orphan thumbnails swept');
    assert.deepEqual((await server.files('blobs')).filter((f) => f.endsWith('.tmp')), []);
  });

  it('during a version generation: the version and its job end failed, and a regeneration completes', async () => {
    const project = await server.api('POST', '/api/projects', { name: 'version drill' }, token);
    const projectId = project.body.id;
    const images = await Promise.all(Array.from({ length: 16 }, (_, i) => noise(2000 + i, 800, 600)));
    const uploaded = await post(server, `/api/projects/${projectId}/images`, multipart(images.map((data, i) => ({ filename: `v_${i}.jpg`, data, contentType: 'image/jpeg' }))), token);
    assert.equal(uploaded, 201);
    const created = await server.api('POST', `/api/projects/${projectId}/versions`, { name: 'drill', augmentation_config: { blur: 20, outputs_per_image: 10, apply_to: 'all' } }, token);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const versionId = created.body.id;
    await eventually(async () => {
      const state = await server.api('GET', `/api/projects/${projectId}/versions/${versionId}`, undefined, token);
      assert.ok(state.body.status === 'pending' || state.body.status === 'generating', JSON.stringify(state.body));
      return (await server.files(`blobs/projects/${projectId}/versions`)).length >= 3;
    }, 60_000, 'outputs being written');
    await server.kill();

    await restart();
    const failed = await server.api('GET', `/api/projects/${projectId}/versions/${versionId}`, undefined, token);
    assert.equal(failed.body.status, 'failed');
    assert.equal(await server.count(`select count(*) from jobs where status in ('queued', 'running')`), 0);
    // The boot sweep removed what the killed generation had written (issue 24, item 10).
    assert.equal(await server.count(`select count(*) from version_images where version_id = ${versionId}`), 0);
    assert.deepEqual(await server.files(`blobs/projects/${projectId}/versions`), []);
    const again = await server.api('POST', `/api/projects/${projectId}/versions/${versionId}/regenerate`, undefined, token);
    assert.equal(again.status, 202, JSON.stringify(again.body));
    // A second regeneration while the first runs is refused: one generation per version at a time.
    const twice = await server.api('POST', `/api/projects/${projectId}/versions/${versionId}/regenerate`, undefined, token);
    assert.equal(twice.status, 409);
    await eventually(async () => (await server.api('GET', `/api/projects/${projectId}/versions/${versionId}`, undefined, token)).body.status === 'ready', 120_000, 'regeneration');
    const outputs = await server.count(`select count(*) from version_images where version_id = ${versionId}`);
    const version = await server.api('GET', `/api/projects/${projectId}/versions/${versionId}`, undefined, token);
    const number = version.body.number;
    assert.equal((await server.files(`blobs/projects/${projectId}/versions/${number}`)).length, outputs, 'one file per output row');
  });

  it('during an export: no export row, the partial archive swept, and a new export completes', async () => {
    const project = await server.api('POST', '/api/projects', { name: 'export drill' }, token);
    const projectId = project.body.id;
    // Large, noisy images make an archive that takes long enough to write to be caught half-way.
    for (let batch = 0; batch < 6; batch++) {
      const images = await Promise.all(Array.from({ length: 10 }, (_, i) => noise(3000 + batch * 10 + i, 1600, 1200)));
      assert.equal(await post(server, `/api/projects/${projectId}/images`, multipart(images.map((data, i) => ({ filename: `e_${batch}_${i}.jpg`, data, contentType: 'image/jpeg' }))), token), 201);
    }
    const exportsDir = `blobs/projects/${projectId}/exports`;
    let answer: unknown = null;
    const request = server.api('POST', `/api/projects/${projectId}/export`, { format: 'yolo' }, token).then((r) => (answer = r), () => undefined);
    // The archive is written at disk speed: watch its folder closely and kill as soon as the temporary file shows.
    const deadline = Date.now() + 60_000;
    while (!(await readdir(join(server.dataDir, exportsDir)).catch(() => [] as string[])).some((f) => f.endsWith('.tmp'))) {
      assert.equal(answer, null, 'the export was still being written when polled');
      assert.ok(Date.now() < deadline, 'timed out waiting for the archive being written');
      await new Promise((r) => setTimeout(r, 2));
    }
    await server.kill();
    await request;

    await restart();
    assert.equal(await server.count(`select count(*) from exports where project_id = ${projectId}`), 0);
    await eventually(async () => (await server.files(exportsDir).catch(() => [])).length === 0, 15_000, 'partial archive swept');
    const done = await server.api('POST', `/api/projects/${projectId}/export`, { format: 'yolo' }, token);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.image_count, 60);
    assert.deepEqual((await server.files(exportsDir)).filter((f) => f.endsWith('.tmp')), []);
    await assertCountersMatchRows(server);
  });
});
