/**
 * dHash: the image shrunk to 9×8 grey cells, one bit per horizontally adjacent pair (left brighter than right).
 * It survives re-encoding, resizing and mild colour changes, which is what a near-duplicate copy usually is; the
 * image is turned upright first so an EXIF-rotated copy hashes like its source.
 */
import { fitPixels, greyLevels, opaqueRgb } from './fitted-pixels.js';

/** Two images whose dHashes differ in at most this many of 64 bits are near duplicates. */
export const NEAR_DUPLICATE_MAX_DISTANCE = 8;

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
  // Pixel x is in column ⌊9x / width⌋ and row ⌊8y / height⌋: each cell is a rectangle, summed a run at a time.
  const columns = Int32Array.from({ length: 10 }, (_, c) => (c === 9 ? width : Math.ceil((c * width) / 9)));
  const rows = Int32Array.from({ length: 9 }, (_, r) => (r === 8 ? height : Math.ceil((r * height) / 8)));
  const cells = new Float64Array(72);
  for (let r = 0; r < 8; r++) {
    for (let c = 0; c < 9; c++) {
      let sum = 0;
      for (let y = rows[r]; y < rows[r + 1]; y++) {
        for (let i = y * width + columns[c], end = y * width + columns[c + 1]; i < end; i++) sum += grey[i];
      }
      const count = (rows[r + 1] - rows[r]) * (columns[c + 1] - columns[c]);
      cells[r * 9 + c] = count ? sum / count : 0;
    }
  }
  let hex = '';
  for (let y = 0; y < 8; y++) {
    let byte = 0;
    for (let x = 0; x < 8; x++) byte = (byte << 1) | (cells[y * 9 + x] > cells[y * 9 + x + 1] ? 1 : 0);
    hex += byte.toString(16).padStart(2, '0');
  }
  return hex;
}

export function hashHalves(hex: string): [number, number] {
  return [Number.parseInt(hex.slice(0, 8), 16) >>> 0, Number.parseInt(hex.slice(8, 16), 16) >>> 0];
}
