import { fitPixels, type FittedPixels } from '../../imaging/fitted-pixels.js';
import { isTruncated, measureImageFeatures, tailOf, UNREADABLE_FEATURES, type ImageFeatures } from '../../imaging/image-features.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { FeatureRow, HashRow, ImageFeaturesRepository, UnmeasuredImage } from './image-features.repository.js';
import { forEachConcurrently } from '../../lib/batches.js';

/** What ingest measures of one stored file, before it has an image id. */
export interface MeasuredFile {
  features: ImageFeatures;
  dhash: string;
  fine: string;
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
 * Measures images once and keeps the result: at upload (ingest hands over the pixels of the thumbnail it just made), otherwise
 * lazily, in batches, the first time a report needs an image that has no current entry.
 */
export class ImageFeatureRecorder {
  constructor(
    private readonly repository: ImageFeaturesRepository,
    private readonly blobs: BlobStore,
  ) {}

  /** Ingest's call, with the file's bytes and the pixels its thumbnail was encoded from: no decode. */
  measure(bytes: Buffer, mimeType: string, pixels: FittedPixels): MeasuredFile {
    const features = measureImageFeatures(pixels, { mimeType, tail: tailOf(bytes) });
    return { features, dhash: features.dhash, fine: features.fine };
  }

  /** Ingest's call once the images have ids. A failure here only leaves the work to the lazy path. */
  async record(images: { id: number; sha256: string; measured: MeasuredFile }[]): Promise<void> {
    if (images.length === 0) return;
    await this.repository.save(
      images.map((i) => toFeatureRow(i.id, i.sha256, i.measured.features)),
      images.map((i) => ({ image_id: i.id, sha256: i.sha256, dhash: i.measured.dhash, fine: i.measured.fine })),
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

  /** Decodes the stored original once (fitted as at ingest) for both the features and the hash. */
  private async measureStored(image: UnmeasuredImage, features: FeatureRow[], hashes: HashRow[]): Promise<void> {
    const bytes = await this.blobs.get(image.blob_key).catch(() => null);
    const original = bytes === null ? null : { mimeType: image.mime_type, tail: tailOf(bytes) };
    const pixels = bytes === null ? null : await fitPixels(bytes).catch(() => null);
    // A missing file is unreadable; an undecodable one too, truncated or not.
    const f = pixels === null ? UNREADABLE_FEATURES(original !== null && isTruncated(original.mimeType, original.tail)) : measureImageFeatures(pixels, original);
    if (!image.has_features) features.push(toFeatureRow(image.id, image.sha256, f));
    if (!image.has_hash) hashes.push({ image_id: image.id, sha256: image.sha256, dhash: f.dhash, fine: f.fine });
  }
}
