import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { readDatasetZip } from '../../src/formats/readers/index.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

const exec = promisify(execFile);
const CLI = new URL('../../src/cli/versa.ts', import.meta.url).pathname;
const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

describe('the versa command-line tool against a live server', () => {
  let t: TestApp;
  let work: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    work = await mkdtemp(join(tmpdir(), 'versa-cli-'));
    env = { ...process.env, VERSA_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, VERSA_CONFIG: join(work, 'credentials.json'), VERSA_TOKEN: '' };
    const registered = await t.client().post('/api/auth/register', { email: 'cli@example.com', password: 'correct horse battery' });
    assert.equal(registered.status, 201);
  });
  after(async () => {
    await t.close();
    await rm(work, { recursive: true, force: true });
  });

  const versa = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', CLI, ...args], { env, cwd: new URL('../..', import.meta.url).pathname, timeout: 120_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const json = (text: string) => JSON.parse(text.slice(text.indexOf('{')));

  it('refuses without credentials (401 from the server) and with a bad command line (exit 2)', async () => {
    const anonymous = await versa('projects');
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /HTTP 401/);
    assert.equal((await versa('frobnicate')).code, 2);
    assert.equal((await versa('upload', 'x', 'folder')).code, 2);
  });

  it('logs in (token saved with mode 600), uploads a folder, imports an archive, versions, exports and downloads', async () => {
    const login = await versa('login', '--email', 'cli@example.com', '--password', 'correct horse battery');
    assert.equal(login.code, 0, login.stderr);
    assert.equal((await stat(env.VERSA_CONFIG!)).mode & 0o777, 0o600);

    const created = await versa('create-project', 'photos', '--type', 'classification');
    const project = json(created.stdout);
    await cp(join(FIXTURES, 'fresh-rotten-cls/valid'), join(work, 'photos'), { recursive: true });
    const upload = await versa('upload', String(project.id), join(work, 'photos'), '--batch', '4');
    assert.equal(upload.code, 0, upload.stderr);
    assert.deepEqual(json(upload.stdout), { created: 6, duplicates: 0, rejected: 0 });
    assert.match(upload.stderr, /upload \[#+\] 6\/6/);

    // A CVAT YOLO 1.1 export, zipped as CVAT writes it.
    const root = join(FIXTURES, 'interop/cvat-yolo-1.1');
    const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
    const entries = await Promise.all(files.map(async (e) => ({ name: relative(root, join(e.parentPath, e.name)), data: await readFile(join(e.parentPath, e.name)) })));
    await writeFile(join(work, 'cvat-yolo.zip'), await buildZip(entries.filter((e) => e.name !== 'SOURCE.md')));
    const imported = await versa('import', join(work, 'cvat-yolo.zip'), '--name', 'from cvat');
    assert.equal(imported.code, 0, imported.stderr);
    const dataset = json(imported.stdout);
    assert.deepEqual([dataset.project_type, dataset.image_count, dataset.annotation_count], ['object_detection', 1, 2]);

    const version = await versa('version', String(dataset.id), '--name', 'v1', '--seed', '4');
    assert.equal(version.code, 0, version.stderr);
    assert.equal(json(version.stdout).status, 'ready');

    const exported = await versa('export', String(dataset.id), '--format', 'cvat', '--version', String(json(version.stdout).id), '-o', join(work, 'v1.zip'));
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /download \[#+\]/);
    const back = await readDatasetZip(join(work, 'v1.zip'));
    try {
      assert.equal(back.format, 'cvat');
      let boxes = 0;
      for await (const item of back.items()) boxes += item.annotations.length;
      assert.equal(boxes, 2);
    } finally {
      await back.cleanup();
    }

    const badFormat = await versa('export', String(dataset.id), '--format', 'nope');
    assert.equal(badFormat.code, 1);
    assert.match(badFormat.stderr, /HTTP 422/);
  });
});
