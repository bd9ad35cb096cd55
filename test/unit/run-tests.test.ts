import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

/** scripts/run-tests.mjs on a folder of three small test files: one passes, one fails, one is left out by --except. */
describe('the test runner', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-runner-'));
    await mkdir(join(dir, 'test', 'quick'), { recursive: true });
    await mkdir(join(dir, 'test', 'slow'), { recursive: true });
    await symlink(resolve('node_modules'), join(dir, 'node_modules'));
    const file = (ok: boolean) => `import { it } from 'node:test';\nit('${ok ? 'passes' : 'fails'}', () => { if (${!ok}) throw new Error('on purpose'); });\n`;
    await writeFile(join(dir, 'test', 'quick', 'pass.test.ts'), file(true));
    await writeFile(join(dir, 'test', 'quick', 'fail.test.ts'), file(false));
    await writeFile(join(dir, 'test', 'slow', 'pass.test.ts'), file(true));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [resolve('scripts/run-tests.mjs'), ...args], { cwd: dir, encoding: 'utf8' });

  it('fails when a file fails, naming it, and ends with the slowest files and the totals', () => {
    const res = run('--except', 'test/slow/');
    assert.equal(res.status, 1, res.stdout + res.stderr);
    assert.match(res.stdout, /── slowest 2 of 2 test files \(seconds, 2 at a time\) ──\n +1\. +[\d.]+ +test\/quick\/(pass|fail)\.test\.ts\n +2\. /);
    assert.match(res.stdout, /tests 1 passed, 1 failed or cancelled, 0 skipped/);
    assert.match(res.stdout, /files that failed:\n {2}test\/quick\/fail\.test\.ts \(exit 1\)/);
    assert.doesNotMatch(res.stdout, /test\/slow\//);
  });

  it('passes when every chosen file passes', () => {
    const res = run('pass', '--concurrency', '1');
    assert.equal(res.status, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /slowest 2 of 2 test files \(seconds, 1 at a time\)/);
    assert.match(res.stdout, /tests 2 passed, 0 failed or cancelled/);
  });
});

/** `npm test` runs every test file once: a folder added under test/ and named by no tier would never run. */
describe('the tiers of npm test', () => {
  it('name every test file exactly once', async () => {
    const { readFile, readdir } = await import('node:fs/promises');
    const scripts = JSON.parse(await readFile('package.json', 'utf8')).scripts as Record<string, string>;
    const tiers = [...scripts.test.matchAll(/npm run (test:[a-z0-9]+)/g)].map((m) => m[1]!);
    assert.ok(tiers.length >= 4, scripts.test);
    const prefixes = tiers.map((tier) => {
      const words = scripts[tier]!.split(/\s+/);
      assert.ok(!words.includes('--except'), `${tier} should name its folders, not leave some out`);
      return words.filter((w) => w.startsWith('test/'));
    });
    const files = (await readdir('test', { recursive: true })).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
    for (const file of files) {
      const owners = tiers.filter((_, i) => prefixes[i]!.some((p) => file.includes(p)));
      assert.equal(owners.length, 1, `${file} is run by ${owners.length} tiers of npm test (${owners.join(', ')})`);
    }
  });
});
