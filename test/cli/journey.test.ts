// A whole journey through the built `versa` against a live server, reading its --json output and exit statuses:
// register and log in (password piped, and typed at a terminal), projects by name, classes, uploads with and without
// labels, annotations out and back in, a version by number, export and download, jobs, and the refusals scripts test.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readDatasetZip } from '../../src/formats/readers/index.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildCli, type CliBuild } from './cli-build.js';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const PASSWORD = 'correct horse battery';

describe('versa against a live server: a journey, --json shapes and exit statuses', () => {
  let t: TestApp;
  let root: string;
  let cli: CliBuild;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-journey-'));
    cli = await buildCli(root);
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    env = { PATH: process.env.PATH, HOME: root, VERSA_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, VERSA_CONFIG: join(root, 'credentials.json') };
    await cp(join(FIXTURES, 'fresh-rotten-cls/valid'), join(root, 'photos'), { recursive: true });
    await cp(join(FIXTURES, 'interop/cvat-yolo-1.1'), join(root, 'labelled'), { recursive: true, filter: (src) => !src.endsWith('SOURCE.md') });
  });
  after(async () => {
    await t?.close();
    await rm(root, { recursive: true, force: true });
  });

  /** Runs `versa ARGS` (the built bin) with `input` on stdin. */
  const versa = (args: string[], input = '') =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [cli.script, ...args], { cwd: root, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(input);
    });
  const ok = async (args: string[], input = '') => {
    const r = await versa([...args, '--json'], input);
    assert.equal(r.code, 0, `versa ${args.join(' ')}: ${r.stderr}`);
    try {
      return JSON.parse(r.stdout);
    } catch {
      assert.fail(`versa ${args.join(' ')} printed no JSON: ${r.stdout}`);
    }
  };
  const refused = async (args: string[], code: number) => {
    const r = await versa([...args, '--json']);
    assert.equal(r.code, code, `versa ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    assert.equal(r.stdout, '');
    const { error } = JSON.parse(r.stderr);
    assert.equal(error.exit_code, code);
    return error as { status: number | null; detail: unknown; message: string };
  };

  it('refuses without credentials (3), then registers and logs in with the password on stdin', async () => {
    assert.equal((await refused(['projects'], 3)).status, 401);
    const user = await ok(['register', '--email', 'cli@example.com'], `${PASSWORD}\n`);
    assert.equal(user.email, 'cli@example.com');
    assert.equal((await refused(['login', '--email', 'cli@example.com', '--password', 'wrong password'], 3)).status, 401);
    const login = await ok(['login', '--email', 'cli@example.com'], `${PASSWORD}\n`);
    assert.deepEqual([login.user.email, login.credentials], ['cli@example.com', env.VERSA_CONFIG]);
    assert.equal((await stat(env.VERSA_CONFIG!)).mode & 0o777, 0o600);
    assert.equal((await ok(['whoami'])).email, 'cli@example.com');
  });

  it('asks for the password on a terminal without echoing it', { skip: process.platform !== 'linux' }, async () => {
    // util-linux `script` gives the command a pseudo-terminal and passes our stdin to it.
    const line = `${process.execPath} ${cli.script} login --email cli@example.com`;
    const child = await new Promise<{ code: number; out: string }>((resolve) => {
      const p = spawn('script', ['-qec', line, '/dev/null'], { cwd: root, env });
      let out = '';
      p.stdout.on('data', (c) => (out += c));
      p.on('close', (code) => resolve({ code: code ?? -1, out }));
      setTimeout(() => p.stdin.write(`${PASSWORD}\r`), 1500);
    });
    assert.equal(child.code, 0, child.out);
    assert.match(child.out, /Password: /);
    assert.match(child.out, /logged in to .* as cli@example\.com/);
    assert.doesNotMatch(child.out, /correct horse/);
  });

  it('creates projects and classes, uploads images and a labelled folder, moves annotations out and back in', async () => {
    const photos = await ok(['projects', 'create', 'photos', '--type', 'classification']);
    assert.deepEqual([photos.name, photos.project_type], ['photos', 'classification']);
    assert.equal((await ok(['projects', 'show', 'photos'])).id, photos.id);
    assert.match((await refused(['projects', 'show', 'no such project'], 4)).message, /no project named "no such project"/);

    const upload = await ok(['upload', 'photos', join(root, 'photos'), '--batch', '4', '--concurrency', '2']);
    assert.deepEqual(upload, { created: 6, duplicates: 0, rejected: 0, rejections: [] });
    assert.deepEqual(await ok(['upload', String(photos.id), join(root, 'photos')]), { created: 0, duplicates: 6, rejected: 0, rejections: [] });
    const human = await versa(['upload', 'photos', join(root, 'photos'), '--batch', '3']);
    assert.equal(human.stdout, '0 images added, 6 duplicates, 0 rejected\n');
    assert.match(human.stderr, /upload \[#{28}\] 6\/6/);

    await ok(['projects', 'create', 'boxes']);
    const classes = await ok(['classes', 'add', 'boxes', 'car', 'person']);
    assert.deepEqual(classes.map((c: { name: string }) => c.name), ['car', 'person']);
    const imported = await ok(['upload', 'boxes', join(root, 'labelled')]);
    assert.deepEqual([imported.images_created, imported.annotations_created], [1, 2]);
    const listed = await ok(['classes', 'boxes']);
    assert.ok(listed.length >= 2);
    const images = await ok(['images', 'boxes']);
    assert.deepEqual(images.map((i: { annotation_count: number }) => i.annotation_count), [2]);

    const out = join(root, 'boxes.jsonl');
    assert.deepEqual(await ok(['annotations', 'export', 'boxes', '--out', out]), { images: 1, annotations: 2, path: out });
    const lines = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].image, '1.jpg');
    assert.equal(lines[0].annotations.length, 2);

    // The same image in another project, without labels; the annotations go back on by the image's name.
    await ok(['projects', 'create', 'copy']);
    assert.equal((await ok(['upload', 'copy', join(root, 'labelled'), '--images-only'])).created, 1);
    assert.match((await refused(['annotations', 'import', 'copy', out], 1)).message, /has no class ".*" \(add it with versa classes add, or pass --create-classes\)/);
    assert.deepEqual(await ok(['annotations', 'import', 'copy', out, '--create-classes']), { images: 1, annotations: 2, missing_images: [] });
    const again = await ok(['annotations', 'export', 'copy', '--out', join(root, 'copy.jsonl')]);
    assert.equal(again.annotations, 2);
    const copied = JSON.parse((await readFile(join(root, 'copy.jsonl'), 'utf8')).trim());
    assert.deepEqual(copied.annotations.map((a: { geometry: unknown }) => a.geometry), lines[0].annotations.map((a: { geometry: unknown }) => a.geometry));
  });

  it('creates a version and waits for it, exports it by number, shows its job; refuses what does not exist', async () => {
    const version = await ok(['versions', 'create', 'boxes', '--name', 'v1', '--seed', '3', '--wait', '--timeout', '300']);
    assert.deepEqual([version.number, version.status], [1, 'ready']);
    assert.notEqual(version.id, undefined);
    const shown = await versa(['versions', 'show', 'boxes', '1']);
    assert.match(shown.stdout, /^version 1 "v1" ready: \d+ images/);
    assert.deepEqual((await ok(['versions', 'boxes'])).map((v: { number: number }) => v.number), [1]);

    const zip = join(root, 'boxes-v1.zip');
    const exported = await ok(['export', 'boxes', '--format', 'cvat', '--version', '1', '--out', zip]);
    assert.deepEqual([exported.version_number, exported.version_id, exported.path], [1, version.id, zip]);
    const back = await readDatasetZip(zip);
    try {
      assert.equal(back.format, 'cvat');
      let boxes = 0;
      for await (const item of back.items()) boxes += item.annotations.length;
      assert.ok(boxes >= 2);
    } finally {
      await back.cleanup();
    }
    assert.equal((await ok(['export', 'boxes', '--format', 'coco', '--version', 'latest', '--out', join(root, 'latest.json')])).version_number, 1);

    const job = await ok(['jobs', String(version.job_id)]);
    assert.deepEqual([job.id, job.status], [version.job_id, 'succeeded']);
    assert.equal((await ok(['jobs', 'wait', String(version.job_id)])).status, 'succeeded');

    assert.match((await refused(['export', 'boxes', '--format', 'cvat', '--version', '2'], 4)).message, /project \d+ has no version 2 \(its versions: 1\)/);
    const badFormat = await refused(['export', 'boxes', '--format', 'nope'], 1);
    assert.equal(badFormat.status, 422);
    assert.equal((await refused(['jobs', '99999'], 4)).status, 404);
    await refused(['export', 'boxes'], 2);
  });

  it('train refuses bad input before anything starts; models and auto-annotate answer cleanly', async () => {
    await refused(['train', 'boxes', '--version', '1', '--epochs', 'many'], 2);
    await refused(['train', 'boxes'], 2);
    assert.match((await refused(['train', 'boxes', '--version', '7'], 4)).message, /no version 7/);
    assert.equal((await refused(['train', 'boxes', '--version', '1', '--device', 'tpu'], 1)).status, 422);
    assert.deepEqual(await ok(['models', '--project', 'boxes']), []);
    assert.match((await refused(['auto-annotate', 'boxes', '--model', 'detector'], 4)).message, /has no model named "detector" \(it has none yet\)/);
    await refused(['auto-annotate', 'boxes', '--model', 'x', '--confidence', '2'], 2);
  });

  it('logs out: the token is gone and the next call is refused (3)', async () => {
    assert.deepEqual(await ok(['logout']), { logged_out: true });
    await assert.rejects(stat(env.VERSA_CONFIG!));
    await refused(['projects'], 3);
  });
});
