import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { unsafeEntryName } from './safe-extract.js';

/**
 * A streaming zip writer (PKWARE APPNOTE 6.3): entries go to `output` one after another as they are added, the
 * central directory at `finish()`. Nothing is ever seeked or held whole: an entry whose size and CRC are known up
 * front (a buffer, a small file) gets them in its local header; a streamed one sets flag bit 3 and follows its data
 * with a data descriptor. ZIP64 records are written when an archive holds 65,535 entries or more, or when a size or
 * offset passes 4 GiB. Every entry carries the same fixed timestamp and mode, so the same input always produces the
 * same bytes.
 *
 * Adds are queued and written strictly in call order. A few entries are prepared ahead (small files and sources
 * opened and read, buffers deflated) while the current one is written, which hides file-system latency; each add resolves once the
 * queue has room. The first failure of any entry fails the archive: the next add or `finish()` rejects with it.
 */

export interface EntryOptions {
  /** DEFLATE the entry (kept STOREd when deflating a buffer does not make it smaller). Default: STORE. */
  compress?: boolean;
}

/** Anything that yields the entry's bytes: a Readable, a generator. */
export type ByteSource = AsyncIterable<Buffer | Uint8Array | string>;

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const END = 0x06054b50;
const ZIP64_EXTRA = 0x0001;

const MAX16 = 0xffff;
const MAX32 = 0xffffffff;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
const STORE = 0;
const DEFLATE = 8;
const VERSION_DEFAULT = 20;
const VERSION_ZIP64 = 45;
const MADE_BY_UNIX = (3 << 8) | VERSION_ZIP64;
/** A regular file, rw-r--r--: the mode readers (ours included) check before extracting. */
const FILE_ATTRIBUTES = (0o100644 << 16) >>> 0;
/** 2020-01-01 00:00:00 in MS-DOS form: a fixed timestamp keeps identical exports byte-identical. */
const DOS_DATE = ((2020 - 1980) << 9) | (1 << 5) | 1;
const DOS_TIME = 0;

/** Files up to this size are read whole (bounded memory), so their header carries size and CRC and costs one read. */
const WHOLE_FILE_MAX = 1024 * 1024;
const READ_CHUNK = 1024 * 1024;
/** How far ahead of the destination the writer may run before it waits for `drain`. */
const DEFAULT_HIGH_WATER_MARK = 8 * 1024 * 1024;
/** Entries prepared ahead of the one being written: at most this many small files (1 MiB each) in memory. */
const DEFAULT_MAX_QUEUED = 16;

const deflateRaw = promisify(zlib.deflateRaw);

interface Entry {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
  /** Whether the local header carries a ZIP64 extra field (then the descriptor's sizes are 8 bytes). */
  localZip64: boolean;
}

/** What an entry's bytes turned out to be once prepared: all in memory, or a source to stream in its turn. */
type Body =
  | { kind: 'known'; data: Buffer; body: Buffer; method: number }
  | { kind: 'stream'; source: ByteSource; compress: boolean; size: number | null; release?: () => Promise<void> };

export class ZipWriter {
  private offset = 0;
  private readonly central = new CentralDirectory();
  /** Entries are written strictly in the order they were added, each after the previous one. */
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private waiters: (() => void)[] = [];
  private finished = false;
  private failure: Error | null = null;

  /**
   * @param maxQueued entries accepted ahead of the one being written. Their preparation (opening and reading a
   *   small file, deflating a buffer) starts at once, so the next files are read while this one is written.
   * @param highWaterMark bytes the writer may run ahead of `output` before it waits for `drain`.
   */
  constructor(
    private readonly output: Writable,
    private readonly maxQueued = DEFAULT_MAX_QUEUED,
    private readonly highWaterMark = DEFAULT_HIGH_WATER_MARK,
  ) {
    output.on('error', (error: Error) => this.fail(error));
  }

  addBuffer(name: string, data: Buffer | string, options: EntryOptions = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    return this.enqueue(name, () => prepareBuffer(bytes, options));
  }

  /** A file from disk: read whole when small, streamed in chunks otherwise. */
  addFile(name: string, path: string, options: EntryOptions = {}): Promise<void> {
    return this.enqueue(name, () => prepareFile(path, options));
  }

  /**
   * Bytes opened on demand (a blob, a zip entry), read ahead like a file: `open` is called now and, when the bytes
   * end within 1 MiB, they are read while earlier entries are written and their header carries size and CRC; a
   * longer source is streamed in its turn, after what was read ahead. Without this a blob store's images would each
   * wait for their open and reads until the entry before them was written.
   */
  addSource(name: string, open: () => ByteSource | Promise<ByteSource>, options: EntryOptions = {}): Promise<void> {
    return this.enqueue(name, () => prepareSource(open, options));
  }

  /**
   * Bytes of unknown length, pulled in the entry's turn and only as fast as the output drains. The writer owns
   * `source` from this call on: a Readable it does not get to consume (the archive failed first) is destroyed.
   */
  addStream(name: string, source: ByteSource, options: EntryOptions = {}): Promise<void> {
    const body: Body = { kind: 'stream', source, compress: options.compress ?? false, size: null };
    return this.enqueue(name, async () => body, () => void discard(body));
  }

  /**
   * Waits for every entry, writes the central directory, ends the output and waits until it has flushed; resolves
   * with the archive's size. The first error of any entry rejects here if no `add` reported it already.
   */
  async finish(): Promise<number> {
    this.assertOpen();
    this.finished = true;
    await this.tail;
    if (this.failure) throw this.failure;
    try {
      const start = this.offset;
      await this.push(...this.central.blocks());
      await this.push(endRecords(this.central.count, this.offset - start, start, this.offset));
      this.output.end();
      await waitFinished(this.output);
    } catch (error) {
      this.fail(error as Error);
      this.output.destroy();
      throw this.failure;
    }
    return this.offset;
  }

  /**
   * Gives up on the archive: the output is destroyed (what it holds is not a valid zip), queued entries are
   * dropped and later calls throw. After a failed `add` or `finish` the caller aborts (and removes what it wrote).
   */
  abort(): void {
    this.fail(new Error('the zip archive was aborted'));
    this.output.destroy();
  }

  /**
   * Accepts an entry: its name is checked now, its preparation starts now, and it is written after the entries
   * before it. Resolves once fewer than `maxQueued` entries wait (so memory stays bounded for a caller that awaits
   * each add); rejects with the archive's first failure, whichever entry it came from.
   */
  private async enqueue(name: string, prepare: () => Promise<Body>, refuse?: () => void): Promise<void> {
    let nameBytes: Buffer;
    try {
      this.assertOpen();
      nameBytes = entryNameBytes(name);
    } catch (error) {
      refuse?.();
      throw error;
    }
    const body = prepare();
    body.catch(() => undefined);
    this.queued++;
    this.tail = this.tail.then(() => this.write(nameBytes, body));
    while (this.queued > this.maxQueued && !this.failure) await new Promise<void>((wake) => this.waiters.push(wake));
    if (this.failure) throw this.failure;
  }

  private async write(name: Buffer, prepared: Promise<Body>): Promise<void> {
    let body: Body | null = null;
    try {
      body = await prepared;
      if (this.failure) return;
      if (body.kind === 'known') await this.writeKnown(name, body);
      else await this.writeStreamed(name, body);
    } catch (error) {
      // Part of the entry may already be out: the archive cannot be continued.
      this.fail(error as Error);
    } finally {
      if (body) await discard(body);
      this.queued--;
      this.waiters.splice(0).forEach((wake) => wake());
    }
  }

  private async writeKnown(name: Buffer, { data, body, method }: Extract<Body, { kind: 'known' }>): Promise<void> {
    const localZip64 = data.length >= MAX32 || body.length >= MAX32;
    const entry: Entry = {
      name,
      flags: FLAG_UTF8,
      method,
      crc: zlib.crc32(data),
      compressedSize: body.length,
      size: data.length,
      offset: this.offset,
      localZip64,
    };
    await this.push(localHeader(entry, localZip64 ? entry.size : null, localZip64 ? entry.compressedSize : null), body);
    this.central.add(entry);
  }

  private async writeStreamed(name: Buffer, { source, compress, size }: Extract<Body, { kind: 'stream' }>): Promise<void> {
    // A ZIP64 local extra (sizes 0, filled in by the descriptor) when the size is known to need it.
    const localZip64 = size !== null && size >= MAX32;
    const entry: Entry = {
      name,
      flags: FLAG_UTF8 | FLAG_DESCRIPTOR,
      method: compress ? DEFLATE : STORE,
      crc: 0,
      compressedSize: 0,
      size: 0,
      offset: this.offset,
      localZip64,
    };
    await this.push(localHeader(entry, localZip64 ? 0 : null, localZip64 ? 0 : null));
    const start = this.offset;
    const counted = async function* (chunks: ByteSource) {
      for await (const chunk of chunks) {
        const bytes = asBuffer(chunk);
        entry.crc = zlib.crc32(bytes, entry.crc);
        entry.size += bytes.length;
        yield bytes;
      }
    };
    if (compress) {
      const deflate = zlib.createDeflateRaw();
      const fed = pipeline(source, counted, deflate);
      fed.catch(() => undefined);
      for await (const chunk of deflate) await this.push(chunk as Buffer);
      await fed;
    } else {
      for await (const chunk of counted(source)) await this.push(chunk);
    }
    entry.compressedSize = this.offset - start;
    await this.push(dataDescriptor(entry));
    this.central.add(entry);
  }

  /**
   * Hands chunks to the output (corked, so a header and a small body leave in one write), then waits for `drain`
   * only once more than the high-water mark is queued: preparing the next entries overlaps writing this one.
   */
  private async push(...chunks: Buffer[]): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.output.destroyed) throw new Error('the zip output was closed before the archive was finished');
    this.output.cork();
    for (const chunk of chunks) {
      this.output.write(chunk);
      this.offset += chunk.length;
    }
    this.output.uncork();
    if (this.output.writableNeedDrain && this.output.writableLength >= this.highWaterMark) await this.drained();
  }

  private drained(): Promise<void> {
    if (this.output.destroyed) return Promise.reject(this.failure ?? new Error('the zip output was closed before the archive was finished'));
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        this.output.off('drain', onDrain).off('error', onError).off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => settle();
      const onError = (error: Error) => settle(error);
      const onClose = () => settle(this.failure ?? new Error('the zip output was closed before the archive was finished'));
      this.output.on('drain', onDrain).on('error', onError).on('close', onClose);
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.waiters.splice(0).forEach((wake) => wake());
  }

  private assertOpen(): void {
    if (this.failure) throw this.failure;
    if (this.finished) throw new Error('the zip archive is already finished');
  }
}

async function prepareBuffer(data: Buffer, options: EntryOptions): Promise<Body> {
  if (options.compress && data.length > 0) {
    const deflated = await deflateRaw(data);
    if (deflated.length < data.length) return { kind: 'known', data, body: deflated, method: DEFLATE };
  }
  return { kind: 'known', data, body: data, method: STORE };
}

async function prepareFile(path: string, options: EntryOptions): Promise<Body> {
  const file = await open(path, 'r');
  let streaming = false;
  try {
    const { size } = await file.stat();
    if (size <= WHOLE_FILE_MAX) return await prepareBuffer(await readWhole(file, size), options);
    streaming = true;
    const source = file.createReadStream({ highWaterMark: READ_CHUNK, autoClose: false });
    return { kind: 'stream', source, compress: options.compress ?? false, size, release: () => file.close() };
  } finally {
    if (!streaming) await file.close();
  }
}

async function prepareSource(open: () => ByteSource | Promise<ByteSource>, options: EntryOptions): Promise<Body> {
  const source = await open();
  const chunks = source[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  try {
    while (size <= WHOLE_FILE_MAX) {
      const next = await chunks.next();
      if (next.done) return await prepareBuffer(head.length === 1 ? head[0] : Buffer.concat(head, size), options);
      const bytes = asBuffer(next.value);
      head.push(bytes);
      size += bytes.length;
    }
  } catch (error) {
    destroy(source);
    throw error;
  }
  async function* rest(): AsyncGenerator<Buffer> {
    yield* head.splice(0);
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield asBuffer(next.value);
  }
  return { kind: 'stream', source: rest(), compress: options.compress ?? false, size: null, release: async () => destroy(source) };
}

function asBuffer(chunk: Buffer | Uint8Array | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

function destroy(source: ByteSource): void {
  if ('destroy' in source && typeof source.destroy === 'function') (source as { destroy(): void }).destroy();
}

/** Releases what a prepared body holds: the file handle of a streamed file, a source left unread. */
async function discard(body: Body): Promise<void> {
  if (body.kind !== 'stream') return;
  destroy(body.source);
  const release = body.release;
  body.release = undefined;
  // Closing a file that was only read cannot lose data; its error is not worth failing an archive for.
  await release?.().catch(() => undefined);
}

/** The entry name as stored (UTF-8), refused when it could land outside the folder it is extracted into. */
export function entryNameBytes(name: string): Buffer {
  const problem =
    name === ''
      ? 'is empty'
      : (unsafeEntryName(name) ?? (name.split('/').some((part) => part === '' || part === '.') ? 'has an empty or "." path segment' : null));
  if (problem) throw new Error(`zip entry name "${name.replace(/\0/g, '\\0')}" ${problem}`);
  return Buffer.from(name, 'utf8');
}

async function readWhole(file: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await file.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === size ? buffer : buffer.subarray(0, filled);
}

/** `sizes` of null writes the real (32-bit) values; numbers go to a ZIP64 extra field and 0xFFFFFFFF to the header. */
function localHeader(entry: Entry, zip64Size: number | null, zip64Compressed: number | null): Buffer {
  const zip64 = zip64Size !== null && zip64Compressed !== null;
  const extraLength = zip64 ? 20 : 0;
  const header = Buffer.alloc(30 + entry.name.length + extraLength);
  const descriptor = (entry.flags & FLAG_DESCRIPTOR) !== 0;
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(zip64 ? VERSION_ZIP64 : VERSION_DEFAULT, 4);
  header.writeUInt16LE(entry.flags, 6);
  header.writeUInt16LE(entry.method, 8);
  header.writeUInt16LE(DOS_TIME, 10);
  header.writeUInt16LE(DOS_DATE, 12);
  header.writeUInt32LE(descriptor ? 0 : entry.crc, 14);
  header.writeUInt32LE(zip64 ? MAX32 : descriptor ? 0 : entry.compressedSize, 18);
  header.writeUInt32LE(zip64 ? MAX32 : descriptor ? 0 : entry.size, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(extraLength, 28);
  entry.name.copy(header, 30);
  if (zip64) {
    const at = 30 + entry.name.length;
    header.writeUInt16LE(ZIP64_EXTRA, at);
    header.writeUInt16LE(16, at + 2);
    writeUInt64(header, zip64Size, at + 4);
    writeUInt64(header, zip64Compressed, at + 12);
  }
  return header;
}

function dataDescriptor(entry: Entry): Buffer {
  const wide = entry.localZip64 || entry.size >= MAX32 || entry.compressedSize >= MAX32;
  const descriptor = Buffer.alloc(wide ? 24 : 16);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
  descriptor.writeUInt32LE(entry.crc, 4);
  if (wide) {
    writeUInt64(descriptor, entry.compressedSize, 8);
    writeUInt64(descriptor, entry.size, 16);
  } else {
    descriptor.writeUInt32LE(entry.compressedSize, 8);
    descriptor.writeUInt32LE(entry.size, 12);
  }
  return descriptor;
}

function centralHeader(entry: Entry): Buffer {
  // Each value that does not fit in 32 bits moves to the ZIP64 extra field, in the order the spec fixes.
  const wide = [entry.size, entry.compressedSize, entry.offset].filter((value) => value >= MAX32);
  const extraLength = wide.length ? 4 + 8 * wide.length : 0;
  const zip64 = wide.length > 0 || entry.localZip64;
  const header = Buffer.alloc(46 + entry.name.length + extraLength);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(MADE_BY_UNIX, 4);
  header.writeUInt16LE(zip64 ? VERSION_ZIP64 : VERSION_DEFAULT, 6);
  header.writeUInt16LE(entry.flags, 8);
  header.writeUInt16LE(entry.method, 10);
  header.writeUInt16LE(DOS_TIME, 12);
  header.writeUInt16LE(DOS_DATE, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(Math.min(entry.compressedSize, MAX32), 20);
  header.writeUInt32LE(Math.min(entry.size, MAX32), 24);
  header.writeUInt16LE(entry.name.length, 28);
  header.writeUInt16LE(extraLength, 30);
  header.writeUInt16LE(0, 32);
  header.writeUInt16LE(0, 34);
  header.writeUInt16LE(0, 36);
  header.writeUInt32LE(FILE_ATTRIBUTES, 38);
  header.writeUInt32LE(Math.min(entry.offset, MAX32), 42);
  entry.name.copy(header, 46);
  if (wide.length) {
    let at = 46 + entry.name.length;
    header.writeUInt16LE(ZIP64_EXTRA, at);
    header.writeUInt16LE(8 * wide.length, at + 2);
    for (const value of wide) writeUInt64(header, value, (at += 8) - 4);
  }
  return header;
}

/** The end of central directory record, preceded by the ZIP64 end record and locator when a field overflows. */
function endRecords(count: number, size: number, offset: number, zip64EndOffset: number): Buffer {
  const zip64 = count >= MAX16 || size >= MAX32 || offset >= MAX32;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END, 0);
  end.writeUInt16LE(zip64 ? MAX16 : count, 8);
  end.writeUInt16LE(zip64 ? MAX16 : count, 10);
  end.writeUInt32LE(zip64 ? MAX32 : size, 12);
  end.writeUInt32LE(zip64 ? MAX32 : offset, 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(ZIP64_END, 0);
  writeUInt64(record, 56 - 12, 4);
  record.writeUInt16LE(MADE_BY_UNIX, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  writeUInt64(record, count, 24);
  writeUInt64(record, count, 32);
  writeUInt64(record, size, 40);
  writeUInt64(record, offset, 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(ZIP64_LOCATOR, 0);
  writeUInt64(locator, zip64EndOffset, 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([record, locator, end]);
}

function writeUInt64(buffer: Buffer, value: number, at: number): void {
  buffer.writeUInt32LE(value % 2 ** 32, at);
  buffer.writeUInt32LE(Math.floor(value / 2 ** 32), at + 4);
}

/**
 * Central directory records packed into 1 MiB blocks as entries complete: about 50 bytes plus the name per entry,
 * instead of an object per entry kept until `finish()` (100k+ entries stay a few MB).
 */
class CentralDirectory {
  private static readonly BLOCK = 1024 * 1024;
  private readonly full: Buffer[] = [];
  private block = Buffer.allocUnsafe(CentralDirectory.BLOCK);
  private used = 0;
  count = 0;

  add(entry: Entry): void {
    const record = centralHeader(entry);
    if (this.used + record.length > this.block.length) {
      this.full.push(this.block.subarray(0, this.used));
      this.block = Buffer.allocUnsafe(Math.max(CentralDirectory.BLOCK, record.length));
      this.used = 0;
    }
    this.used += record.copy(this.block, this.used);
    this.count++;
  }

  blocks(): Buffer[] {
    return this.used ? [...this.full, this.block.subarray(0, this.used)] : this.full;
  }
}

/** Resolves once everything written has been flushed (`finish`), rejects if the output fails or closes first. */
function waitFinished(output: Writable): Promise<void> {
  if (output.writableFinished) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      output.off('finish', onFinish).off('error', onError).off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onFinish = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(output.writableFinished ? undefined : new Error('the zip output closed before it finished'));
    output.on('finish', onFinish).on('error', onError).on('close', onClose);
  });
}
