/**
 * Issue 24, item 10: a version whose generation fails keeps none of its partial output. Before, the failure was
 * cleaned up while the other generation worker went on storing files and writing rows (the drill found them after
 * the version was `failed`), a failed regeneration still reported the earlier run's counts, and a generation killed
 * with its process kept everything it had written until regenerated. Now the rows and files go, the counts are
 * zero and the outputs list is empty, after a failure and after the boot sweep alike. Both databases.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { VersionGenerator } from '../../src/modules/versions/generation.service.js';
import { VersionsRepository } from '../../src/modules/versions/versions.repository.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const RECIPE = { preprocessing_config: { resize: { width: 64, height: 48 } }, augmentation_config: { outputs_per_image: 10, flip_horizontal: true, rotation: 15, apply_to: 'all' } };

describe('a failed version keeps no partial output', () => {
  let t: TestApp;
  let owner: User;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
  });
  after(() => t.close());

  /** A project of `count` annotated images. */
  const project = async (count: number) => {
    const projectId = await createProject(owner, `p${count}`);
    const files = await Promise.all(Array.from({ length: count }, async (_, i) => ({ name: `img${i}.jpg`, data: await smoothImage(100 + i) })));
    const images = await uploadImages(owner, projectId, files);
    const cls = await createClass(owner, projectId, 'cat');
    for (const image of images) await addBox(owner, image.id, cls);
    return { projectId, images };
  };
  /** Loses an image's stored file, as a storage fault would: generation fails on it. */
  const loseFile = async (imageId: number) => {
    const { blob_key } = await t.versa.deps.db.selectFrom('images').select('blob_key').where('id', '=', imageId).executeTakeFirstOrThrow();
    await rm(join(t.dataDir, 'blobs', blob_key));
  };
  const leftovers = async (projectId: number, version: { id: number; number: number }) => {
    const db = t.versa.deps.db;
    const rows = await db.selectFrom('version_images').select('id').where('version_id', '=', version.id).execute();
    const annotations = await db.selectFrom('version_annotations').innerJoin('version_images', 'version_images.id', 'version_annotations.version_image_id')
      .select('version_annotations.id').where('version_images.version_id', '=', version.id).execute();
    const root = join(t.dataDir, 'blobs', 'projects', String(projectId), 'versions', String(version.number));
    const files = existsSync(root) ? (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length : 0;
    return { rows: rows.length, annotations: annotations.length, files };
  };
  const settle = async () => {
    await t.versa.deps.queue.drain();
    // Long enough for a worker that outlived the failure to store its next outputs (the defect this guards).
    await new Promise((resolve) => setTimeout(resolve, 1500));
  };

  it('a generation that fails part-way removes every output row and file, and lists none', async () => {
    const { projectId, images } = await project(12);
    // The second source fails at once while the first worker is still rendering the first.
    await loseFile(images[1].id);
    const created = await owner.post(`/api/projects/${projectId}/versions`, { name: 'doomed', ...RECIPE });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await settle();
    const version = (await owner.get(`/api/projects/${projectId}/versions/${created.body.id}`)).body;
    assert.equal(version.status, 'failed');
    assert.match(version.error, /is gone/);
    assert.deepEqual(version.image_counts, { train: 0, valid: 0, test: 0, total: 0 });
    const listed = await owner.get(`/api/projects/${projectId}/versions/${version.id}/images`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, []);
    assert.deepEqual(await leftovers(projectId, version), { rows: 0, annotations: 0, files: 0 });
  });

  it('a failed regeneration of a ready version reports no outputs and keeps none', async () => {
    const { projectId, images } = await project(3);
    const created = await owner.post(`/api/projects/${projectId}/versions`, { name: 'once good', ...RECIPE });
    await t.versa.deps.queue.drain();
    const ready = (await owner.get(`/api/projects/${projectId}/versions/${created.body.id}`)).body;
    assert.equal(ready.status, 'ready');
    assert.equal(ready.image_counts.total, 30);

    await loseFile(images[2].id);
    assert.equal((await owner.post(`/api/projects/${projectId}/versions/${ready.id}/regenerate`)).status, 202);
    await settle();
    const failed = (await owner.get(`/api/projects/${projectId}/versions`)).body.find((v: { id: number }) => v.id === ready.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.image_counts, { train: 0, valid: 0, test: 0, total: 0 });
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/versions/${ready.id}/images`)).body, []);
    assert.deepEqual(await leftovers(projectId, ready), { rows: 0, annotations: 0, files: 0 });
  });

  it('the boot sweep fails a version left generating by a dead process and removes what it wrote', async () => {
    const { projectId } = await project(2);
    const created = await owner.post(`/api/projects/${projectId}/versions`, { name: 'killed', ...RECIPE });
    await t.versa.deps.queue.drain();
    const version = (await owner.get(`/api/projects/${projectId}/versions/${created.body.id}`)).body;
    assert.ok((await leftovers(projectId, version)).files > 0);
    // What a process killed mid-generation leaves: the version generating, with the outputs written so far.
    await t.versa.deps.db.updateTable('versions').set({ status: 'generating', finished_at: null }).where('id', '=', version.id).execute();

    await new VersionGenerator(new VersionsRepository(t.versa.deps.db), t.versa.deps.blobs).failInterrupted();
    const swept = (await owner.get(`/api/projects/${projectId}/versions/${version.id}`)).body;
    assert.equal(swept.status, 'failed');
    assert.match(swept.error, /interrupted/);
    assert.deepEqual(swept.image_counts, { train: 0, valid: 0, test: 0, total: 0 });
    assert.deepEqual(await leftovers(projectId, version), { rows: 0, annotations: 0, files: 0 });
    assert.equal((await owner.post(`/api/projects/${projectId}/versions/${version.id}/regenerate`)).status, 202);
    await t.versa.deps.queue.drain();
    assert.equal((await owner.get(`/api/projects/${projectId}/versions/${version.id}`)).body.status, 'ready');
  });
});
