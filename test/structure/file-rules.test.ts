import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkFiles, findViolations, type RuleName } from '../../scripts/file-rules.js';

// Each rule of scripts/file-rules.ts (run by `npm run layers`) fires on a probe file written into a scratch tree, and
// stays quiet on the same code in the rule's home: a rule that never fires, or fires everywhere, fails here.
const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The violations found in a scratch tree holding only `files` (path under the root → source), as `rule file`. */
function violations(files: Record<string, string>): string[] {
  const root = mkdtempSync(join(tmpdir(), 'versa-file-rules-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return findViolations(root).map((v) => `${v.rule} ${v.file}`).sort();
}

const fires = (rule: RuleName, probe: Record<string, string>, home: Record<string, string>) => {
  assert.deepEqual(violations(probe), Object.keys(probe).map((file) => `${rule} ${file}`).sort());
  assert.deepEqual(violations(home), []);
};

describe('file rules', () => {
  it('module-file-without-role: a module file without a role suffix', () => {
    fires(
      'module-file-without-role',
      { 'src/modules/probe/helpers.ts': 'export const x = 1;\n', 'src/modules/probe/probe.headers.ts': 'export const x = 1;\n' },
      { 'src/modules/probe/index.ts': 'export {};\n', 'src/modules/probe/helpers.logic.ts': 'export const x = 1;\n', 'src/lib/helpers.ts': 'export const x = 1;\n' },
    );
  });

  it('module-touches-files: fs imported (or loaded) by a module file that is not an adapter', () => {
    fires(
      'module-touches-files',
      {
        'src/modules/probe/probe.service.ts': "import { readFile } from 'node:fs/promises';\nexport const read = readFile;\n",
        'src/modules/probe/probe.routes.ts': "export const load = () => import('fs');\n",
        'src/modules/probe/probe.logic.ts': "export { existsSync } from 'node:fs';\n",
      },
      { 'src/modules/probe/disk.adapter.ts': "import { readFile } from 'node:fs/promises';\nexport const read = readFile;\n", 'src/storage/probe.ts': "import 'node:fs';\n" },
    );
  });

  it('child-process-outside-training: a child process started outside src/training/', () => {
    fires(
      'child-process-outside-training',
      { 'src/modules/probe/run.adapter.ts': "import { spawn } from 'node:child_process';\nexport const run = spawn;\n", 'src/lib/probe.ts': "import cp from 'child_process';\nexport default cp;\n" },
      { 'src/training/probe.ts': "import { spawn } from 'node:child_process';\nexport const run = spawn;\n" },
    );
  });

  it('sharp-outside-imaging: sharp outside src/imaging/, src/inference/ and src/synthetic/', () => {
    fires(
      'sharp-outside-imaging',
      { 'src/formats/probe.ts': "import sharp from 'sharp';\nexport default sharp;\n", 'src/modules/probe/probe.service.ts': "import sharp from 'sharp';\nexport default sharp;\n" },
      Object.fromEntries(['imaging', 'inference', 'synthetic'].map((home) => [`src/${home}/probe.ts`, "import sharp from 'sharp';\nexport default sharp;\n"])),
    );
  });

  it('onnxruntime-outside-inference: onnxruntime outside src/inference/', () => {
    fires(
      'onnxruntime-outside-inference',
      { 'src/modules/probe/runtime.adapter.ts': "import * as ort from 'onnxruntime-node';\nexport default ort;\n" },
      { 'src/inference/probe.ts': "import * as ort from 'onnxruntime-node';\nexport default ort;\n" },
    );
  });

  it('env-outside-config: process.env read anywhere but src/config.ts', () => {
    fires(
      'env-outside-config',
      {
        'src/training/probe.ts': 'export const env = { ...process.env };\n',
        'src/modules/probe/probe.service.ts': 'export const dir = () => process.env.DATA_DIR;\n',
        'src/lib/indexed.ts': "export const dir = () => process['env'].DATA_DIR;\n",
        'src/lib/destructured.ts': 'const { env } = process;\nexport const dir = env.DATA_DIR;\n',
      },
      { 'src/config.ts': 'export const dir = process.env.DATA_DIR;\n', 'src/lib/probe.ts': "export const v = 'process.env';\n" },
    );
  });

  it('hand-built-blob-key: a key spelled out, or added onto a key prefix, outside src/storage/keys.ts', () => {
    const keys = "export const projectBlobPrefix = (id: number) => `projects/${id}`;\n";
    assert.deepEqual(
      violations({
        'src/modules/probe/probe.service.ts': [
          "import { projectBlobPrefix } from '../../storage/keys.js';",
          'export const a = (id: number, sha: string) => `projects/${id}/images/${sha}.png`;',
          'export const b = (id: number) => `${projectBlobPrefix(id)}/samples/x.wav`;',
          "export const c = (id: number) => projectBlobPrefix(id) + '/exports/x.zip';",
          "export const d = 'projects/1/thumbs/x.webp';",
          "export const url = (id: number) => `/api/projects/${id}/images`;",
          '',
        ].join('\n'),
        'src/storage/keys.ts': keys,
      }),
      Array(4).fill('hand-built-blob-key src/modules/probe/probe.service.ts'),
    );
    assert.deepEqual(violations({ 'src/storage/keys.ts': keys }), []);
  });

  it("entry-builds-other-module: a module's entry constructing another module's piece", () => {
    fires(
      'entry-builds-other-module',
      {
        'src/modules/probe/index.ts': [
          "import { OtherRepository } from '../other/other.repository.js';",
          "import { ProbeService } from './probe.service.js';",
          'export const register = (db: unknown) => new ProbeService(new OtherRepository(db));',
          '',
        ].join('\n'),
      },
      {
        'src/modules/probe/index.ts': [
          "import type { OtherRepository } from '../other/other.repository.js';",
          "import { ProbeRepository } from './probe.repository.js';",
          "import { ProbeService } from './probe.service.js';",
          'export const register = (db: unknown, other: OtherRepository) => new ProbeService(new ProbeRepository(db), other);',
          '',
        ].join('\n'),
      },
    );
  });

  it('an exception that excuses nothing is reported, so the list only shrinks', () => {
    const root = mkdtempSync(join(tmpdir(), 'versa-file-rules-'));
    roots.push(root);
    mkdirSync(join(root, 'src/modules/probe'), { recursive: true });
    writeFileSync(join(root, 'src/modules/probe/helpers.ts'), 'export const x = 1;\n');
    const none = { 'module-file-without-role': {}, 'module-touches-files': {}, 'child-process-outside-training': {}, 'sharp-outside-imaging': {}, 'onnxruntime-outside-inference': {}, 'env-outside-config': {}, 'hand-built-blob-key': {}, 'entry-builds-other-module': {} };
    const excused = checkFiles(root, { ...none, 'module-file-without-role': { 'src/modules/probe/helpers.ts': 'probe' }, 'env-outside-config': { 'src/modules/probe/helpers.ts': 'stale' } });
    assert.deepEqual(excused.violations, []);
    assert.deepEqual(excused.stale, [{ rule: 'env-outside-config', file: 'src/modules/probe/helpers.ts' }]);
  });
});
