import { encodeRle, rleArea, rleBbox, type Bitmap, type Box, type Rle } from '../imaging/rle.js';
import { maskToPolygons, type Point, type PolygonOptions } from './contour.js';
import { UnsupportedModelError } from './errors.js';
import type { TensorData } from './tensor-data.js';

export interface SamMask {
  /** COCO uncompressed RLE (column-major) at the original image size. */
  rle: Rle;
  bbox: Box;
  area: number;
  /** Outer boundaries in original pixels, largest first. */
  polygons: Point[][];
  /** The decoder's predicted IoU of the chosen mask. */
  score: number;
}

/** Which decoder outputs hold the masks and their scores, and the image size the masks must have. */
export interface SamMaskSpec {
  masks: string;
  scores?: string;
  width: number;
  height: number;
  polygon?: PolygonOptions;
}

/**
 * The best of the decoder's masks (highest predicted IoU), thresholded at logit 0, as RLE, box, area and polygons.
 * It runs on the inference worker, beside the decoder, so a click's per-pixel work stays off the event loop.
 */
export function samMaskFromOutputs(outputs: Record<string, TensorData>, spec: SamMaskSpec): SamMask {
  const masks = outputs[spec.masks];
  const scores = (spec.scores ? outputs[spec.scores]?.data : undefined) as Float32Array | undefined;
  const [, count, height, width] = masks?.dims ?? [];
  if (!masks || masks.dims.length !== 4 || height !== spec.height || width !== spec.width) {
    throw new UnsupportedModelError(`SAM decoder returned masks [${masks?.dims.join(', ') ?? ''}]; expected [1, K, ${spec.height}, ${spec.width}]`);
  }
  let best = 0;
  for (let k = 1; k < count; k++) if (scores && scores[k] > scores[best]) best = k;
  const plane = width * height;
  const logits = (masks.data as Float32Array).subarray(best * plane, (best + 1) * plane);
  const bitmap: Bitmap = { width, height, data: new Uint8Array(plane) };
  for (let i = 0; i < plane; i++) if (logits[i] > 0) bitmap.data[i] = 1;
  const rle = encodeRle(bitmap);
  return {
    rle,
    bbox: rleBbox(rle) ?? { x: 0, y: 0, width: 0, height: 0 },
    area: rleArea(rle),
    polygons: maskToPolygons(bitmap, spec.polygon),
    score: scores ? scores[best] : 0,
  };
}
