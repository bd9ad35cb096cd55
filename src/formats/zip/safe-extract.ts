import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { FormatError } from '../format-error.js';
import { EntryPaths } from './entry-paths.js';

export interface ZipLimits {
  /** Total uncompressed bytes over all entries. */
  maxTotalBytes: number;
  maxEntryBytes: number;
  maxEntries: number;
  /** Largest uncompressed/compressed ratio allowed for an entry once it exceeds `ratioFloorBytes`. */
  maxRatio: number;
  /** Small entries may compress extremely well (a blank label file); the ratio is only judged above this size. */
  ratioFloorBytes: number;
  /** The setting that sets `maxEntries`, named in the refusal. */
  entriesSetting?: string;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxTotalBytes: 8 * 1024 ** 3,
  maxEntryBytes: 1024 ** 3,
  maxEntries: 500_000,
  maxRatio: 200,
  ratioFloorBytes: 1024 ** 2,
};

export interface ExtractResult {
  files: number;
  bytes: number;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

/** Why an entry's name is unsafe to extract, or null when it is a plain relative path. */
export function unsafeEntryName(name: string): string | null {
  if (name.includes('\0')) return 'contains a NUL byte';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'is an absolute path';
  if (name.split('/').some((part) => part === '..')) return 'contains ".."';
  if (name.length > 1024) return 'is too long';
  return null;
}

/**
 * Extracts a zip into `destination` (which must exist and be empty), refusing anything that could escape it or
 * exhaust the disk. Sizes declared in the archive are not trusted: a counter on the decompressed stream enforces
 * the limits, so a zip bomb stops after at most one limit's worth of bytes. On failure the caller removes the
 * destination; nothing outside it is ever written.
 */
export async function safeExtractZip(zipPath: string, destination: string, limits: Partial<ZipLimits> = {}): Promise<ExtractResult> {
  const limit = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const root = resolve(destination);
  let zip: ZipFile;
  try {
    // decodeStrings off: names are checked here byte for byte (yauzl would reject some on its own with terser messages).
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
  } catch (error) {
    throw new FormatError(`not a readable zip archive: ${(error as Error).message}`, 'unsafe_archive');
  }
  if (zip.entryCount > limit.maxEntries) {
    zip.close();
    const setting = limit.entriesSetting ? ` (${limit.entriesSetting})` : '';
    throw new FormatError(`archive has ${zip.entryCount} entries, more than the limit of ${limit.maxEntries}${setting}`, 'archive_too_large');
  }
  let files = 0;
  let total = 0;
  const paths = new EntryPaths();
  let current: string | null = null;
  const made = new Set<string>();
  const folder = async (path: string) => {
    if (made.has(path)) return;
    await mkdir(path, { recursive: true });
    made.add(path);
  };
  try {
    for await (const entry of zip.eachEntry()) {
      const name = entryName(entry);
      current = name;
      const problem = unsafeEntryName(name);
      if (problem) throw new FormatError(`zip entry "${printable(name)}" ${problem}`, 'unsafe_archive');
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (mode === S_IFLNK) throw new FormatError(`zip entry "${name}" is a symbolic link`, 'unsafe_archive');
      const isDirectory = name.endsWith('/') || mode === S_IFDIR;
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
        throw new FormatError(`zip entry "${name}" is not a regular file`, 'unsafe_archive');
      }
      if (entry.isEncrypted()) throw new FormatError(`zip entry "${name}" is encrypted`, 'unsafe_archive');
      const target = resolve(root, name);
      if (target !== root && !target.startsWith(root + sep)) {
        throw new FormatError(`zip entry "${name}" points outside the archive`, 'unsafe_archive');
      }
      paths.claim(relative(root, target).split(sep).join('/'), isDirectory ? 'folder' : 'file');
      if (isDirectory) {
        await folder(target);
        continue;
      }
      if (entry.uncompressedSize > limit.maxEntryBytes) {
        throw new FormatError(`zip entry "${name}" is larger than ${limit.maxEntryBytes} bytes`, 'archive_too_large');
      }
      if (total + entry.uncompressedSize > limit.maxTotalBytes) {
        throw new FormatError(`archive expands to more than ${limit.maxTotalBytes} bytes`, 'archive_too_large');
      }
      await folder(dirname(target));
      const budget = new EntryBudget(name, entry.compressedSize, limit, total);
      const stream = await zip.openReadStreamPromise(entry);
      if (entry.uncompressedSize <= SMALL_ENTRY_BYTES) {
        // Most entries are images of a few hundred KB: gathered in memory and written in one call, which costs a
        // fraction of a write stream per entry. Every chunk is still counted as it arrives.
        const chunks: Buffer[] = [];
        for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(budget.count(chunk));
        await writeFile(target, Buffer.concat(chunks, budget.bytes), { flag: 'wx' });
      } else {
        await pipeline(stream, budget.counter(), createWriteStream(target, { flags: 'wx' }));
      }
      // yauzl checks sizes but not checksums: a damaged entry would otherwise import as a corrupted image.
      if (budget.crc !== entry.crc32) {
        throw new FormatError(`zip entry "${name}" is damaged (CRC-32 mismatch)`, 'unsafe_archive');
      }
      total += budget.bytes;
      files++;
    }
  } catch (error) {
    zip.close();
    if (error instanceof FormatError) throw error;
    const { code, syscall } = error as NodeJS.ErrnoException;
    const fault = code && ENTRY_FAULTS[code];
    if (fault && current !== null) throw new FormatError(`zip entry "${printable(current)}" ${fault}`, 'unsafe_archive');
    // Any other file system error is this server's (a full disk, permissions), not the archive's; its text names
    // server paths, so it goes to the error handler, which logs it and answers without it.
    if (syscall) throw error;
    throw new FormatError(`corrupt zip archive: ${(error as Error).message}`, 'unsafe_archive');
  }
  return { files, bytes: total };
}

/** File system errors an entry's name causes, said of the entry (collisions are caught before, by EntryPaths). */
const ENTRY_FAULTS: Record<string, string> = {
  ENAMETOOLONG: 'has a name or folder name too long to extract',
  EEXIST: 'lands on another entry of the archive',
  ENOTDIR: 'lands on another entry of the archive',
  EISDIR: 'lands on another entry of the archive',
};

/** Entries up to this size are gathered in memory and written in one call. */
const SMALL_ENTRY_BYTES = 1 << 20;

function entryName(entry: Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  // Bit 11 says UTF-8; most tools write UTF-8 without setting it, and CP437 names are ASCII in practice.
  return raw.toString('utf8');
}

function printable(name: string): string {
  return name.replace(/[\0-\x1f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * Counts an entry's decompressed bytes (and their CRC-32) as they stream and fails the extraction the moment a limit
 * is crossed.
 */
class EntryBudget {
  bytes = 0;
  /** CRC-32 of the bytes counted so far. */
  crc = 0;

  constructor(
    private readonly name: string,
    private readonly compressedSize: number,
    private readonly limit: ZipLimits,
    private readonly before: number,
  ) {}

  /** Counts a chunk; throws FormatError when it crosses a limit. */
  count(chunk: Buffer): Buffer {
    this.bytes += chunk.length;
    this.crc = crc32(chunk, this.crc);
    if (this.bytes > this.limit.maxEntryBytes) {
      throw new FormatError(`zip entry "${this.name}" is larger than ${this.limit.maxEntryBytes} bytes`, 'archive_too_large');
    }
    if (this.before + this.bytes > this.limit.maxTotalBytes) {
      throw new FormatError(`archive expands to more than ${this.limit.maxTotalBytes} bytes`, 'archive_too_large');
    }
    if (this.bytes > this.limit.ratioFloorBytes && this.bytes > this.limit.maxRatio * Math.max(1, this.compressedSize)) {
      throw new FormatError(`zip entry "${this.name}" expands more than ${this.limit.maxRatio}× (a zip bomb?)`, 'archive_too_large');
    }
    return chunk;
  }

  /** The same count as a stream stage, for entries written as they are read. */
  counter(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) => {
        try {
          callback(null, this.count(chunk));
        } catch (error) {
          callback(error as Error);
        }
      },
    });
  }
}
