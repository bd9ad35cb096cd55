import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ImageSource } from '../dataset.js';
import { ZipWriter } from '../zip/zip-writer.js';

/** Formats that are already compressed: deflating them again costs CPU and gains nothing, so they are STOREd. */
const STORED = /\.(jpe?g|png|webp|gif|avif|zip|gz|mp4)$/i;

/**
 * Buffers below this size are STOREd: a label or XML file shrinks by a few hundred bytes at most, while deflating it
 * costs a zlib stream per entry (measured on bench/export-formats.ts: deflating every label file made the YOLO zip
 * about 2.5× slower for a 0.3% smaller archive). Large text (a COCO document) is deflated.
 */
const DEFLATE_TEXT_FROM = 16 * 1024;

/** The export writers' view of a zip: images from their sources, other files from memory, STORE unless it pays. */
export class ZipOutput {
  private readonly zip: ZipWriter;

  constructor(output: Writable) {
    this.zip = new ZipWriter(output);
  }

  async addImage(name: string, source: ImageSource): Promise<void> {
    const compress = !STORED.test(name);
    if ('path' in source) return this.zip.addFile(name, source.path, { compress });
    return this.zip.addSource(name, source.open, { compress });
  }

  /** Bytes already in memory (a label file, a rendered mask). */
  addBuffer(name: string, data: string | Buffer): Promise<void> {
    const buffer = typeof data === 'string' ? Buffer.from(data) : data;
    return this.zip.addBuffer(name, buffer, { compress: buffer.length >= DEFLATE_TEXT_FROM && !STORED.test(name) });
  }

  finish(): Promise<number> {
    return this.zip.finish();
  }

  abort(): void {
    this.zip.abort();
  }
}

/**
 * Runs `body` against a zip on `output` and finishes it. On failure the output is destroyed rather than ended, so
 * no reader ever sees a truncated archive as complete and the file descriptor is released.
 */
export async function writeZip<T>(output: Writable, body: (zip: ZipOutput) => Promise<T>): Promise<T> {
  const zip = new ZipOutput(output);
  try {
    const result = await body(zip);
    await zip.finish();
    return result;
  } catch (error) {
    zip.abort();
    throw error;
  }
}

/** Writes a chunk and waits for `drain` when the destination's buffer is full (backpressure). */
export async function writeChunk(output: Writable, chunk: string | Buffer): Promise<void> {
  if (!output.write(chunk)) await once(output, 'drain');
}
