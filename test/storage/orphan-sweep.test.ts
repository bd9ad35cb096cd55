/**
 * The orphan sweep lists stored files through the BlobStore, so it works on whichever store runs (issue 27): here on
 * the local folder always, and on the bucket under `npm run test:s3`. A process whose DATA_DIR is empty still sweeps
 * what other processes wrote to the shared store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { MaintenanceRepository } from '../../src/modules/maintenance/maintenance.repository.js';
import { MaintenanceService } from '../../src/modules/maintenance/maintenance.service.js';
import { TemporaryFiles } from '../../src/modules/maintenance/temporary-files.adapter.js';
import { multipart } from '../helpers/multipart.js';
import type { TestApp } from '../helpers/test-app.js';
import { s3Env, s3Skip, s3TestBucket, type TestBucket } from './s3-env.js';

async function keysOf(t: TestApp): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of t.versa.deps.blobs.list('projects')) keys.push(blob.key);
  return keys.sort();
}

for (const store of ['local', 's3'] as const) {
  describe(`the orphan sweep on the ${store} store`, { skip: store === 's3' ? s3Skip : false }, () => {
    let t: TestApp;
    let bucket: TestBucket | undefined;
    before(async () => {
      const env = store === 's3' ? s3Env() : {};
      if (store === 's3') bucket = await s3TestBucket(env);
      t = await (await import('../helpers/test-app.js')).startTestApp(env);
    });
    after(async () => {
      await t?.close();
      await bucket?.empty();
    });

    it('removes files no row refers to, versions and projects that are gone; keeps what rows use', async () => {
      const alice = await t.user();
      const projectId = (await alice.post('/api/projects', { name: 'swept' })).body.id as number;
      const data = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 9, g: 90, b: 200 } } }).jpeg().toBuffer();
      const { payload, headers } = multipart([{ filename: 'kept.jpg', data, contentType: 'image/jpeg' }]);
      const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers });
      assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
      const kept = await keysOf(t);
      assert.equal(kept.length, 2, kept.join(', '));

      // What a killed process leaves: an image whose row never committed, an export, a model, the files of a version
      // whose row is gone, and a whole project that no longer exists; and a file outside the swept folders.
      const blobs = t.versa.deps.blobs;
      const orphans = [
        `projects/${projectId}/images/${'0'.repeat(64)}.jpg`,
        `projects/${projectId}/thumbs/${'0'.repeat(64)}.webp`,
        `projects/${projectId}/exports/lost.zip`,
        `projects/${projectId}/models/${'1'.repeat(64)}-abcdef012345.onnx`,
        `projects/${projectId}/versions/77/train/a.jpg`,
        `projects/${projectId}/versions/77/data.yaml`,
        'projects/987654/images/x.jpg',
      ];
      for (const key of orphans) await blobs.put(key, Buffer.from(key));
      const unknown = `projects/${projectId}/notes/keep.txt`;
      await blobs.put(unknown, Buffer.from('not the sweep\'s'));

      const sweep = () => new MaintenanceService(new MaintenanceRepository(t.versa.deps.db), blobs, new TemporaryFiles(`${t.dataDir}/tmp`), 0).sweep();
      // Files written a moment ago are in their grace period (another process may be about to commit their row).
      const fresh = await new MaintenanceService(new MaintenanceRepository(t.versa.deps.db), blobs, new TemporaryFiles(`${t.dataDir}/tmp`), 3600).sweep();
      assert.equal(fresh.orphans, 2, 'only the gone version and project go at once');
      assert.deepEqual((await keysOf(t)).filter((k) => k.includes('/versions/') || k.startsWith('projects/987654/')), []);

      // S3 keeps LastModified to the second: the grace period of 0 must see them as older than now.
      await new Promise((resolve) => setTimeout(resolve, store === 's3' ? 1100 : 20));
      const report = await sweep();
      assert.equal(report.orphans, 4);
      assert.deepEqual(await keysOf(t), [...kept, unknown].sort());
      // Idempotent: nothing left to take.
      assert.equal((await sweep()).orphans, 0);
      const file = await alice.get(`/api/images/${uploaded.body.images[0].id}/thumbnail`);
      assert.equal(file.status, 200);
    });
  });
}
