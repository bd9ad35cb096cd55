import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** An image embedding and what the decoder needs to map clicks and masks back to the image. */
export interface CachedEmbedding {
  dims: number[];
  data: Float32Array;
  /** Oriented original size and the size it was resized to inside the encoder's square input. */
  originalWidth: number;
  originalHeight: number;
  resizedWidth: number;
  resizedHeight: number;
  inputSize: number;
}

export interface EmbeddingCacheOptions {
  /** Memory budget for embeddings held in process (SAM ViT-H: 4 MiB each). */
  maxBytes: number;
  /** Directory for the disk tier, created on demand; none keeps embeddings in memory only. */
  directory?: string | null;
}

export interface EmbeddingCacheStats {
  memoryHits: number;
  diskHits: number;
  misses: number;
  /** Disk writes or reads that failed; the cache is an optimisation, so these never fail a request. */
  diskErrors: number;
  bytes: number;
  entries: number;
}

const MAGIC = 'VEMB';
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Embeddings keyed by model and image content: a byte-bounded LRU in memory over an optional directory of files
 * (`<model id>-<image sha256>.emb`, written to a temporary name then renamed, so readers never see half a file).
 */
export class EmbeddingCache {
  private readonly memory = new Map<string, CachedEmbedding>();
  private bytes = 0;
  private readonly counters = { memoryHits: 0, diskHits: 0, misses: 0, diskErrors: 0 };

  constructor(private readonly options: EmbeddingCacheOptions) {}

  stats(): EmbeddingCacheStats {
    return { ...this.counters, bytes: this.bytes, entries: this.memory.size };
  }

  async get(modelId: string, imageSha256: string): Promise<CachedEmbedding | null> {
    const key = cacheKey(modelId, imageSha256);
    const held = this.memory.get(key);
    if (held) {
      // Re-insert to mark it most recently used.
      this.memory.delete(key);
      this.memory.set(key, held);
      this.counters.memoryHits++;
      return held;
    }
    const fromDisk = await this.readDisk(key);
    if (fromDisk) {
      this.counters.diskHits++;
      this.remember(key, fromDisk);
      return fromDisk;
    }
    this.counters.misses++;
    return null;
  }

  async set(modelId: string, imageSha256: string, embedding: CachedEmbedding): Promise<void> {
    const key = cacheKey(modelId, imageSha256);
    this.remember(key, embedding);
    await this.writeDisk(key, embedding);
  }

  /** Forgets every embedding of a model (its weights changed or it was deleted), in memory and on disk. */
  async forgetModel(modelId: string): Promise<void> {
    for (const key of [...this.memory.keys()]) {
      if (key.startsWith(`${modelId}-`)) this.drop(key);
    }
    if (!this.options.directory) return;
    const names = await readdir(this.options.directory).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n.startsWith(`${modelId}-`)).map((n) => rm(join(this.options.directory!, n), { force: true })));
  }

  private remember(key: string, embedding: CachedEmbedding): void {
    const size = embedding.data.byteLength;
    if (size > this.options.maxBytes) return;
    if (this.memory.has(key)) this.drop(key);
    while (this.bytes + size > this.options.maxBytes) {
      const oldest = this.memory.keys().next().value as string;
      this.drop(oldest);
    }
    this.memory.set(key, embedding);
    this.bytes += size;
  }

  private drop(key: string): void {
    const entry = this.memory.get(key);
    if (!entry) return;
    this.memory.delete(key);
    this.bytes -= entry.data.byteLength;
  }

  private async readDisk(key: string): Promise<CachedEmbedding | null> {
    if (!this.options.directory) return null;
    const path = join(this.options.directory, `${key}.emb`);
    let file: Buffer;
    try {
      file = await readFile(path);
    } catch {
      return null;
    }
    const parsed = decode(file);
    if (!parsed) {
      this.counters.diskErrors++;
      await rm(path, { force: true });
    }
    return parsed;
  }

  private async writeDisk(key: string, embedding: CachedEmbedding): Promise<void> {
    const directory = this.options.directory;
    if (!directory) return;
    const path = join(directory, `${key}.emb`);
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(directory, { recursive: true });
      await writeFile(temporary, encode(embedding));
      await rename(temporary, path);
    } catch {
      this.counters.diskErrors++;
      await rm(temporary, { force: true });
    }
  }
}

function cacheKey(modelId: string, imageSha256: string): string {
  if (!SAFE_ID.test(modelId)) throw new Error(`model id "${modelId}" cannot name a cache file`);
  if (!SHA256.test(imageSha256)) throw new Error('image hash must be a lowercase hex sha256');
  return `${modelId}-${imageSha256}`;
}

// File layout: "VEMB", uint32 LE header length, JSON header padded with spaces to a multiple of 4, float32 LE data.
function encode(embedding: CachedEmbedding): Buffer {
  const { data, ...meta } = embedding;
  let header = JSON.stringify(meta);
  header += ' '.repeat((4 - ((8 + header.length) % 4)) % 4);
  const prefix = Buffer.alloc(8);
  prefix.write(MAGIC, 0, 'ascii');
  prefix.writeUInt32LE(header.length, 4);
  return Buffer.concat([prefix, Buffer.from(header, 'ascii'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

function decode(file: Buffer): CachedEmbedding | null {
  if (file.length < 8 || file.toString('ascii', 0, 4) !== MAGIC) return null;
  const headerLength = file.readUInt32LE(4);
  try {
    const meta = JSON.parse(file.toString('ascii', 8, 8 + headerLength)) as Omit<CachedEmbedding, 'data'>;
    const body = file.subarray(8 + headerLength);
    const count = meta.dims.reduce((a, b) => a * b, 1);
    if (body.length !== count * 4) return null;
    const data = new Float32Array(count);
    new Uint8Array(data.buffer).set(body);
    return { ...meta, data };
  } catch {
    return null;
  }
}
