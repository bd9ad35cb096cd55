import sharp from 'sharp';

/** The pixels the dataset formats (src/formats) read and write: image sizes from headers, mask bitmaps, mask PNGs. */

export interface Size {
  width: number;
  height: number;
}

/** Width and height from an image's header (no full decode), as displayed: EXIF orientations 5–8 swap them. */
export async function headerSize(input: string | Buffer | Uint8Array): Promise<Size> {
  const meta = await sharp(input).metadata();
  if (!meta.width || !meta.height) throw new Error('no dimensions');
  return (meta.orientation ?? 1) >= 5 ? { width: meta.height, height: meta.width } : { width: meta.width, height: meta.height };
}

/** A mask image's first channel, one byte a pixel; stretched to `size` (nearest neighbour) when given. */
export async function maskChannel(input: string | Buffer, size?: Size): Promise<{ data: Buffer } & Size> {
  const image = size ? sharp(input).resize(size.width, size.height, { fit: 'fill', kernel: 'nearest' }) : sharp(input);
  const { data, info } = await image.extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** A colour-coded mask as sRGB bytes (three a pixel, alpha dropped), stretched to `size` (nearest neighbour). */
export function maskColours(path: string, size: Size): Promise<Buffer> {
  return sharp(path).removeAlpha().toColourspace('srgb').resize(size.width, size.height, { fit: 'fill', kernel: 'nearest' }).raw().toBuffer();
}

/** One byte a pixel encoded as a greyscale PNG. */
export function greyPng(pixels: Buffer | Uint8Array, size: Size, compressionLevel?: number): Promise<Buffer> {
  const bytes = Buffer.isBuffer(pixels) ? pixels : Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength);
  return sharp(bytes, { raw: { width: size.width, height: size.height, channels: 1 } }).png(compressionLevel === undefined ? {} : { compressionLevel }).toBuffer();
}

/**
 * A mask image's foreground, 1 or 0 a pixel: where its alpha is not 0 when it has an alpha channel, else where any
 * channel is not 0 (labelme stores masks as 0/1 bytes, LabelMe 3.0 and CVAT as coloured RGBA, MIT LabelMe as 0/255).
 */
export async function maskForeground(input: string | Buffer): Promise<{ data: Uint8Array } & Size> {
  const { data, info } = await sharp(input).raw().toBuffer({ resolveWithObject: true });
  const out = new Uint8Array(info.width * info.height);
  const c = info.channels;
  const alpha = c === 2 || c === 4;
  for (let i = 0, p = 0; i < out.length; i++, p += c) {
    if (alpha) out[i] = data[p + c - 1] > 0 ? 1 : 0;
    else for (let k = 0; k < c; k++) if (data[p + k] > 0) { out[i] = 1; break; }
  }
  return { data: out, width: info.width, height: info.height };
}
