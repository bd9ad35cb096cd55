import { Zip, ZipPassThrough } from 'fflate';

export interface NamedFile {
  file: File;
  /** The path inside the zip: the file's path relative to the dropped or chosen folder. */
  name: string;
}

/** fflate writes no ZIP64 records: offsets and sizes are 32-bit, the entry count 16-bit. */
export const ZIP_MAX_BYTES = 2 ** 32 - 1;
export const ZIP_MAX_ENTRIES = 65_535;
/** Per entry: local header (30) + data descriptor (16) + central directory record (46), names twice. */
const ENTRY_OVERHEAD = 30 + 16 + 46;
/** Output gathered up to this size becomes a Blob part, which the browser may keep out of the page's memory. */
const PART_BYTES = 8 * 1024 * 1024;

/** Why the selection cannot be zipped here (null when it can). */
export function zipRefusal(files: NamedFile[]): string | null {
  if (files.length > ZIP_MAX_ENTRIES) {
    return `${files.length} files are more than a zip made in the browser can hold (${ZIP_MAX_ENTRIES}): zip the folder yourself and import it under “Labelled dataset (zip)”.`;
  }
  const encoder = new TextEncoder();
  const total = files.reduce((sum, f) => sum + f.file.size + ENTRY_OVERHEAD + 2 * encoder.encode(f.name).length, 22);
  if (total > ZIP_MAX_BYTES) {
    return `The selection (${(total / 2 ** 30).toFixed(1)} GiB) is more than a zip made in the browser can hold (4 GiB): zip the folder yourself and import it under “Labelled dataset (zip)”.`;
  }
  return null;
}

/**
 * A store-only zip (images are compressed already) of the files under their names, read one file at a time and
 * gathered into Blob parts as it is written, so the page never holds the whole archive as one array.
 */
export async function zipFiles(files: NamedFile[], onFile: (done: number) => void): Promise<Blob> {
  const parts: Blob[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    parts.push(new Blob(pending as BlobPart[]));
    pending = [];
    pendingBytes = 0;
  };
  let failure: Error | null = null;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const zip = new Zip((error, chunk, final) => {
    if (error) {
      failure = error;
      finished();
      return;
    }
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= PART_BYTES) flush();
    if (final) finished();
  });

  for (const [index, { file, name }] of files.entries()) {
    const entry = new ZipPassThrough(name);
    entry.mtime = file.lastModified || Date.now();
    zip.add(entry);
    const reader = file.stream().getReader();
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      entry.push(value);
    }
    entry.push(new Uint8Array(0), true);
    if (failure) throw failure;
    onFile(index + 1);
  }
  zip.end();
  await done;
  if (failure) throw failure;
  flush();
  return new Blob(parts, { type: 'application/zip' });
}
