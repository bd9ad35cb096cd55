import { identifyImage, probeImage, type ImageRejectionReason, type ProbedImage } from '../../imaging/image-probe.js';
import type { FittedPixels } from '../../imaging/fitted-pixels.js';
import type { ImageType } from '../../imaging/image-type.js';
import type { Metrics } from '../../lib/metrics.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { imageBlobKey, thumbnailBlobKey } from '../../storage/keys.js';

/** How an image file's rejection reads over HTTP, the same for an upload and an import. */
export const REJECTION_STATUS: Record<ImageRejectionReason, number> = {
  empty: 422,
  unsupported_type: 415,
  too_many_pixels: 413,
  undecodable: 422,
};

/** The columns of an image row that ingest decides, the same for an upload and an import. */
export interface IngestedColumns {
  width: number;
  height: number;
  sha256: string;
  mime_type: string;
  size_bytes: number;
  blob_key: string;
  thumbnail_key: string;
}

/** An image file checked and decoded: its type, size and upright thumbnail. */
export interface CheckedImage {
  type: ImageType;
  probed: ProbedImage;
}

/**
 * The one ingest path of an image file, for uploads and dataset imports alike: its type from the magic number, the
 * pixel limit, one decode into the upright thumbnail, then both files under the project's content-addressed keys.
 * What a refused or failed file leaves behind is the caller's to clean (each knows which files it may remove).
 */
export class ImageIngest {
  constructor(
    private readonly blobs: BlobStore,
    private readonly options: { maxImagePixels: number; metrics: Metrics },
  ) {}

  /**
   * Type, pixel limit and decode; throws ImageRejectedError (see REJECTION_STATUS) for a file that is not one.
   * `whileEncoding` measures the fitted pixels while the thumbnail is encoded (see probeImage).
   */
  async check(bytes: Buffer, type: ImageType = identifyImage(bytes), whileEncoding?: (pixels: FittedPixels) => void): Promise<CheckedImage> {
    return { type, probed: await probeImage(bytes, type, { maxPixels: this.options.maxImagePixels }, whileEncoding) };
  }

  /** The keys an image's file and thumbnail are stored under. */
  keys(projectId: number, sha256: string, type: ImageType): { blobKey: string; thumbnailKey: string } {
    return { blobKey: imageBlobKey(projectId, sha256, type.ext), thumbnailKey: thumbnailBlobKey(projectId, sha256) };
  }

  /** The row's columns for a checked file: its size as displayed, hash, type, byte size and the keys of both files. */
  columns(projectId: number, sha256: string, sizeBytes: number, image: { type: ImageType; width: number; height: number }): IngestedColumns {
    const keys = this.keys(projectId, sha256, image.type);
    return { width: image.width, height: image.height, sha256, mime_type: image.type.mime, size_bytes: sizeBytes, blob_key: keys.blobKey, thumbnail_key: keys.thumbnailKey };
  }

  /**
   * Writes both files; when either write fails, rejects with its error once both have settled. Counted in the
   * throughput of `flow`: an upload's ingest or a dataset's import.
   */
  async store(keys: { blobKey: string; thumbnailKey: string }, bytes: Buffer, checked: CheckedImage, flow: 'ingest' | 'import' = 'ingest', original: 'store' | 'referenced' = 'store'): Promise<void> {
    // A referenced original stays where it is (a project storage's bucket): only its thumbnail is Versa's to keep.
    const written = await Promise.allSettled([original === 'store' ? this.blobs.put(keys.blobKey, bytes) : Promise.resolve(), this.blobs.put(keys.thumbnailKey, checked.probed.thumbnail)]);
    const failure = written.find((w) => w.status === 'rejected');
    if (failure) throw failure.reason;
    this.options.metrics.throughput(flow, 1, bytes.length);
  }

  /**
   * Writes the original alone: its thumbnail is made from it when first asked for (ImagesService.thumbnail). A video's
   * frames come this way, so their decoding does not pay for 1,800 thumbnails a minute of video nobody may look at.
   */
  async storeOriginal(blobKey: string, bytes: Buffer): Promise<void> {
    await this.blobs.put(blobKey, bytes);
    this.options.metrics.throughput('ingest', 1, bytes.length);
  }

  /** The thumbnail of a stored image, made from its original (the pixel limit still applies). */
  async thumbnailOf(bytes: Buffer): Promise<Buffer> {
    return (await this.check(bytes)).probed.thumbnail;
  }
}
