import type { Bitmap, Box } from '../imaging/rle.js';
import { maskToPolygons, type Point, type PolygonOptions } from './contour.js';
import type { LetterboxTransform } from './letterbox.js';
import type { TensorData } from './tensor-data.js';
import { pointsBox } from '../imaging/geometry.js';

/** A class region as yolo-decode's detections carry it (box and polygon in original pixels). */
export interface RegionDetection {
  classId: number;
  confidence: number;
  box: Box;
  polygons: Point[][];
}

/**
 * A semantic segmentation output `[1, 1 + nc, H, W]` (versa-segment: channel 0 background, channel c + 1 class c,
 * scores per pixel over the letterboxed input) as detections: every pixel of the original image takes the class with
 * the highest score at its centre (nearest input cell), and each connected region of a class becomes one detection
 * with its outer boundary as polygon, its box, and the mean score of the class over the region's pixels as
 * confidence. Regions under `confidence` are dropped; the largest `maxDetections` are kept.
 */
export function decodeSemantic(output: TensorData, t: LetterboxTransform, options: { confidence: number; maxDetections?: number; polygon?: PolygonOptions }): RegionDetection[] {
  const [, channels, height, width] = output.dims;
  const scores = output.data as Float32Array;
  const plane = height * width;
  const originalWidth = Math.round(t.originalWidth);
  const originalHeight = Math.round(t.originalHeight);
  const classOf = new Uint8Array(originalWidth * originalHeight);
  const scoreOf = new Float32Array(originalWidth * originalHeight);
  for (let y = 0; y < originalHeight; y++) {
    const gy = Math.min(height - 1, Math.max(0, Math.floor(((y + 0.5) * t.scaleY + t.padTop) * (height / t.inputHeight))));
    for (let x = 0; x < originalWidth; x++) {
      const gx = Math.min(width - 1, Math.max(0, Math.floor(((x + 0.5) * t.scaleX + t.padLeft) * (width / t.inputWidth))));
      const cell = gy * width + gx;
      let best = 0;
      for (let c = 1; c < channels; c++) if (scores[c * plane + cell] > scores[best * plane + cell]) best = c;
      classOf[y * originalWidth + x] = best;
      scoreOf[y * originalWidth + x] = scores[best * plane + cell];
    }
  }
  const detections: RegionDetection[] = [];
  for (let c = 1; c < channels; c++) {
    const mask: Bitmap = { width: originalWidth, height: originalHeight, data: new Uint8Array(classOf.length) };
    let any = false;
    for (let i = 0; i < classOf.length; i++) {
      if (classOf[i] === c) {
        mask.data[i] = 1;
        any = true;
      }
    }
    if (!any) continue;
    for (const polygon of maskToPolygons(mask, options.polygon ?? { epsilon: 1, minArea: 16 })) {
      const box = pointsBox(polygon);
      let sum = 0;
      let count = 0;
      for (let y = Math.floor(box.y); y < Math.ceil(box.y + box.height); y++) {
        for (let x = Math.floor(box.x); x < Math.ceil(box.x + box.width); x++) {
          if (classOf[y * originalWidth + x] !== c) continue;
          sum += scoreOf[y * originalWidth + x];
          count++;
        }
      }
      const confidence = count ? sum / count : 0;
      if (confidence >= options.confidence && box.width > 0 && box.height > 0) detections.push({ classId: c - 1, confidence, box, polygons: [polygon] });
    }
  }
  return detections.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height).slice(0, options.maxDetections ?? 300);
}
