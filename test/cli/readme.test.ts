// The README's command-line example, run line by line with bash exactly as written, `versa` on PATH as a global
// install lays it out, against a live server. Training is not run (minutes): the train line gets a version number
// the project lacks, and the auto-annotate line names a model that does not exist; both must fail cleanly (status 4).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildCli, type CliBuild } from './cli-build.js';

const exec = promisify(execFile);
const README = new URL('../../README.md', import.meta.url).pathname;
const VEHICLES = new URL('../fixtures/indian-vehicles-yolo/', import.meta.url).pathname;

/** The lines of the sh block after `<!-- versa-cli-example -->`. */
export async function readmeCliLines(): Promise<string[]> {
  const text = await readFile(README, 'utf8');
  const block = text.split('<!-- versa-cli-example -->')[1]?.match(/```sh\n([\s\S]*?)```/)?.[1];
  assert.ok(block, 'README has the versa-cli-example block');
  return block.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
}

describe("the README's versa lines, run as written against a live server", () => {
  let t: TestApp;
  let root: string;
  let work: string;
  let cli: CliBuild;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-readme-'));
    cli = await buildCli(root);
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    work = join(root, 'work');
    await mkdir(work);
    // As Roboflow's download holds it, README.*.txt notes included (upload leaves them out).
    await cp(VEHICLES, join(work, 'vehicles'), { recursive: true });
    env = {
      PATH: `${join(cli.prefix, 'bin')}:${process.env.PATH}`,
      HOME: root,
      VERSA_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
      VERSA_CONFIG: join(root, 'credentials.json'),
    };
  });
  after(async () => {
    await t?.close();
    await rm(root, { recursive: true, force: true });
  });

  const bash = async (line: string) => {
    try {
      const { stdout, stderr } = await exec('bash', ['-c', line], { cwd: work, env, timeout: 120_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('every line does what the README says', async () => {
    const lines = await readmeCliLines();
    const seen = new Set<string>();
    for (const line of lines) {
      const command = line.match(/\bversa\s+(\S+)/)?.[1] ?? '';
      seen.add(command);
      if (command === 'train') {
        assert.match(line, /--version 1\b/);
        const refused = await bash(line.replace('--version 1', '--version 9'));
        assert.equal(refused.code, 4, `${line}\n${refused.stderr}`);
        assert.match(refused.stderr, /no version 9 \(its versions: 1\)/);
        continue;
      }
      if (command === 'auto-annotate') {
        const refused = await bash(line);
        assert.equal(refused.code, 4, `${line}\n${refused.stderr}`);
        continue;
      }
      const result = await bash(line);
      assert.equal(result.code, 0, `${line}\n${result.stdout}\n${result.stderr}`);
      if (command === 'upload') assert.match(result.stdout, /read as yolo\w*: 7 images added, 0 merged, \d+ annotations/);
      if (command === 'versions' && line.includes('create')) assert.match(result.stdout, /^version 1 "first" ready: \d+ images/);
    }
    assert.deepEqual([...seen].sort(), [
      'annotations', 'auto-annotate', 'classes', 'export', 'images', 'login', 'models', 'projects', 'register', 'train', 'upload', 'versions', 'whoami',
    ]);
    // What the lines left behind: the saved token, the annotations file, the downloaded export.
    assert.equal((await stat(env.VERSA_CONFIG!)).mode & 0o777, 0o600);
    const jsonl = (await readFile(join(work, 'vehicles.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(jsonl.length, 7);
    assert.ok(jsonl.some((l) => l.annotations.length > 0 && typeof l.annotations[0].class === 'string'));
    const zip = await stat(join(work, 'vehicles-v1.zip'));
    assert.ok(zip.size > 1000);
    const projects = JSON.parse((await bash('versa projects --json')).stdout);
    assert.equal(projects[0].name, 'vehicles');
    assert.equal(projects[0].image_count, 7);
  });
});
