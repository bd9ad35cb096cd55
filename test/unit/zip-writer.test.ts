import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import yauzl from 'yauzl';
import { ZipWriter } from '../../src/formats/zip/zip-writer.js';

const HAS_UNZIP = spawnSync('unzip', ['-v']).status === 0;

/** CRC-32 (IEEE) from its table definition, independent of the zlib implementation the writer uses. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function referenceCrc(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

interface ReadEntry {
  method: number;
  crc: number;
  flags: number;
  modified: Date;
  data: Buffer;
}

async function readZip(path: string): Promise<Map<string, ReadEntry>> {
  const archive = await yauzl.openPromise(path, { lazyEntries: true, validateEntrySizes: true });
  const entries = new Map<string, ReadEntry>();
  try {
    for await (const entry of archive.eachEntry()) {
      const chunks: Buffer[] = [];
      for await (const chunk of await archive.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.set(entry.fileName, {
        method: entry.compressionMethod,
        crc: entry.crc32,
        flags: entry.generalPurposeBitFlag,
        modified: entry.getLastModDate({ timezone: 'UTC' }),
        data: Buffer.concat(chunks),
      });
    }
  } finally {
    archive.close();
  }
  return entries;
}

/** `unzip -t`: Info-ZIP re-reads every entry through its local header and checks its CRC. */
function unzipTest(path: string): string {
  const result = spawnSync('unzip', ['-t', '-q', path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, `unzip -t failed: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

async function* chunksOf(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

/** Compressible but not trivial: lines of JSON-like text with varying numbers. */
function textOf(bytes: number): Buffer {
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += `{"id":${i},"bbox":[${i % 640},${(i * 7) % 480},${i % 33},${i % 17}]}\n`;
  return Buffer.from(text.slice(0, bytes));
}

describe('ZipWriter', () => {
  let work: string;
  let count = 0;
  const next = () => join(work, `archive-${++count}.zip`);
  const random = Buffer.alloc(1536 * 1024);
  for (let i = 0, x = 12345; i < random.length; i++) random[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  const text = textOf(1200 * 1024);

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'versa-zip-writer-'));
    await writeFile(join(work, 'small.bin'), random.subarray(0, 150_000));
    await writeFile(join(work, 'large.bin'), random);
    await writeFile(join(work, 'large.json'), text);
    await writeFile(join(work, 'empty.txt'), '');
  });
  after(() => rm(work, { recursive: true, force: true }));

  /** Every kind of entry: buffers (stored, deflated, empty), small and large files, streams (stored, deflated). */
  async function writeSample(path: string): Promise<number> {
    const zip = new ZipWriter(createWriteStream(path));
    await zip.addBuffer('data.yaml', 'nc: 1\nnames: [car]\n');
    await zip.addBuffer('labels/ünïcode ☃.txt', Buffer.from('0 0.5 0.5 0.1 0.1\n'));
    await zip.addBuffer('notes/empty.txt', Buffer.alloc(0), { compress: true });
    await zip.addBuffer('docs/text.json', text.subarray(0, 40_000), { compress: true });
    await zip.addBuffer('docs/random.bin', random.subarray(0, 5000), { compress: true });
    await zip.addFile('images/small.jpg', join(work, 'small.bin'));
    await zip.addFile('images/large.jpg', join(work, 'large.bin'));
    await zip.addFile('docs/large.json', join(work, 'large.json'), { compress: true });
    await zip.addFile('docs/empty-file.txt', join(work, 'empty.txt'));
    await zip.addStream('streams/stored.bin', chunksOf(random, 100_000));
    await zip.addStream('streams/deflated.json', Readable.from(chunksOf(text, 70_000)), { compress: true });
    await zip.addStream('streams/empty.bin', chunksOf(Buffer.alloc(0), 1));
    await zip.addSource('sources/small.jpg', () => createReadStream(join(work, 'small.bin')));
    await zip.addSource('sources/large.bin', () => Readable.from(chunksOf(random, 64 * 1024)));
    await zip.addSource('sources/deflated.json', async () => chunksOf(text.subarray(0, 300_000), 50_000), { compress: true });
    return zip.finish();
  }

  const expected = (): [string, Buffer, number][] => [
    ['data.yaml', Buffer.from('nc: 1\nnames: [car]\n'), 0],
    ['labels/ünïcode ☃.txt', Buffer.from('0 0.5 0.5 0.1 0.1\n'), 0],
    ['notes/empty.txt', Buffer.alloc(0), 0],
    ['docs/text.json', text.subarray(0, 40_000), 8],
    // Random bytes do not shrink: kept STOREd even though compression was asked for.
    ['docs/random.bin', random.subarray(0, 5000), 0],
    ['images/small.jpg', random.subarray(0, 150_000), 0],
    ['images/large.jpg', random, 0],
    ['docs/large.json', text, 8],
    ['docs/empty-file.txt', Buffer.alloc(0), 0],
    ['streams/stored.bin', random, 0],
    ['streams/deflated.json', text, 8],
    ['streams/empty.bin', Buffer.alloc(0), 0],
    ['sources/small.jpg', random.subarray(0, 150_000), 0],
    ['sources/large.bin', random, 0],
    ['sources/deflated.json', text.subarray(0, 300_000), 8],
  ];

  it('writes an archive yauzl reads back: names, contents, methods, CRCs and the fixed timestamp', async () => {
    const path = next();
    const bytes = await writeSample(path);
    assert.equal(bytes, (await stat(path)).size);
    const entries = await readZip(path);
    assert.deepEqual([...entries.keys()], expected().map(([name]) => name));
    for (const [name, data, method] of expected()) {
      const entry = entries.get(name)!;
      assert.ok(entry.data.equals(data), `${name}: content`);
      assert.equal(entry.method, method, `${name}: method`);
      assert.equal(entry.crc, referenceCrc(data), `${name}: CRC`);
      assert.equal(entry.modified.toISOString(), '2020-01-01T00:00:00.000Z');
      assert.ok(entry.flags & 0x800, `${name}: UTF-8 flag`);
    }
    // Sizes known up front go in the local header; only streams and large files and sources need a data descriptor.
    const streamed = [...entries].filter(([, entry]) => entry.flags & 0x8).map(([name]) => name);
    assert.deepEqual(streamed, ['images/large.jpg', 'docs/large.json', 'streams/stored.bin', 'streams/deflated.json', 'streams/empty.bin', 'sources/large.bin']);
  });

  it('passes `unzip -t` (every local header and CRC checked by Info-ZIP)', { skip: !HAS_UNZIP && 'unzip is not installed' }, async () => {
    const path = next();
    await writeSample(path);
    assert.match(unzipTest(path), /No errors detected/);
    const listing = spawnSync('unzip', ['-Z1', path], { encoding: 'utf8' }).stdout.trim().split('\n');
    assert.deepEqual(listing, expected().map(([name]) => name));
  });

  it('produces byte-identical archives for identical input', async () => {
    const first = next();
    const second = next();
    await writeSample(first);
    await writeSample(second);
    assert.ok((await readFile(first)).equals(await readFile(second)));
  });

  it('switches to ZIP64 past 65,535 entries; yauzl and unzip read every entry', async () => {
    const path = next();
    const total = 70_000;
    const zip = new ZipWriter(createWriteStream(path));
    for (let i = 0; i < total; i++) await zip.addBuffer(`e/${i}`, String(i % 10));
    const bytes = await zip.finish();
    const archive = await readFile(path);
    assert.equal(archive.length, bytes);
    // Tail: ZIP64 end record (56 bytes), its locator (20), then the classic end record with the count saturated.
    const end = archive.subarray(archive.length - 22);
    assert.equal(end.readUInt32LE(0), 0x06054b50);
    assert.equal(end.readUInt16LE(10), 0xffff);
    const zip64End = archive.subarray(archive.length - 22 - 20 - 56);
    assert.equal(zip64End.readUInt32LE(0), 0x06064b50);
    assert.equal(Number(zip64End.readBigUInt64LE(32)), total);
    const locator = archive.subarray(archive.length - 22 - 20);
    assert.equal(locator.readUInt32LE(0), 0x07064b50);
    assert.equal(Number(locator.readBigUInt64LE(8)), archive.length - 22 - 20 - 56);

    const reader = await yauzl.fromBufferPromise(archive, { lazyEntries: true });
    assert.equal(reader.entryCount, total);
    let seen = 0;
    for await (const entry of reader.eachEntry()) {
      if (entry.fileName !== `e/${seen}` || entry.uncompressedSize !== 1) assert.fail(`entry ${seen} is ${entry.fileName}`);
      seen++;
      if (seen === total) {
        const chunks: Buffer[] = [];
        for await (const chunk of await reader.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
        assert.equal(Buffer.concat(chunks).toString(), String((total - 1) % 10));
      }
    }
    reader.close();
    assert.equal(seen, total);
    if (HAS_UNZIP) assert.match(unzipTest(path), /No errors detected in compressed data of .*/);
  });

  it('refuses unsafe entry names and stays usable after refusing one', async () => {
    const path = next();
    const zip = new ZipWriter(createWriteStream(path));
    for (const name of ['', '/etc/passwd', 'C:/x', '../up', 'a/../../b', 'a\\b', 'nul\0.txt', 'a//b', './a', 'dir/']) {
      await assert.rejects(zip.addBuffer(name, 'x'), /zip entry name/, JSON.stringify(name));
    }
    await zip.addBuffer('ok/file.txt', 'fine');
    await zip.finish();
    assert.deepEqual([...(await readZip(path)).keys()], ['ok/file.txt']);
  });

  it('pulls a stream only as fast as the output drains (backpressure)', async () => {
    let consumed = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, callback) {
        setTimeout(() => {
          consumed += chunk.length;
          callback();
        }, 1);
      },
    });
    const highWaterMark = 64 * 1024;
    const zip = new ZipWriter(slow, 16, highWaterMark);
    let produced = 0;
    let furthestAhead = 0;
    async function* source() {
      for (let i = 0; i < 48; i++) {
        furthestAhead = Math.max(furthestAhead, produced - consumed);
        produced += 16 * 1024;
        yield Buffer.alloc(16 * 1024, i);
      }
    }
    await zip.addStream('big.bin', source());
    const bytes = await zip.finish();
    assert.equal(consumed, bytes);
    assert.ok(furthestAhead <= highWaterMark + 32 * 1024, `ran ${furthestAhead} bytes ahead of the output`);
  });

  it('a failing source fails the archive: later adds and finish reject, abort destroys the output', async () => {
    const output = createWriteStream(next());
    const zip = new ZipWriter(output);
    await zip.addBuffer('first.txt', 'ok');
    async function* broken() {
      yield Buffer.from('partial');
      throw new Error('disk read failed');
    }
    await zip.addStream('second.bin', broken());
    await assert.rejects(zip.finish(), /disk read failed/);
    await assert.rejects(zip.addBuffer('third.txt', 'x'), /disk read failed/);
    zip.abort();
    assert.equal(output.destroyed, true);
  });

  it('a missing file fails the archive at the next call; queued streams are destroyed, not left open', async () => {
    const zip = new ZipWriter(createWriteStream(next()));
    await zip.addFile('x.jpg', join(work, 'nope.jpg'));
    const queued = Readable.from(chunksOf(random, 1000));
    await zip.addStream('after.bin', queued).catch(() => undefined);
    await assert.rejects(zip.finish(), { code: 'ENOENT' });
    assert.equal(queued.destroyed, true);
    zip.abort();
  });

  it('accepts a bounded number of entries ahead of the output: an add waits while the queue is full', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, callback) => void gate.then(() => callback()) });
    const zip = new ZipWriter(held, 2, 1);
    const accepted: number[] = [];
    const adds = Array.from({ length: 6 }, (_, i) => zip.addBuffer(`${i}.txt`, String(i)).then(() => accepted.push(i)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(accepted.length <= 3, `${accepted.length} adds were accepted while nothing could be written`);
    release();
    await Promise.all(adds);
    assert.deepEqual(accepted, [0, 1, 2, 3, 4, 5]);
    await zip.finish();
  });

  it('reads the sources of queued entries ahead, while an earlier entry waits for the output', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const path = next();
    const file = createWriteStream(path);
    const held = new Writable({ highWaterMark: 1, write: (chunk, encoding, callback) => void gate.then(() => file.write(chunk, encoding, callback)) });
    held.on('finish', () => file.end());
    const zip = new ZipWriter(held, 4, 1);
    const read: number[] = [];
    const adds = [0, 1, 2, 3].map((i) =>
      zip.addSource(`${i}.bin`, async function* () {
        yield Buffer.from(`part ${i}, `);
        read.push(i);
        yield Buffer.from('end');
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(read.sort(), [0, 1, 2, 3], 'every queued source was read before anything was written');
    release();
    await Promise.all(adds);
    await zip.finish();
    await new Promise<void>((resolve) => file.once('close', () => resolve()));
    const entries = await readZip(path);
    assert.deepEqual([...entries].map(([name, entry]) => `${name}=${entry.data}`), [0, 1, 2, 3].map((i) => `${i}.bin=part ${i}, end`));
  });

  it('a source that fails to open or read fails the archive, and a streamed one is released', async () => {
    const zip = new ZipWriter(createWriteStream(next()));
    await zip.addSource('missing.jpg', () => createReadStream(join(work, 'nope.jpg')));
    await assert.rejects(zip.finish(), { code: 'ENOENT' });
    zip.abort();

    // The large source is opened and partly read ahead, but never written: the failure before it must close it.
    const second = new ZipWriter(createWriteStream(next()));
    const large = Readable.from(chunksOf(random, 64 * 1024));
    await second.addBuffer('first.txt', 'ok');
    await second.addSource('broken.bin', async function* () {
      yield Buffer.from('partial');
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('blob read failed');
    });
    await second.addSource('large.bin', () => large);
    await assert.rejects(second.finish(), /blob read failed/);
    second.abort();
    assert.equal(large.destroyed, true);
  });

  it('writes entries in the order they were added, even when adds are not awaited', async () => {
    const path = next();
    const zip = new ZipWriter(createWriteStream(path));
    const names = ['a.txt', 'b/large.jpg', 'c.txt', 'd/small.jpg', 'e.bin'];
    const adds = [
      zip.addBuffer(names[0], 'a'),
      zip.addFile(names[1], join(work, 'large.bin')),
      zip.addBuffer(names[2], 'c'),
      zip.addFile(names[3], join(work, 'small.bin')),
      zip.addStream(names[4], chunksOf(random, 4096)),
    ];
    await Promise.all(adds);
    await zip.finish();
    assert.deepEqual([...(await readZip(path)).keys()], names);
  });

  it('rejects instead of hanging when the output is closed mid-archive', async () => {
    const stuck = new Writable({ highWaterMark: 16, write: () => undefined });
    const zip = new ZipWriter(stuck, 16, 1024);
    await zip.addBuffer('big.bin', random.subarray(0, 10_000));
    setImmediate(() => stuck.destroy());
    await assert.rejects(zip.finish(), /closed before the archive was finished/);
    await assert.rejects(zip.addBuffer('later.txt', 'x'));
  });
});
