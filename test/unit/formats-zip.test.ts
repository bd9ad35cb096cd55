import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yazl from 'yazl';
import { FormatError } from '../../src/formats/format-error.js';
import { safeExtractZip } from '../../src/formats/zip/safe-extract.js';

interface ZipEntrySpec {
  name: string;
  data: Buffer | string;
  mode?: number;
  compress?: boolean;
}

/** Builds a zip with yazl, then renames entries byte for byte (yazl itself refuses the names these tests need). */
async function buildZip(entries: ZipEntrySpec[], renames: [string, string][] = []): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(Buffer.from(entry.data), entry.name, { mode: entry.mode, compress: entry.compress ?? true });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  let buffer = Buffer.concat(chunks);
  for (const [from, to] of renames) {
    assert.equal(Buffer.byteLength(from), Buffer.byteLength(to), 'renames keep the name length');
    const fromBytes = Buffer.from(from);
    const toBytes = Buffer.from(to);
    let at = buffer.indexOf(fromBytes);
    assert.ok(at >= 0);
    while (at >= 0) {
      toBytes.copy(buffer, at);
      at = buffer.indexOf(fromBytes, at + 1);
    }
    buffer = Buffer.from(buffer);
  }
  return buffer;
}

describe('safe zip extraction', () => {
  let work: string;
  let count = 0;
  before(async () => (work = await mkdtemp(join(tmpdir(), 'versa-zip-test-'))));
  after(() => rm(work, { recursive: true, force: true }));

  /** Extracts into a fresh `out` folder inside a fresh case folder, so anything escaping it would be visible. */
  async function extract(zip: Buffer, limits = {}) {
    const caseDir = join(work, `case-${++count}`);
    const out = join(caseDir, 'out');
    await mkdir(out, { recursive: true });
    const zipPath = join(caseDir, 'input.zip');
    await writeFile(zipPath, zip);
    const run = () => safeExtractZip(zipPath, out, limits);
    return { caseDir, out, run };
  }

  async function expectRefused(zip: Buffer, pattern: RegExp, limits = {}) {
    const { caseDir, run } = await extract(zip, limits);
    await assert.rejects(run, (error: unknown) => error instanceof FormatError && pattern.test(error.message));
    // Nothing was written next to the destination folder.
    assert.deepEqual((await readdir(caseDir)).sort(), ['input.zip', 'out']);
    return caseDir;
  }

  it('extracts a well-formed archive with nested folders', async () => {
    const zip = await buildZip([
      { name: 'data/train/a.txt', data: 'alpha' },
      { name: 'data/b.txt', data: 'beta', compress: false },
    ]);
    const { out, run } = await extract(zip);
    assert.deepEqual(await run(), { files: 2, bytes: 9 });
    assert.equal(await readFile(join(out, 'data/train/a.txt'), 'utf8'), 'alpha');
    assert.equal(await readFile(join(out, 'data/b.txt'), 'utf8'), 'beta');
  });

  it('refuses entries that climb out with ..', async () => {
    const zip = await buildZip([{ name: 'ok.txt', data: 'x' }, { name: 'zz/evil.txt', data: 'pwned' }], [['zz/evil.txt', '../evil.txt']]);
    await expectRefused(zip, /"\.\.\/evil\.txt" contains "\.\."/);
  });

  it('refuses absolute paths, drive letters and backslash tricks', async () => {
    await expectRefused(await buildZip([{ name: 'tmp/evil.txt', data: 'x' }], [['tmp/evil.txt', '/tm/evil.txt']]), /absolute path/);
    await expectRefused(await buildZip([{ name: 'cc/evil.txt', data: 'x' }], [['cc/evil.txt', 'C:/evil.txt']]), /absolute path/);
    await expectRefused(await buildZip([{ name: 'aaa/evil.txt', data: 'x' }], [['aaa/evil.txt', '..\\\\evil.txt']]), /backslash/);
  });

  it('refuses names with a NUL byte', async () => {
    await expectRefused(await buildZip([{ name: 'evil.txt.jpg', data: 'x' }], [['evil.txt.jpg', 'evil.txt\0jpg']]), /NUL byte/);
  });

  it('refuses symbolic links, however harmless their target', async () => {
    await expectRefused(await buildZip([{ name: 'link', data: '/etc/passwd', mode: 0o120777 }]), /symbolic link/);
  });

  it('stops a zip bomb by its compression ratio while streaming', async () => {
    const bomb = await buildZip([{ name: 'zeros.bin', data: Buffer.alloc(8 * 1024 * 1024) }]);
    assert.ok(bomb.length < 100_000, 'the bomb is small on disk');
    await expectRefused(bomb, /expands more than 200×/);
  });

  it('enforces total, per-entry and entry-count limits', async () => {
    const three = await buildZip([
      { name: 'a.bin', data: Buffer.alloc(4000, 1), compress: false },
      { name: 'b.bin', data: Buffer.alloc(4000, 2), compress: false },
      { name: 'c.bin', data: Buffer.alloc(4000, 3), compress: false },
    ]);
    await expectRefused(three, /expands to more than 10000 bytes/, { maxTotalBytes: 10_000 });
    await expectRefused(three, /"a\.bin" is larger than 3000 bytes/, { maxEntryBytes: 3000 });
    await expectRefused(three, /3 entries, more than the limit of 2/, { maxEntries: 2 });
  });

  it('refuses a file that is not a zip', async () => {
    await expectRefused(Buffer.from('definitely not a zip archive'), /not a readable zip archive/);
  });
});
