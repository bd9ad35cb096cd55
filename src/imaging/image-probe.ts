import sharp, { type Metadata } from 'sharp';
import { encodeThumbnail, fitted, thumbnailOf, type FittedPixels } from './fitted-pixels.js';
import { ACCEPTED_TYPE_NAMES, detectImageType, IMAGE_TYPES, type ImageType } from './image-type.js';


export type ImageRejectionReason = 'empty' | 'unsupported_type' | 'too_many_pixels' | 'undecodable';

/** The bytes are not an image Versa stores; `reason` says why, the message says it to a person. */
export class ImageRejectedError extends Error {
  constructor(
    readonly reason: ImageRejectionReason,
    message: string,
  ) {
    super(message);
  }
}

export interface ImageLimits {
  /** Largest accepted width × height of the encoded image. */
  readonly maxPixels: number;
}

export interface ProbedImage {
  readonly type: ImageType;
  /** As displayed: EXIF orientations 5–8 swap the encoded width and height. */
  readonly width: number;
  readonly height: number;
  /** WebP, upright (EXIF orientation applied), longest side at most THUMBNAIL_SIZE. */
  readonly thumbnail: Buffer;
}

/** The type of the bytes by their magic numbers; throws ImageRejectedError for empty or unsupported input. */
export function identifyImage(bytes: Uint8Array): ImageType {
  if (bytes.length === 0) throw new ImageRejectedError('empty', 'The file is empty');
  const type = detectImageType(bytes);
  if (!type) {
    throw new ImageRejectedError(
      'unsupported_type',
      `Unsupported file type: only ${ACCEPTED_TYPE_NAMES.join(', ')} images are accepted`,
    );
  }
  return type;
}

/**
 * Reads the header for the size (refusing images over the pixel limit before anything is decoded), then decodes
 * once to make the thumbnail: in one pipeline, or, when `whileEncoding` wants the fitted pixels (the quality
 * features at upload), into those pixels and then the thumbnail from them. The input bytes are only read, never
 * changed.
 */
export async function probeImage(bytes: Buffer, type: ImageType, limits: ImageLimits, whileEncoding?: (pixels: FittedPixels) => void): Promise<ProbedImage> {
  // sharp's own pixel limit would fail the header read itself; the limit is checked below, before anything decodes.
  const image = sharp(bytes, { limitInputPixels: false });
  let metadata: Metadata;
  try {
    metadata = await image.metadata();
  } catch {
    throw undecodable(type);
  }
  if (metadata.format !== type.sharpFormat || !metadata.width || !metadata.height) throw undecodable(type);
  // HEIF files that claim an AVIF brand but carry HEVC are HEIC, which is not accepted.
  if (type === IMAGE_TYPES.avif && metadata.compression !== 'av1') {
    throw new ImageRejectedError('unsupported_type', 'Unsupported file type: HEIF images other than AVIF are not accepted');
  }
  const count = metadata.width * metadata.height;
  if (count > limits.maxPixels) {
    throw new ImageRejectedError(
      'too_many_pixels',
      `The image has ${metadata.width}×${metadata.height} = ${count.toLocaleString('en')} pixels; the limit is ${limits.maxPixels.toLocaleString('en')}`,
    );
  }
  const swapped = (metadata.orientation ?? 1) >= 5;
  const width = metadata.autoOrient?.width ?? (swapped ? metadata.height : metadata.width);
  const height = metadata.autoOrient?.height ?? (swapped ? metadata.width : metadata.height);

  if (!whileEncoding) {
    try {
      return { type, width, height, thumbnail: await thumbnailOf(image) };
    } catch {
      throw undecodable(type);
    }
  }
  let pixels: FittedPixels;
  try {
    pixels = await fitted(image);
  } catch {
    throw undecodable(type);
  }
  // The WebP encode runs on libuv's thread pool: `whileEncoding` (the quality features) measures the pixels on this
  // thread meanwhile, instead of after it.
  const encoding = encodeThumbnail(pixels);
  try {
    whileEncoding(pixels);
  } catch (err) {
    await encoding.catch(() => undefined);
    throw err;
  }
  try {
    return { type, width, height, thumbnail: await encoding };
  } catch {
    throw undecodable(type);
  }
}

function undecodable(type: ImageType): ImageRejectedError {
  return new ImageRejectedError('undecodable', `The file starts like a ${type.name} image but could not be decoded`);
}

/** The EXIF orientation an image file declares (1, upright, when it declares none). */
export async function exifOrientation(bytes: Buffer): Promise<number> {
  return (await sharp(bytes).metadata()).orientation ?? 1;
}
