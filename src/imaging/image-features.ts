/**
 * Per-image quality features, measured on the pixels the upload's thumbnail is encoded from (upright, longest side
 * 256 px; see FittedPixels): ingest has them in memory, so measuring costs no decode at all. Blur is the variance of the 4-neighbour Laplacian of the grey image,
 * brightness the mean grey level, entropy that of the 256-bin grey histogram; an image is grayscale when its
 * channels (nearly) agree everywhere. Truncation is read from the original's last bytes (a JPEG ends with FF D9, a
 * PNG with its IEND chunk), which costs no decode at all.
 */
import { createHash } from 'node:crypto';
import { luma, opaqueRgb, type FittedPixels } from './fitted-pixels.js';
import { dHashOfGrey, fineHashOfGrey } from './perceptual-hash.js';

export interface ImageFeatures {
  readable: boolean;
  truncated: boolean;
  blur: number;
  brightness: number;
  entropy: number;
  grayscale: boolean;
  /** SHA-1 of the fitted RGB pixels and size: the same picture in another encoding hashes the same. */
  pixelHash: string;
  /** The 64-bit dHash (see perceptual-hash.ts) of the same pixels. */
  dhash: string;
  /** The 256-bit fine hash of the same pixels, which confirms the dHash's near duplicates. */
  fine: string;
}

/** The dHash recorded for an image that cannot be decoded, so it is not tried again; the checks skip unreadable images. */
const UNREADABLE_DHASH = '0000000000000000';

/** What an undecodable image measures as: unreadable, and matching nothing. */
export const UNREADABLE_FEATURES = (truncated: boolean): ImageFeatures => ({
  readable: false,
  truncated,
  blur: 0,
  brightness: 0,
  entropy: 0,
  grayscale: false,
  pixelHash: 'unreadable',
  dhash: UNREADABLE_DHASH,
  fine: UNREADABLE_DHASH.repeat(4),
});

/** Channel spread (max − min) below which a pixel counts as grey; JPEG chroma noise stays under it. */
const GREY_SPREAD = 12;

/** The original file's type and last bytes (TAIL_BYTES), for the truncation test. */
export interface OriginalEnd {
  mimeType: string;
  tail: Uint8Array;
}

/** Measures fitted pixels (see FittedPixels): alpha is laid over black, as the thumbnail shows it. Pure and cheap. */
export function measureImageFeatures(pixels: FittedPixels, original: OriginalEnd | null): ImageFeatures {
  const truncated = original ? isTruncated(original.mimeType, original.tail) : false;
  const { width, height } = pixels;
  const data = opaqueRgb(pixels);
  const n = width * height;
  // One pass: grey levels (luma), their sum and histogram, and the coloured pixels (channels spreading more than
  // GREY_SPREAD: max − min is the largest pairwise difference).
  const grey = new Uint8Array(n);
  const histogram = new Uint32Array(256);
  let sum = 0;
  let colourPixels = 0;
  for (let i = 0, p = 0; i < n; i++, p += 3) {
    const r = data[p];
    const g = data[p + 1];
    const b = data[p + 2];
    const level = luma(r, g, b);
    grey[i] = level;
    sum += level;
    histogram[level]++;
    const rg = r - g;
    const gb = g - b;
    const br = b - r;
    if (rg > GREY_SPREAD || rg < -GREY_SPREAD || gb > GREY_SPREAD || gb < -GREY_SPREAD || br > GREY_SPREAD || br < -GREY_SPREAD) colourPixels++;
  }
  let entropy = 0;
  for (const count of histogram) {
    if (count === 0) continue;
    const q = count / n;
    entropy -= q * Math.log2(q);
  }
  return {
    readable: true,
    truncated,
    blur: laplacianVariance(grey, width, height),
    brightness: sum / n,
    entropy,
    grayscale: colourPixels <= n * 0.01,
    pixelHash: createHash('sha1').update(`${width}x${height}:`).update(data).digest('hex'),
    dhash: dHashOfGrey(grey, width, height),
    fine: fineHashOfGrey(grey, width, height),
  };
}

function laplacianVariance(grey: Uint8Array, width: number, height: number): number {
  if (width < 3 || height < 3) return 0;
  let sum = 0;
  let sumSq = 0;
  let count = 0;
  for (let y = 1; y < height - 1; y++) {
    const row = y * width;
    for (let x = 1; x < width - 1; x++) {
      const i = row + x;
      const v = grey[i - 1] + grey[i + 1] + grey[i - width] + grey[i + width] - 4 * grey[i];
      sum += v;
      sumSq += v * v;
      count++;
    }
  }
  const mean = sum / count;
  return sumSq / count - mean * mean;
}

/** Bytes of the original's end the truncation test reads. */
export const TAIL_BYTES = 32;

/** A JPEG or PNG whose end marker is missing was cut off; other formats are not judged. */
export function isTruncated(mimeType: string, tail: Uint8Array): boolean {
  if (mimeType === 'image/png') return !Buffer.from(tail).toString('latin1').includes('IEND');
  if (mimeType !== 'image/jpeg') return false;
  // Some writers pad after the end marker.
  let end = tail.length;
  while (end > 2 && (tail[end - 1] === 0x00 || tail[end - 1] === 0x0a || tail[end - 1] === 0x0d || tail[end - 1] === 0x20)) end--;
  return !(end >= 2 && tail[end - 2] === 0xff && tail[end - 1] === 0xd9);
}

/** The last TAIL_BYTES of a file, given whole. */
export const tailOf = (bytes: Uint8Array): Uint8Array => bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES));

