import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const run = promisify(execFile);
const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const SMOKE = new URL('../../clients/python/tests/smoke.py', import.meta.url).pathname;

describe('Python client (clients/python) against a live server, with the machine’s python3', () => {
  let t: TestApp;
  let base: string;
  let work: string;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = await mkdtemp(join(tmpdir(), 'versa-py-'));
    await cp(join(FIXTURES, 'fresh-rotten-cls/train'), join(work, 'photos'), { recursive: true });
  });
  after(async () => {
    await t.close();
    await rm(work, { recursive: true, force: true });
  });

  it('registers, logs in, uploads a folder, versions, exports, downloads and imports the export again', async () => {
    const { stdout } = await run('python3', [SMOKE, base, join(work, 'photos'), work], { timeout: 120_000 });
    const seen = JSON.parse(stdout.trim().split('\n').pop()!);
    assert.deepEqual(seen, {
      me: 'py@example.com',
      anonymous_status: 401,
      created: 6,
      duplicates_second_time: 6,
      progress: [[2, 6], [4, 6], [6, 6]],
      version_status: 'ready',
      export_images: 6,
      has_data_yaml: true,
      reimported_images: 6,
      reimported_type: 'object_detection',
      bad_export_status: 422,
    });
  });
});
