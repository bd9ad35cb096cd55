/**
 * The pixels every stored image's thumbnail is encoded from: upright, fitted into THUMBNAIL_SIZE, 8-bit sRGB. Ingest
 * keeps them after making the thumbnail, so the quality features and the dHash are measured without another decode;
 * a stored file is fitted the same way when it must be measured later.
 */
import sharp, { type Sharp } from 'sharp';

/** Longest side of the WebP thumbnail made for every stored image. */
export const THUMBNAIL_SIZE = 256;

/** An image upright and fitted into THUMBNAIL_SIZE, as 8-bit sRGB raw pixels (3 channels, or 4 with alpha). */
export interface FittedPixels {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  readonly channels: number;
}

/** An opened image turned upright and fitted into THUMBNAIL_SIZE, never enlarged: the thumbnail's geometry. */
const fit = (image: Sharp): Sharp => image.autoOrient().resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true });

/**
 * The thumbnail's WebP settings. Encoder effort 2 instead of the default 4: for a thumbnail this size the file is
 * about 5% larger and the encode, the largest part of the work after decoding, about a third cheaper.
 */
const WEBP = { effort: 2 } as const;

/** An opened image upright, fitted into THUMBNAIL_SIZE (never enlarged), as raw 8-bit sRGB pixels. */
export async function fitted(image: Sharp): Promise<FittedPixels> {
  const { data, info } = await fit(image)
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** A stored file's fitted pixels. */
export function fitPixels(bytes: Buffer): Promise<FittedPixels> {
  return fitted(sharp(bytes, { failOn: 'none' }));
}

/** The WebP thumbnail of fitted pixels. */
export function encodeThumbnail(pixels: FittedPixels): Promise<Buffer> {
  return sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels as 3 | 4 } }).webp(WEBP).toBuffer();
}

/**
 * The WebP thumbnail of an opened image in one pipeline, when nothing needs its pixels: decoding, fitting and
 * encoding in one libvips pipeline costs about 1 ms less than `fitted` then `encodeThumbnail` (1280 × 960 JPEG).
 */
export function thumbnailOf(image: Sharp): Promise<Buffer> {
  return fit(image).webp(WEBP).toBuffer();
}

/** RGB bytes of fitted pixels, alpha (when there is a fourth channel) laid over black. */
export function opaqueRgb(pixels: FittedPixels): Buffer {
  if (pixels.channels === 3) return pixels.data;
  const n = pixels.width * pixels.height;
  const out = Buffer.alloc(n * 3);
  for (let i = 0, p = 0, q = 0; i < n; i++, p += pixels.channels, q += 3) {
    const a = pixels.data[p + 3] / 255;
    out[q] = Math.round(pixels.data[p] * a);
    out[q + 1] = Math.round(pixels.data[p + 1] * a);
    out[q + 2] = Math.round(pixels.data[p + 2] * a);
  }
  return out;
}

/** The grey level of an RGB pixel: Rec. 601 luma in 16-bit fixed point, rounded to 0–255. */
export const luma = (r: number, g: number, b: number): number => (19595 * r + 38470 * g + 7471 * b + 32768) >>> 16;

/** Grey level (luma) of each pixel of opaque RGB bytes. */
export function greyLevels(rgb: Buffer, count: number): Uint8Array {
  const grey = new Uint8Array(count);
  for (let i = 0, p = 0; i < count; i++, p += 3) grey[i] = luma(rgb[p], rgb[p + 1], rgb[p + 2]);
  return grey;
}
