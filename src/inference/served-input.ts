/**
 * A model sees at inference what it saw in training. A model trained on a dataset version learnt from the version's
 * images, which the version's preprocessing made (auto-orient, static crop, tiles, a resize that may stretch, grey,
 * contrast); its ONNX file carries that preprocessing as metadata (`versa_preprocessing`), and every inference path
 * runs an original image through the same steps before the model's own letterbox, then maps the predictions back to
 * the original's pixels. Without it a detector trained on stretched images is served letterboxed originals, and
 * gets half its boxes wrong.
 */
import sharp from 'sharp';
import type { Box } from '../imaging/rle.js';
import { apply, invert } from '../imaging/recipe/affine.js';
import {
  composeGeometry,
  executePlan,
  planOutputs,
  preprocessingIssues,
  resolveAugmentation,
  resolvePreprocessing,
  type Affine,
  type Point,
  type Preprocessing,
} from '../imaging/recipe/index.js';
import { UnreadableImageError } from './errors.js';

export const PREPROCESSING_METADATA_KEY = 'versa_preprocessing';

/** Version images are JPEG at this quality (versions/generation.service.ts); served inputs are encoded the same way. */
export const VERSION_JPEG_QUALITY = 90;

/**
 * The preprocessing a model's training images went through, as recorded in its metadata; null when none is recorded,
 * when the record is not a valid preprocessing config, or when it leaves images as they are.
 */
export function servedPreprocessing(metadata: Record<string, string>): Preprocessing | null {
  const text = metadata[PREPROCESSING_METADATA_KEY];
  if (!text) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (preprocessingIssues(parsed).length > 0) return null;
  const pre = pixelPreprocessing(resolvePreprocessing(parsed as Preprocessing));
  const changesPixels = !pre.auto_orient || pre.static_crop.enabled || tiles(pre) > 1 || pre.resize.enabled || pre.grayscale || pre.contrast !== 'none';
  return changesPixels ? pre : null;
}

/** The part of a version's preprocessing that makes its images' pixels: class mapping and filtering are dropped. */
export function pixelPreprocessing(pre: Preprocessing): Preprocessing {
  return { ...pre, classes: { remap: {}, drop: [] }, filter_unannotated: false };
}

/** One image the model runs on, and the map from its pixels back to the original's (upright) pixels. */
export interface ServedInput {
  image: Buffer;
  toOriginal: Affine;
}

export interface ServedImage {
  /** The original's upright size, which predictions are mapped into. */
  width: number;
  height: number;
  /** One input, or one per tile. */
  inputs: ServedInput[];
}

/** Runs an original image through the recorded preprocessing, as a version would, without augmentation. */
export async function servedInputs(image: Uint8Array, pre: Preprocessing, limitInputPixels?: number): Promise<ServedImage> {
  const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  let source: { width: number; height: number; orientation: number };
  try {
    const metadata = await sharp(bytes, { limitInputPixels: limitInputPixels ?? true }).metadata();
    source = { width: metadata.autoOrient.width, height: metadata.autoOrient.height, orientation: metadata.orientation ?? 1 };
  } catch (error) {
    throw new UnreadableImageError(`The image could not be decoded: ${(error as Error).message}`);
  }
  const recipe = { preprocessing: pre, augmentation: resolveAugmentation({ enabled: false }) };
  const plan = planOutputs({ recipe, seed: 0, source: { id: 0, ...source }, outputIndex: 0, split: null });
  const outputs = await executePlan({ image: bytes, annotations: [] }, plan, { format: 'jpeg', quality: VERSION_JPEG_QUALITY });
  return {
    width: source.width,
    height: source.height,
    inputs: outputs.map((output) => ({ image: output.image, toOriginal: invert(composeGeometry(output.steps, source).map) })),
  };
}

/** A box in an input's pixels, in the original's: the envelope of its mapped corners, clipped; null when nothing is left. */
export function boxToOriginal(box: Box, input: ServedInput, original: { width: number; height: number }): Box | null {
  const corners = [
    [box.x, box.y],
    [box.x + box.width, box.y],
    [box.x, box.y + box.height],
    [box.x + box.width, box.y + box.height],
  ].map(([x, y]) => apply(input.toOriginal, [x, y]));
  const x1 = Math.max(0, Math.min(...corners.map((p) => p[0])));
  const y1 = Math.max(0, Math.min(...corners.map((p) => p[1])));
  const x2 = Math.min(original.width, Math.max(...corners.map((p) => p[0])));
  const y2 = Math.min(original.height, Math.max(...corners.map((p) => p[1])));
  return x2 > x1 && y2 > y1 ? { x: x1, y: y1, width: x2 - x1, height: y2 - y1 } : null;
}

/** Points in an input's pixels, in the original's, clamped to it. */
export function pointsToOriginal(points: readonly Point[], input: ServedInput, original: { width: number; height: number }): Point[] {
  return points.map((point) => {
    const [x, y] = apply(input.toOriginal, point);
    return [Math.min(original.width, Math.max(0, x)), Math.min(original.height, Math.max(0, y))] as Point;
  });
}

const tiles = (pre: Preprocessing) => (pre.tile.enabled ? pre.tile.rows * pre.tile.columns : 1);
