/**
 * dHash: the image shrunk to 9×8 grey cells, one bit per horizontally adjacent pair (left brighter than right).
 * It survives re-encoding, resizing and mild colour changes, which is what a near-duplicate copy usually is; the
 * image is turned upright first so an EXIF-rotated copy hashes like its source.
 */
import { fitPixels, greyLevels, opaqueRgb } from './fitted-pixels.js';

/** Two images whose dHashes differ in at most this many of 64 bits are near duplicates. */
export const NEAR_DUPLICATE_MAX_DISTANCE = 8;

/**
 * The most bits of 256 in which the fine hashes (fineHashOfGrey) of two copies of one photo differ. Measured by
 * bench/near-duplicates.ts on real photos: re-encodes, half-size copies, 10 % brighter copies and WebP conversions
 * stay within it, while different photos of one scene (one play mat, one webcam) mostly do not — which the 64-bit
 * hash alone cannot tell apart at any distance (README, Data quality).
 */
export const FINE_MAX_DISTANCE = 12;

/** The 64-bit dHash of an image file (decoded and fitted as for its thumbnail), as 16 lowercase hex digits. */
export async function dHash(image: Buffer): Promise<string> {
  const pixels = await fitPixels(image);
  return dHashOfGrey(greyLevels(opaqueRgb(pixels), pixels.width * pixels.height), pixels.width, pixels.height);
}

/**
 * The dHash of fitted pixels' grey levels: averaged over a 9×8 grid of areas, one bit per horizontally adjacent pair
 * of cells (left brighter than right). Ingest hashes the pixels it already has (image-features.ts); files hash
 * through `dHash`: one definition.
 */
export function dHashOfGrey(grey: Uint8Array, width: number, height: number): string {
  return gridHash(grey, width, height, 8);
}

/** The fine hash: the dHash on a 17 × 16 grid (256 bits, 64 hex digits), from the same grey levels. */
export function fineHashOfGrey(grey: Uint8Array, width: number, height: number): string {
  return gridHash(grey, width, height, 16);
}

/** The bits in which two hex hashes of one length differ. */
export function hashDistance(a: string, b: string): number {
  let bits = 0;
  for (let i = 0; i < a.length; i += 8) bits += popcount32((Number.parseInt(a.slice(i, i + 8), 16) ^ Number.parseInt(b.slice(i, i + 8), 16)) >>> 0);
  return bits;
}

/** The set bits of a 32-bit value. */
export function popcount32(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** `size` rows of `size + 1` cell averages, one bit per horizontally adjacent pair (left brighter than right). */
function gridHash(grey: Uint8Array, width: number, height: number, size: number): string {
  // Pixel x is in column ⌊(size+1)x / width⌋ and row ⌊size·y / height⌋: each cell is a rectangle, summed a run at a time.
  const across = size + 1;
  const columns = Int32Array.from({ length: across + 1 }, (_, c) => (c === across ? width : Math.ceil((c * width) / across)));
  const rows = Int32Array.from({ length: size + 1 }, (_, r) => (r === size ? height : Math.ceil((r * height) / size)));
  const cells = new Float64Array(across * size);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < across; c++) {
      let sum = 0;
      for (let y = rows[r]; y < rows[r + 1]; y++) {
        for (let i = y * width + columns[c], end = y * width + columns[c + 1]; i < end; i++) sum += grey[i];
      }
      const count = (rows[r + 1] - rows[r]) * (columns[c + 1] - columns[c]);
      cells[r * across + c] = count ? sum / count : 0;
    }
  }
  let hex = '';
  for (let y = 0; y < size; y++) {
    for (let x0 = 0; x0 < size; x0 += 8) {
      let byte = 0;
      for (let x = x0; x < x0 + 8; x++) byte = (byte << 1) | (cells[y * across + x] > cells[y * across + x + 1] ? 1 : 0);
      hex += byte.toString(16).padStart(2, '0');
    }
  }
  return hex;
}

export function hashHalves(hex: string): [number, number] {
  return [Number.parseInt(hex.slice(0, 8), 16) >>> 0, Number.parseInt(hex.slice(8, 16), 16) >>> 0];
}
