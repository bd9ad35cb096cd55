import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ImageIngest } from '../../src/modules/images/image-ingest.service.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

/**
 * Where the quality features are measured: by the first check that reads them (the default, INGEST_FEATURES=0), or at
 * upload (1, from the pixels the thumbnail is made of). Either way they exist when a check reads them.
 */
describe('quality features of uploaded images', () => {
  const apps: TestApp[] = [];
  after(() => Promise.all(apps.map((t) => t.close())));

  /** Uploads two images; returns whether each probe asked for the fitted pixels, and the first report's count. */
  async function uploadAndReport(env: Record<string, string>) {
    const t = await startTestApp(env);
    apps.push(t);
    const owner = await t.user();
    const ingest: ImageIngest = t.versa.deps.services.ingest;
    const check = ingest.check.bind(ingest);
    const askedForPixels: boolean[] = [];
    ingest.check = (bytes, type, whileEncoding) => {
      askedForPixels.push(whileEncoding !== undefined);
      return check(bytes, type, whileEncoding);
    };
    const projectId = await createProject(owner, 'features');
    await uploadImages(owner, projectId, [{ name: 'a.jpg', data: await smoothImage(1) }, { name: 'b.jpg', data: await smoothImage(2) }]);
    const stored = (await t.versa.deps.db.selectFrom('image_features').select('image_id').execute()).length;
    const report = await owner.get(`/api/projects/${projectId}/quality`);
    assert.equal(report.status, 200);
    return { askedForPixels, stored, computed: report.body.features.computed as number };
  }

  it('by default measured off the request path: the upload makes the thumbnail in one pipeline, the first report measures them', async () => {
    assert.deepEqual(await uploadAndReport({}), { askedForPixels: [false, false], stored: 0, computed: 2 });
    assert.deepEqual(await uploadAndReport({ INGEST_FEATURES: '0' }), { askedForPixels: [false, false], stored: 0, computed: 2 });
  });

  it('measured at upload: the probe hands over the fitted pixels and the first report measures none', async () => {
    assert.deepEqual(await uploadAndReport({ INGEST_FEATURES: '1' }), { askedForPixels: [true, true], stored: 2, computed: 0 });
  });
});
