/**
 * dHash: the image shrunk to 9×8 grey pixels, one bit per horizontally adjacent pair (left brighter than right).
 * It survives re-encoding, resizing and mild colour changes, which is what a near-duplicate copy usually is; the
 * image is turned upright first so an EXIF-rotated copy hashes like its source.
 */
import sharp from 'sharp';

/** Two images whose dHashes differ in at most this many of 64 bits are near duplicates. */
export const NEAR_DUPLICATE_MAX_DISTANCE = 8;

/** The 64-bit dHash as 16 lowercase hex digits. */
export async function dHash(image: Buffer): Promise<string> {
  const pixels = await sharp(image, { failOn: 'none' })
    .autoOrient()
    .flatten({ background: '#000000' })
    .grayscale()
    .resize(9, 8, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer();
  let hex = '';
  for (let y = 0; y < 8; y++) {
    let byte = 0;
    for (let x = 0; x < 8; x++) byte = (byte << 1) | (pixels[y * 9 + x] > pixels[y * 9 + x + 1] ? 1 : 0);
    hex += byte.toString(16).padStart(2, '0');
  }
  return hex;
}

export function hashHalves(hex: string): [number, number] {
  return [Number.parseInt(hex.slice(0, 8), 16) >>> 0, Number.parseInt(hex.slice(8, 16), 16) >>> 0];
}
