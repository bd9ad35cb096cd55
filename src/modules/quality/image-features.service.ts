import { measureImageFeatures, tailOf, TAIL_BYTES, type ImageFeatures } from '../../imaging/image-features.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { dHash } from '../../imaging/perceptual-hash.js';
import type { FeatureRow, HashRow, ImageFeaturesRepository, UnmeasuredImage } from './image-features.repository.js';
import { forEachConcurrently } from '../../lib/batches.js';

/** What ingest measures of one stored file, before it has an image id. */
export interface MeasuredFile {
  features: ImageFeatures;
  dhash: string;
}

/** Images measured at once when a report finds the cache cold (each keeps a libuv thread busy decoding). */
const FILL_CONCURRENCY = 2;
const FILL_BATCH = 256;

const toFeatureRow = (imageId: number, sha256: string, f: ImageFeatures): FeatureRow => ({
  image_id: imageId,
  sha256,
  readable: f.readable ? 1 : 0,
  truncated: f.truncated ? 1 : 0,
  blur: f.blur,
  brightness: f.brightness,
  entropy: f.entropy,
  grayscale: f.grayscale ? 1 : 0,
  pixel_hash: f.pixelHash,
});

/**
 * Measures images once and keeps the result: at upload (ingest hands over the thumbnail it just made), otherwise
 * lazily, in batches, the first time a report needs an image that has no current entry.
 */
export class ImageFeatureRecorder {
  constructor(
    private readonly repository: ImageFeaturesRepository,
    private readonly blobs: BlobStore,
  ) {}

  /** Ingest's call, while the file's bytes and thumbnail are in memory. */
  async measure(bytes: Buffer, mimeType: string, thumbnail: Buffer): Promise<MeasuredFile> {
    const [features, hash] = await Promise.all([measureImageFeatures(thumbnail, { mimeType, tail: tailOf(bytes) }), dHash(thumbnail).catch(() => null)]);
    return { features, dhash: hash ?? '0000000000000000' };
  }

  /** Ingest's call once the images have ids. A failure here only leaves the work to the lazy path. */
  async record(images: { id: number; sha256: string; measured: MeasuredFile }[]): Promise<void> {
    if (images.length === 0) return;
    await this.repository.save(
      images.map((i) => toFeatureRow(i.id, i.sha256, i.measured.features)),
      images.map((i) => ({ image_id: i.id, sha256: i.sha256, dhash: i.measured.dhash })),
    );
  }

  /** Measures every image of the project that has no current entry; returns how many it measured. */
  async fillMissing(projectId: number): Promise<number> {
    let after = 0;
    let measured = 0;
    for (;;) {
      const batch = await this.repository.unmeasured(projectId, after, FILL_BATCH);
      if (batch.length === 0) return measured;
      after = batch[batch.length - 1].id;
      const features: FeatureRow[] = [];
      const hashes: HashRow[] = [];
      await forEachConcurrently(batch, FILL_CONCURRENCY, (image) => this.measureStored(image, features, hashes));
      await this.repository.save(features, hashes);
      measured += batch.length;
    }
  }

  private async measureStored(image: UnmeasuredImage, features: FeatureRow[], hashes: HashRow[]): Promise<void> {
    const thumbnail = await this.blobs.get(image.thumbnail_key).catch(() => Buffer.alloc(0));
    if (!image.has_features) {
      const tail = await this.tail(image.blob_key);
      const f = await measureImageFeatures(thumbnail, tail === null ? null : { mimeType: image.mime_type, tail });
      features.push(toFeatureRow(image.id, image.sha256, tail === null ? { ...f, readable: false } : f));
    }
    if (!image.has_hash) {
      // An undecodable thumbnail gets a placeholder, so it is not tried again; the checks skip unreadable images.
      const hash = await dHash(thumbnail).catch(() => '0000000000000000');
      hashes.push({ image_id: image.id, sha256: image.sha256, dhash: hash });
    }
  }

  /** The original's last bytes, read through its stream (no decode); null when the file is gone. */
  private async tail(key: string): Promise<Uint8Array | null> {
    try {
      let last: Buffer = Buffer.alloc(0);
      for await (const chunk of this.blobs.stream(key)) {
        const c = chunk as Buffer;
        last = c.length >= TAIL_BYTES ? c : Buffer.concat([last, c]);
      }
      return tailOf(last);
    } catch {
      return null;
    }
  }
}
