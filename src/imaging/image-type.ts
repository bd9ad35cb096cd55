/** The image formats Versa stores. Anything else (SVG, PDF, HEIC, text…) is refused. */
export interface ImageType {
  readonly name: 'JPEG' | 'PNG' | 'WebP' | 'TIFF' | 'GIF' | 'AVIF';
  readonly mime: string;
  /** Extension, without the dot, that stored file names get. */
  readonly ext: string;
  /** What `sharp().metadata().format` reports for this type. */
  readonly sharpFormat: string;
}

export const IMAGE_TYPES = {
  jpeg: { name: 'JPEG', mime: 'image/jpeg', ext: 'jpg', sharpFormat: 'jpeg' },
  png: { name: 'PNG', mime: 'image/png', ext: 'png', sharpFormat: 'png' },
  webp: { name: 'WebP', mime: 'image/webp', ext: 'webp', sharpFormat: 'webp' },
  tiff: { name: 'TIFF', mime: 'image/tiff', ext: 'tiff', sharpFormat: 'tiff' },
  gif: { name: 'GIF', mime: 'image/gif', ext: 'gif', sharpFormat: 'gif' },
  avif: { name: 'AVIF', mime: 'image/avif', ext: 'avif', sharpFormat: 'heif' },
} as const satisfies Record<string, ImageType>;

export const ACCEPTED_TYPE_NAMES = Object.values(IMAGE_TYPES).map((t) => t.name);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.max(0, Math.min(end, bytes.length) - start)).toString('latin1');
}

/** An ISO-BMFF `ftyp` box whose major or compatible brands name AVIF (still `avif` or sequence `avis`). */
function isAvif(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || ascii(bytes, 4, 8) !== 'ftyp') return false;
  const boxSize = Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32BE(0);
  const end = Math.min(boxSize, bytes.length, 4096);
  const brands = [ascii(bytes, 8, 12)];
  for (let i = 16; i + 4 <= end; i += 4) brands.push(ascii(bytes, i, i + 4));
  return brands.includes('avif') || brands.includes('avis');
}

/**
 * The type of an image from its first bytes (magic numbers). The file name and the declared Content-Type are never
 * consulted: they are whatever the client says.
 */
export function detectImageType(bytes: Uint8Array): ImageType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return IMAGE_TYPES.jpeg;
  if (bytes.length >= 8 && PNG_SIGNATURE.equals(Buffer.from(bytes.buffer, bytes.byteOffset, 8))) return IMAGE_TYPES.png;
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return IMAGE_TYPES.webp;
  if (bytes.length >= 4) {
    const head = ascii(bytes, 0, 4);
    // Classic TIFF (42) and BigTIFF (43), little- and big-endian.
    if (head === 'II*\0' || head === 'MM\0*' || head === 'II+\0' || head === 'MM\0+') return IMAGE_TYPES.tiff;
  }
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) return IMAGE_TYPES.gif;
  if (isAvif(bytes)) return IMAGE_TYPES.avif;
  return null;
}
