import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURES = join(ROOT, 'test/fixtures');
const RUNNER = join(ROOT, 'clients/python/tests/run_examples.py');
const CLIENT = join(ROOT, 'clients/python');

/** The ```python blocks of a Markdown file with the line each one's code starts on. */
function pythonBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```python\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    assert.ok(end < lines.length, `unclosed \`\`\`python block at line ${i + 1}`);
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') + '\n' });
    i = end;
  }
  return blocks;
}

/** A working folder as the examples expect it: photos/ (images), labelled/ (a YOLO dataset), detector.onnx. */
async function workingFolder(): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'versa-py-examples-'));
  await mkdir(join(work, 'photos'));
  const classes = join(FIXTURES, 'fresh-rotten-cls/train');
  for (const folder of await readdir(classes)) {
    for (const name of await readdir(join(classes, folder))) await cp(join(classes, folder, name), join(work, 'photos', `${folder}-${name}`));
  }
  await cp(join(FIXTURES, 'indian-vehicles-yolo'), join(work, 'labelled'), { recursive: true });
  await writeFile(join(work, 'detector.onnx'), buildYoloModel('v8'));
  return work;
}

/**
 * Every Python example of the README and of clients/python/README.md, executed against a live server (a fresh one per
 * file), in a working folder as the examples describe, with the client on PYTHONPATH as `pip install` would put it.
 */
describe('the Python examples in the READMEs run as written', { timeout: 10 * 60_000 }, () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  for (const file of ['README.md', 'clients/python/README.md']) {
    it(`${file}: every \`\`\`python block`, async () => {
      const blocks = pythonBlocks(await readFile(join(ROOT, file), 'utf8'));
      assert.ok(blocks.length > 0, `${file} has no python examples`);
      const t: TestApp = await startTestApp();
      cleanup.push(() => t.close());
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const work = await workingFolder();
      cleanup.push(() => rm(work, { recursive: true, force: true }));
      const spec = join(work, '.blocks.json');
      await writeFile(spec, JSON.stringify({ file, blocks }));
      const env: NodeJS.ProcessEnv = { ...process.env, VERSA_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, PYTHONPATH: CLIENT };
      delete env.VERSA_TOKEN;
      const result = await run('python3', [RUNNER, spec], { cwd: work, env, timeout: 8 * 60_000 }).catch((error) => error);
      assert.equal(result.code ?? 0, 0, `${file}: an example failed\n${result.stderr}\n${result.stdout}`);
      assert.match(result.stdout, new RegExp(`ran ${blocks.length} blocks\\s*$`));
    });
  }

  it('a broken example fails the run, naming the README line', async () => {
    const work = await mkdtemp(join(tmpdir(), 'versa-py-examples-'));
    cleanup.push(() => rm(work, { recursive: true, force: true }));
    const blocks = pythonBlocks('# Title\n\n```python\nx = 1\n```\n\ntext\n\n```python\nprint(x)\nversa.nothing()\n```\n');
    assert.deepEqual(blocks.map((b) => b.line), [4, 10]);
    await writeFile(join(work, 'blocks.json'), JSON.stringify({ file: 'BROKEN.md', blocks }));
    const result = await run('python3', [RUNNER, join(work, 'blocks.json')], { cwd: work }).then(() => null, (error) => error);
    assert.ok(result, 'the runner passed a broken example');
    assert.match(result.stderr, /File "BROKEN\.md", line 11/);
    assert.match(result.stderr, /example 2 of BROKEN\.md \(line 10\) failed/);
  });
});
