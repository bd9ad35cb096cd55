import sharp from 'sharp';

export interface Square {
  x: number;
  y: number;
  width: number;
  height: number;
  colour: [number, number, number];
}

const BACKGROUND: [number, number, number] = [20, 20, 20];

/** Raw RGB pixels of coloured rectangles on a dark background: the ground truth the test models must find. */
export function drawSquares(width: number, height: number, squares: readonly Square[]): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) pixels.set(BACKGROUND, i * 3);
  for (const s of squares) {
    for (let y = s.y; y < s.y + s.height; y++) {
      for (let x = s.x; x < s.x + s.width; x++) pixels.set(s.colour, (y * width + x) * 3);
    }
  }
  return pixels;
}

export function squaresPng(width: number, height: number, squares: readonly Square[]): Promise<Buffer> {
  return sharp(drawSquares(width, height, squares), { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/**
 * A JPEG whose pixels are stored rotated 90° anticlockwise with EXIF orientation 6, so a viewer that honours EXIF
 * (and Versa) shows exactly the `width × height` picture of `squares`.
 */
export async function exifRotatedJpeg(width: number, height: number, squares: readonly Square[]): Promise<Buffer> {
  const upright = await sharp(drawSquares(width, height, squares), { raw: { width, height, channels: 3 } }).png().toBuffer();
  return sharp(upright).rotate(270).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).withMetadata({ orientation: 6 }).toBuffer();
}
