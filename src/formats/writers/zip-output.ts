import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import yazl from 'yazl';
import { openImage, type ImageSource } from '../dataset.js';

/** Formats that are already compressed: deflating them again costs CPU and gains nothing, so they are STOREd. */
const STORED = /\.(jpe?g|png|webp|gif|avif|zip|gz|mp4)$/i;

/** How many entries may wait in yazl's queue before `add` waits: bounds memory whatever the dataset size. */
const MAX_QUEUED = 64;

/**
 * A zip written as a stream to `output` with yazl. Entries are added lazily (yazl opens each one when it reaches
 * it), and `add` waits while too many are queued, so a writer that loops over 100k images never runs ahead of the
 * disk or the network.
 */
export class ZipOutput {
  private readonly zip = new yazl.ZipFile();
  private readonly done: Promise<void>;
  private queued = 0;
  private waiters: (() => void)[] = [];
  private failure: Error | null = null;

  constructor(output: Writable) {
    this.zip.outputStream.pipe(output);
    this.zip.on('error', (error: Error) => this.fail(error));
    this.zip.outputStream.on('error', (error: Error) => this.fail(error));
    output.on('error', (error: Error) => this.fail(error));
    this.done = finished(output).catch((error: Error) => {
      this.fail(error);
      throw error;
    });
    this.done.catch(() => undefined);
  }

  addImage(name: string, source: ImageSource): Promise<void> {
    return this.addStream(name, () => openImage(source), !STORED.test(name));
  }

  addText(name: string, text: string | Buffer): Promise<void> {
    const buffer = typeof text === 'string' ? Buffer.from(text) : text;
    return this.addStream(name, async () => readableOf(buffer), buffer.length > 256);
  }

  async addStream(name: string, open: () => Promise<Readable>, compress: boolean): Promise<void> {
    if (this.failure) throw this.failure;
    this.queued++;
    this.zip.addReadStreamLazy(name, { compress, mtime: FIXED_MTIME }, (callback) => {
      this.queued--;
      this.waiters.splice(0).forEach((wake) => wake());
      open().then(
        (stream) => callback(null, stream),
        (error: Error) => callback(error, undefined as unknown as Readable),
      );
    });
    while (this.queued > MAX_QUEUED && !this.failure) await new Promise<void>((wake) => this.waiters.push(wake));
    if (this.failure) throw this.failure;
  }

  async finish(): Promise<void> {
    if (this.failure) throw this.failure;
    this.zip.end();
    await this.done;
    if (this.failure) throw this.failure;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.waiters.splice(0).forEach((wake) => wake());
  }
}

/** A fixed timestamp makes the same export byte-identical (versions promise reproducible files). */
const FIXED_MTIME = new Date('2020-01-01T00:00:00Z');

function readableOf(buffer: Buffer): Readable {
  return Readable.from([buffer], { objectMode: false });
}

/** Writes a chunk and waits for `drain` when the destination's buffer is full (backpressure). */
export async function writeChunk(output: Writable, chunk: string | Buffer): Promise<void> {
  if (!output.write(chunk)) await once(output, 'drain');
}
