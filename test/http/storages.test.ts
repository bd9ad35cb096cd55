/**
 * Project storages over HTTP on the default database (issue 27): validation, the allowlist, and the credentials'
 * secrecy (never answered, sealed in the row). What needs a real bucket is in test/storage/storages-on-s3.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SecretBox } from '../../src/lib/secret-box.js';
import { credentialsContext } from '../../src/modules/storages/storage-buckets.adapter.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const KEY = 'a'.repeat(64);
const SECRET = 'verySecretKey/0123456789+abcdefghijklmnop';
const ACCESS = 'AKIAEXAMPLEKEYWXYZ';
// Nothing listens on port 9 (discard): a connection test fails fast, and nothing here needs a server.
const ENDPOINT = 'http://127.0.0.1:9';

const storage = (over: Record<string, unknown> = {}) => ({
  name: 'photos', endpoint: ENDPOINT, bucket: 'photos', prefix: 'cams/2024', access_key_id: ACCESS, secret_access_key: SECRET, ...over,
});

describe('project storages', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ SECRETS_KEY: KEY, STORAGE_ALLOWLIST: `${ENDPOINT}/` });
  });
  after(() => t?.close());

  it('attaches a bucket without ever answering its secret, and keeps the credentials sealed in the row', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const created = await alice.post(`/api/projects/${projectId}/storages`, storage());
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.access_key_hint, '…WXYZ');
    assert.equal(created.body.prefix, 'cams/2024');
    assert.equal(created.body.purpose, 'source');
    assert.equal(created.body.import_mode, 'reference');
    assert.deepEqual(created.body.counts, { objects: 0, imported: 0, missing: 0 });
    assert.equal(created.body.sync.state, 'never');
    const id = created.body.id as number;
    const answers = [
      created,
      await alice.get(`/api/projects/${projectId}/storages`),
      await alice.get(`/api/projects/${projectId}/storages/${id}`),
      await alice.patch(`/api/projects/${projectId}/storages/${id}`, { name: 'renamed', access_key_id: 'AKIANEWKEY1234', secret_access_key: `${SECRET}-2` }),
    ];
    for (const answer of answers) {
      assert.ok(answer.status < 300, JSON.stringify(answer.body));
      assert.ok(!answer.raw.toString().includes('verySecretKey'), 'the secret is never answered');
      assert.ok(!answer.raw.toString().includes('AKIAEXAMPLE'), 'nor the whole access key id');
    }
    assert.equal(answers[3].body.access_key_hint, '…1234');

    const row = await t.versa.database.db.selectFrom('project_storages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(!row.credentials.includes('verySecretKey') && !row.credentials.includes('AKIA'), 'sealed in the row');
    assert.match(row.credentials, /^v1\./);
    const box = new SecretBox(Buffer.from(KEY, 'hex'));
    assert.deepEqual(JSON.parse(box.open(row.credentials, credentialsContext(projectId))), { accessKeyId: 'AKIANEWKEY1234', secretAccessKey: `${SECRET}-2` });
    assert.throws(() => box.open(row.credentials, credentialsContext(projectId + 1)), 'sealed for its own project only');
  });

  it('refuses endpoints off the allowlist, bad names and prefixes, half a key pair, and duplicate names', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const url = `/api/projects/${projectId}/storages`;
    const offList = await alice.post(url, storage({ endpoint: 'http://169.254.169.254' }));
    assert.equal(offList.status, 422);
    assert.match(JSON.stringify(offList.body.detail), /not on the storage allowlist/);
    for (const bad of [{ bucket: 'Not_A_Bucket' }, { prefix: '../up' }, { prefix: 'a//b' }, { endpoint: 'ftp://127.0.0.1:9' }, { sync_interval_minutes: 1 }, { secret_access_key: '' }]) {
      const res = await alice.post(url, storage(bad));
      assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
    }
    const created = await alice.post(url, storage());
    assert.equal(created.status, 201);
    assert.equal((await alice.post(url, storage())).status, 409);
    const half = await alice.patch(`${url}/${created.body.id}`, { access_key_id: 'AKIAONLYTHEID' });
    assert.equal(half.status, 422);
    const movedOff = await alice.patch(`${url}/${created.body.id}`, { endpoint: 'http://10.0.0.1:9000' });
    assert.equal(movedOff.status, 422);
  });

  it('hides a project\'s storages from others (404), asks a sign-in (401), and keeps viewers from attaching (403)', async () => {
    const alice = await t.user();
    const bob = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const url = `/api/projects/${projectId}/storages`;
    const id = (await alice.post(url, storage())).body.id as number;
    assert.equal((await t.client().get(url)).status, 401);
    assert.equal((await bob.get(url)).status, 404);
    assert.equal((await bob.get(`${url}/${id}`)).status, 404);
    assert.equal((await bob.post(`${url}/${id}/sync`)).status, 404);
    const bobsProject = (await bob.post('/api/projects', { name: 'b' })).body.id as number;
    assert.equal((await bob.get(`/api/projects/${bobsProject}/storages/${id}`)).status, 404, 'a storage of another project');
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { email: bob.email, role: 'viewer' })).status, 201);
    assert.equal((await bob.get(url)).status, 200);
    assert.equal((await bob.post(url, storage({ name: 'mine' }))).status, 403);
    assert.equal((await bob.post(`${url}/${id}/sync`)).status, 403);
  });

  it('tests the connection (ok: false with what failed), syncs only sources, writes only to targets, detaches', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const url = `/api/projects/${projectId}/storages`;
    const source = (await alice.post(url, storage())).body.id as number;
    const target = (await alice.post(url, storage({ name: 'out', purpose: 'target' }))).body.id as number;
    const tested = await alice.post(`${url}/${source}/test`);
    assert.equal(tested.status, 200);
    assert.equal(tested.body.ok, false);
    assert.match(tested.body.detail, /Listing s3:\/\/photos\/cams\/2024 failed/);
    assert.equal((await alice.post(`${url}/${target}/sync`)).status, 409);
    assert.equal((await alice.post(`${url}/${source}/exports`, { format: 'coco' })).status, 409);
    assert.equal((await alice.delete(`${url}/${target}`)).status, 204);
    assert.equal((await alice.get(`${url}/${target}`)).status, 404);
  });
});

describe('project storages without SECRETS_KEY', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ STORAGE_ALLOWLIST: `${ENDPOINT}/` });
  });
  after(() => t?.close());

  it('stores no credentials it cannot encrypt (503)', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const res = await alice.post(`/api/projects/${projectId}/storages`, storage());
    assert.equal(res.status, 503);
    assert.match(res.body.detail, /SECRETS_KEY/);
  });
});
