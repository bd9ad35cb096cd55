import sharp, { type OutputInfo } from 'sharp';
import { endianness } from 'node:os';
import { UnreadableImageError } from './errors.js';

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * How an (EXIF-oriented) original image was placed into a model's input: scaled by `scaleX`/`scaleY` (the resized
 * size over the original, which differ slightly after rounding) and offset by the padding. Coordinates are in pixel
 * edges: (0, 0) is the top-left corner of the first pixel, (width, height) the bottom-right corner of the last.
 */
export interface LetterboxTransform {
  originalWidth: number;
  originalHeight: number;
  inputWidth: number;
  inputHeight: number;
  resizedWidth: number;
  resizedHeight: number;
  scaleX: number;
  scaleY: number;
  padLeft: number;
  padTop: number;
}

export interface LetterboxOptions {
  /** Where the resized image sits: centred (YOLO letterbox) or in the top-left corner (SAM). */
  align?: 'center' | 'top-left';
  /** Grey level of the padding (Ultralytics pads with 114). */
  padValue?: number;
  /** Largest decoded image accepted, in pixels. */
  limitInputPixels?: number;
}

/** The letterboxed image as interleaved RGB bytes, row-major, `inputWidth × inputHeight × 3`. */
export interface LetterboxedImage {
  rgb: Uint8Array;
  transform: LetterboxTransform;
}

/** Orientation-corrected size of an encoded image. */
export async function orientedSize(image: Uint8Array, limitInputPixels?: number): Promise<{ width: number; height: number }> {
  try {
    const metadata = await sharp(image, { limitInputPixels: limitInputPixels ?? true }).metadata();
    return { width: metadata.autoOrient.width, height: metadata.autoOrient.height };
  } catch (error) {
    throw new UnreadableImageError(`The image could not be decoded: ${(error as Error).message}`);
  }
}

/** Where an `originalWidth × originalHeight` image goes in a `width × height` input (pure geometry). */
export function letterboxTransform(
  originalWidth: number,
  originalHeight: number,
  width: number,
  height: number,
  align: 'center' | 'top-left' = 'center',
): LetterboxTransform {
  const ratio = Math.min(width / originalWidth, height / originalHeight);
  const resizedWidth = Math.max(1, Math.min(width, Math.round(originalWidth * ratio)));
  const resizedHeight = Math.max(1, Math.min(height, Math.round(originalHeight * ratio)));
  const centred = align === 'center';
  // Ultralytics rounds the two halves of an odd padding with a 0.1 bias so the extra pixel goes right/bottom.
  const padLeft = centred ? Math.max(0, Math.round((width - resizedWidth) / 2 - 0.1)) : 0;
  const padTop = centred ? Math.max(0, Math.round((height - resizedHeight) / 2 - 0.1)) : 0;
  return {
    originalWidth,
    originalHeight,
    inputWidth: width,
    inputHeight: height,
    resizedWidth,
    resizedHeight,
    scaleX: resizedWidth / originalWidth,
    scaleY: resizedHeight / originalHeight,
    padLeft,
    padTop,
  };
}

/**
 * Decodes an image, applies its EXIF orientation and scales it to its letterboxed size, without the padding: one
 * sharp pass, interleaved RGB bytes `resizedWidth × resizedHeight × 3`. The padding is cheaper to write straight
 * into the model's tensor (`toInputTensor`) than to have sharp extend and copy the whole frame.
 */
export async function resizeForInput(image: Uint8Array, width: number, height: number, options: LetterboxOptions = {}): Promise<LetterboxedImage> {
  const limitInputPixels = options.limitInputPixels ?? true;
  const { width: originalWidth, height: originalHeight } = await orientedSize(image, options.limitInputPixels);
  const transform = letterboxTransform(originalWidth, originalHeight, width, height, options.align);
  let raw: { data: Buffer; info: OutputInfo };
  try {
    raw = await sharp(image, { limitInputPixels })
      .autoOrient()
      .resize(transform.resizedWidth, transform.resizedHeight, { fit: 'fill', kernel: 'linear' })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw new UnreadableImageError(`The image could not be decoded: ${(error as Error).message}`);
  }
  const rgb = raw.info.channels === 3 ? new Uint8Array(raw.data.buffer, raw.data.byteOffset, raw.data.length) : toRgb(raw.data, raw.info.channels);
  return { rgb, transform };
}

/**
 * Decodes an image, applies its EXIF orientation, scales it to fit `width × height` keeping its aspect ratio and
 * pads the rest, like Ultralytics' LetterBox (centred, grey 114) or SAM's ResizeLongestSide (top-left, black).
 * Returns the whole padded frame as interleaved RGB (the inference path uses `resizeForInput` + `toInputTensor`).
 */
export async function letterbox(image: Uint8Array, width: number, height: number, options: LetterboxOptions = {}): Promise<LetterboxedImage> {
  const { rgb: resized, transform } = await resizeForInput(image, width, height, options);
  const grey = options.padValue ?? ((options.align ?? 'center') === 'center' ? 114 : 0);
  const rgb = new Uint8Array(width * height * 3).fill(grey);
  const rowBytes = transform.resizedWidth * 3;
  for (let y = 0; y < transform.resizedHeight; y++) {
    rgb.set(resized.subarray(y * rowBytes, (y + 1) * rowBytes), ((y + transform.padTop) * width + transform.padLeft) * 3);
  }
  return { rgb, transform };
}

function toRgb(data: Uint8Array, channels: number): Uint8Array {
  const pixels = data.length / channels;
  const rgb = new Uint8Array(pixels * 3);
  for (let i = 0; i < pixels; i++) {
    const grey = channels < 3;
    rgb[i * 3] = data[i * channels];
    rgb[i * 3 + 1] = data[i * channels + (grey ? 0 : 1)];
    rgb[i * 3 + 2] = data[i * channels + (grey ? 0 : 2)];
  }
  return rgb;
}

/**
 * Interleaved RGB bytes → planar float32 NCHW `[1, 3, H, W]`: `value / 255` by default, or `(value - mean) / std`
 * per channel in 0–255 units as SAM normalises. With `region`, only its top-left `width × height` is filled and the
 * rest stays 0 (SAM pads after normalising).
 */
export function toNchw(
  rgb: Uint8Array,
  width: number,
  height: number,
  normalise?: { mean: readonly number[]; std: readonly number[] },
  region: { width: number; height: number } = { width, height },
): Float32Array {
  const plane = width * height;
  const out = new Float32Array(plane * 3);
  for (let c = 0; c < 3; c++) {
    const scale = normalise ? 1 / normalise.std[c] : 1 / 255;
    const shift = normalise ? normalise.mean[c] : 0;
    for (let y = 0; y < region.height; y++) {
      const row = y * width;
      for (let x = 0, i = c * plane + row, j = row * 3 + c; x < region.width; x++, i++, j += 3) out[i] = (rgb[j] - shift) * scale;
    }
  }
  return out;
}

export interface InputTensorOptions {
  /** Per-channel `(value - mean) / std` in 0–255 units (SAM); `value / 255` when absent (YOLO). */
  normalise?: { mean: readonly number[]; std: readonly number[] };
  /** Grey level of the padding before scaling; ignored with `normalise`, whose padding is 0 after normalising (SAM). */
  padValue?: number;
  /** A buffer of `3 × inputWidth × inputHeight` to fill instead of allocating one (it is overwritten entirely). */
  into?: Float32Array;
}

/**
 * The resized image of `resizeForInput` → the model's planar float32 NCHW `[1, 3, H, W]` input, padding included,
 * in one pass over the pixels.
 */
/** The letterbox's border in each channel plane: the rows above and below the image, and the columns beside it. */
function fillPadding(out: Float32Array, t: LetterboxTransform, pads: number[]): void {
  const { inputWidth: width, inputHeight: height, resizedWidth, resizedHeight, padLeft, padTop } = t;
  const plane = width * height;
  for (let c = 0; c < 3; c++) {
    const pad = pads[c];
    const base = c * plane;
    out.fill(pad, base, base + padTop * width);
    out.fill(pad, base + (padTop + resizedHeight) * width, base + plane);
    if (resizedWidth >= width) continue;
    for (let y = padTop; y < padTop + resizedHeight; y++) {
      const row = base + y * width;
      out.fill(pad, row, row + padLeft);
      out.fill(pad, row + padLeft + resizedWidth, row + width);
    }
  }
}

/** The resized image's pixels into the three planes inside the border, each value × scale + shift of its channel. */
function copyPixels(rgb: Uint8Array, t: LetterboxTransform, out: Float32Array, scale: number[], shift: number[]): void {
  const { inputWidth: width, inputHeight: height, resizedWidth, resizedHeight, padLeft, padTop } = t;
  const plane = width * height;
  const [sr, sg, sb] = scale;
  const [hr, hg, hb] = shift;
  const r = out.subarray(0, plane);
  const g = out.subarray(plane, 2 * plane);
  const b = out.subarray(2 * plane);
  // Four pixels (12 bytes) are read as three 32-bit words where the bytes allow it: 1.7× faster than byte reads
  // (2.1 → 1.2 ms for 640 × 640, which is 1.5% of a YOLOv8n-sized run on one core).
  const skew = rgb.byteOffset & 3;
  const words = LITTLE_ENDIAN ? new Uint32Array(rgb.buffer, rgb.byteOffset - skew, (skew + rgb.length) >> 2) : null;
  for (let y = 0; y < resizedHeight; y++) {
    let i = (y + padTop) * width + padLeft;
    let j = y * resizedWidth * 3;
    const end = i + resizedWidth;
    if (words) {
      // Single pixels until the source is at a word boundary (3 is invertible mod 4: at most three), then words.
      for (; i < end && (j + skew) & 3; i++, j += 3) {
        r[i] = rgb[j] * sr + hr;
        g[i] = rgb[j + 1] * sg + hg;
        b[i] = rgb[j + 2] * sb + hb;
      }
      for (let q = (j + skew) >> 2; i + 4 <= end; i += 4, j += 12, q += 3) {
        const w0 = words[q];
        const w1 = words[q + 1];
        const w2 = words[q + 2];
        r[i] = (w0 & 255) * sr + hr;
        g[i] = ((w0 >>> 8) & 255) * sg + hg;
        b[i] = ((w0 >>> 16) & 255) * sb + hb;
        r[i + 1] = (w0 >>> 24) * sr + hr;
        g[i + 1] = (w1 & 255) * sg + hg;
        b[i + 1] = ((w1 >>> 8) & 255) * sb + hb;
        r[i + 2] = ((w1 >>> 16) & 255) * sr + hr;
        g[i + 2] = (w1 >>> 24) * sg + hg;
        b[i + 2] = (w2 & 255) * sb + hb;
        r[i + 3] = ((w2 >>> 8) & 255) * sr + hr;
        g[i + 3] = ((w2 >>> 16) & 255) * sg + hg;
        b[i + 3] = (w2 >>> 24) * sb + hb;
      }
    }
    for (; i < end; i++, j += 3) {
      r[i] = rgb[j] * sr + hr;
      g[i] = rgb[j + 1] * sg + hg;
      b[i] = rgb[j + 2] * sb + hb;
    }
  }
}

export function toInputTensor(rgb: Uint8Array, t: LetterboxTransform, options: InputTensorOptions = {}): Float32Array {
  const { inputWidth: width, inputHeight: height, resizedWidth, resizedHeight, padLeft, padTop } = t;
  const plane = width * height;
  const out = options.into ?? new Float32Array(plane * 3);
  if (out.length !== plane * 3) throw new Error(`input buffer holds ${out.length} values; [1, 3, ${height}, ${width}] needs ${plane * 3}`);
  const { normalise } = options;
  // value × scale + shift per channel: `value / 255`, or `(value - mean) / std`.
  const scale = [0, 1, 2].map((c) => (normalise ? 1 / normalise.std[c] : 1 / 255));
  const shift = [0, 1, 2].map((c) => (normalise ? -normalise.mean[c] / normalise.std[c] : 0));
  fillPadding(out, t, [0, 1, 2].map((c) => (normalise ? 0 : Math.round(options.padValue ?? 114) * scale[c])));
  copyPixels(rgb, t, out, scale, shift);
  return out;
}

/**
 * The resized image of `resizeForInput` as an interleaved `[H, W, 3]` input in 0–255 units, for models that
 * normalise and pad inside (SAM encoders exported with their pre-processing). `padded`: the full input frame, the
 * padding filled with `pad` (per channel); otherwise just the resized image, for inputs with free height and width.
 */
export function toHwcTensor(
  rgb: Uint8Array,
  t: LetterboxTransform,
  options: { padded: boolean; pad?: readonly number[]; type: 'float32' | 'uint8' },
): { data: Float32Array | Uint8Array; height: number; width: number } {
  const width = options.padded ? t.inputWidth : t.resizedWidth;
  const height = options.padded ? t.inputHeight : t.resizedHeight;
  const data = options.type === 'uint8' ? new Uint8Array(width * height * 3) : new Float32Array(width * height * 3);
  if (options.padded) {
    const pad = options.pad ?? [0, 0, 0];
    for (let i = 0; i < width * height * 3; i += 3) {
      data[i] = pad[0];
      data[i + 1] = pad[1];
      data[i + 2] = pad[2];
    }
  }
  const row = t.resizedWidth * 3;
  const left = options.padded ? t.padLeft : 0;
  const top = options.padded ? t.padTop : 0;
  for (let y = 0; y < t.resizedHeight; y++) data.set(rgb.subarray(y * row, (y + 1) * row), ((y + top) * width + left) * 3);
  return { data, height, width };
}

/** A point in the model input frame → the original (oriented) image's pixels, clamped to the image. */
export function toOriginal(t: LetterboxTransform, x: number, y: number, clampToImage = true): [number, number] {
  const [ox, oy] = [(x - t.padLeft) / t.scaleX, (y - t.padTop) / t.scaleY];
  return clampToImage ? [clamp(ox, 0, t.originalWidth), clamp(oy, 0, t.originalHeight)] : [ox, oy];
}

/** A point in the original image's pixels → the model input frame. */
export function toInput(t: LetterboxTransform, x: number, y: number): [number, number] {
  return [x * t.scaleX + t.padLeft, y * t.scaleY + t.padTop];
}

function clamp(value: number, min: number, max: number): number {
  return value < min ? min : value > max ? max : value;
}
