import { normalizeDegrees, pointsBox, rotatedCorners } from '../imaging/geometry.js';
import type { Bitmap, Box } from '../imaging/rle.js';
import { maskToPolygons, type Point, type PolygonOptions } from './contour.js';
import { UnsupportedModelError } from './errors.js';
import { toOriginal, type LetterboxTransform } from './letterbox.js';
import { nonMaxSuppression, type Candidate } from './nms.js';
import { boxIou } from '../imaging/shape-metrics.js';
import { decodeSemantic } from './semantic-decode.js';
import type { TensorData } from './tensor-data.js';

/**
 * YOLO ONNX output layouts in use:
 * - `v5`: `[1, N, 5 + nc]` rows of cx, cy, w, h, objectness, class scores (confidence = objectness × class score);
 * - `v8` (also v11): `[1, 4 + nc, N]`, transposed: cx, cy, w, h, class scores;
 * - `end2end` (NMS inside the model, e.g. YOLOv10/YOLO26): `[1, N, 6]` rows of x1, y1, x2, y2, score, class;
 * - `v8-seg`: output0 `[1, 4 + nc + nm, N]` plus prototypes `[1, nm, mh, mw]`;
 * - `end2end-seg` (YOLOv10/YOLO26 segmentation with NMS inside): `[1, N, 6 + nm]` rows of x1, y1, x2, y2, score,
 *   class, mask coefficients, plus prototypes `[1, nm, mh, mw]`.
 * - `pose` (Ultralytics pose, task `pose`): `[1, 4 + nc + k·d, N]`: cx, cy, w, h, class scores, then per keypoint
 *   x, y (and its confidence when d = 3; `kpt_shape` [k, d]);
 * - `obb` (Ultralytics OBB, task `obb`): `[1, 4 + nc + 1, N]`: cx, cy, w, h, class scores, the angle in radians
 *   (clockwise in image axes, y down) as the last row.
 * Boxes are in the letterboxed input's pixels.
 */
export type YoloLayout = 'v5' | 'v8' | 'end2end' | 'v8-seg' | 'end2end-seg' | 'pose' | 'obb';

export interface YoloDecodeOptions {
  /** Minimum confidence kept. */
  confidence: number;
  /** IoU above which a lower-scored box of the same class is suppressed. */
  iou: number;
  maxDetections?: number;
  /** Highest-scored candidates considered by NMS (bounds its quadratic cost on noisy outputs). */
  maxCandidates?: number;
  /** Forces a layout instead of inferring it from the output shapes. */
  layout?: YoloLayout;
  /** Known class count (from the model's names), which settles ambiguous shapes. */
  classCount?: number;
  /** The model declares NMS built in (Ultralytics' `end2end` metadata). */
  endToEnd?: boolean;
  /** The model declares class scores per pixel (metadata task `segment-semantic`): its one `[1, C, H, W]` output is read as regions. */
  semantic?: boolean;
  polygon?: PolygonOptions;
  /**
   * Attach each detection's score for every class (`classScores`), for measures of how unsure the model is
   * between classes (active learning). End-to-end heads keep only the winning class's score.
   */
  classScores?: boolean;
  /** Pose models: keypoints per instance and values per keypoint (2: x, y; 3: x, y, confidence), metadata `kpt_shape`. */
  keypointShape?: [number, number];
}

/** A rotated box in original pixels: the box before rotation and its clockwise rotation in degrees, [0, 360). */
export interface OrientedBox {
  x: number;
  y: number;
  width: number;
  height: number;
  rotation: number;
}

export interface YoloDetection {
  classId: number;
  confidence: number;
  /** In the original (EXIF-oriented) image's pixels. */
  box: Box;
  /** Segmentation models only: outer boundaries of the mask in original pixels, largest first. */
  polygons?: Point[][];
  /** With `classScores`: the candidate's score per class (v5: objectness × class probability). */
  classScores?: number[];
  /** Pose models: each keypoint's [x, y] in original pixels (off the image where the model puts it there) and its confidence (1 when the model gives none). */
  keypoints?: [x: number, y: number, confidence: number][];
  /** OBB models: the rotated box (`box` is its axis-aligned envelope). */
  oriented?: OrientedBox;
}

/** Infers the layout from output shapes (outputs in the model's output order). */
export function detectLayout(outputs: readonly TensorData[], classCount?: number, endToEnd?: boolean): YoloLayout {
  const [first, second] = outputs;
  if (!first || first.dims.length !== 3 || first.dims[0] !== 1) {
    throw new UnsupportedModelError(`Unsupported YOLO output shape [${first?.dims.join(', ') ?? ''}]; expected [1, a, b]`);
  }
  const [, a, b] = first.dims;
  if (second && second.dims.length === 4) {
    const nm = second.dims[1];
    if (endToEnd) return 'end2end-seg';
    if (classCount !== undefined) return a === 4 + classCount + nm || b !== 6 + nm ? 'v8-seg' : 'end2end-seg';
    // v8-seg has thousands of anchor columns; an end-to-end head a few hundred rows of 6 + nm values.
    return b === 6 + nm && a > b ? 'end2end-seg' : 'v8-seg';
  }
  if (endToEnd && b === 6) return 'end2end';
  if (classCount !== undefined) {
    if (a === 4 + classCount && b !== 5 + classCount) return 'v8';
    if (b === 5 + classCount) return 'v5';
    if (b === 6) return 'end2end';
  }
  if (a < b) return 'v8';
  if (b === 6 && a <= 1000) return 'end2end';
  if (b > 5) return 'v5';
  throw new UnsupportedModelError(`Cannot tell the YOLO layout of output shape [${first.dims.join(', ')}]`);
}

/** Turns raw YOLO outputs into detections in original image pixels: confidence filter, NMS, inverse letterbox. */
export function decodeYolo(outputs: readonly TensorData[], transform: LetterboxTransform, options: YoloDecodeOptions): YoloDetection[] {
  // A semantic segmentation model's (versa-segment's) one `[1, C, H, W]` output of class scores, read as regions.
  if (options.semantic && outputs.length === 1 && outputs[0].dims.length === 4) return decodeSemantic(outputs[0], transform, options);
  const layout = options.layout ?? detectLayout(outputs, options.classCount, options.endToEnd);
  if (layout === 'pose') return decodePose(outputs[0], transform, options);
  if (layout === 'obb') return decodeObb(outputs[0], transform, options);
  const maxDetections = options.maxDetections ?? 300;
  const output = outputs[0];
  const data = output.data as Float32Array;
  const [, a, b] = output.dims;
  let kept: Candidate[];
  if (layout === 'end2end' || layout === 'end2end-seg') {
    kept = endToEndCandidates(data, a, b, options.confidence).sort((x, y) => y.score - x.score).slice(0, maxDetections);
  } else {
    const candidates =
      layout === 'v5' ? v5Candidates(data, a, b, options.confidence) : transposedCandidates(data, a, b, classesOf(layout, outputs), options.confidence);
    const limited = candidates.length > (options.maxCandidates ?? 30000)
      ? candidates.sort((x, y) => y.score - x.score).slice(0, options.maxCandidates ?? 30000)
      : candidates;
    kept = nonMaxSuppression(limited, options.iou, maxDetections);
  }
  const detections: YoloDetection[] = [];
  for (const candidate of kept) {
    const [x1, y1] = toOriginal(transform, candidate.x1, candidate.y1);
    const [x2, y2] = toOriginal(transform, candidate.x2, candidate.y2);
    if (x2 <= x1 || y2 <= y1) continue;
    const detection: YoloDetection = {
      classId: candidate.classId,
      confidence: candidate.score,
      box: { x: x1, y: y1, width: x2 - x1, height: y2 - y1 },
    };
    if (options.classScores) detection.classScores = scoresOf(layout, outputs, candidate, options.classCount);
    if (layout === 'v8-seg' || layout === 'end2end-seg') {
      detection.polygons = segmentPolygons(outputs, maskCoefficients(layout, outputs, candidate), detection.box, transform, options.polygon);
    }
    detections.push(detection);
  }
  return detections;
}

/** A kept candidate's score per class, read back from its column (v8) or row (v5); end-to-end rows hold only their class's. */
function scoresOf(layout: YoloLayout, outputs: readonly TensorData[], candidate: Candidate, classCount?: number): number[] {
  const data = outputs[0].data as Float32Array;
  const b = outputs[0].dims[2];
  if (layout === 'v8' || layout === 'v8-seg') {
    const classes = classesOf(layout, outputs);
    return Array.from({ length: classes }, (_, c) => data[(4 + c) * b + candidate.index]);
  }
  if (layout === 'v5') {
    const row = candidate.index * b;
    return Array.from({ length: b - 5 }, (_, c) => data[row + 4] * data[row + 5 + c]);
  }
  const scores = new Array<number>(Math.max(classCount ?? 0, candidate.classId + 1)).fill(0);
  scores[candidate.classId] = candidate.score;
  return scores;
}

function classesOf(layout: YoloLayout, outputs: readonly TensorData[]): number {
  const rows = outputs[0].dims[1];
  if (layout === 'v8') return rows - 4;
  const maskDims = outputs[1]?.dims;
  if (!maskDims || maskDims.length !== 4) throw new UnsupportedModelError('A segmentation model needs a prototype output [1, nm, mh, mw]');
  const classes = rows - 4 - maskDims[1];
  if (classes < 1) throw new UnsupportedModelError(`Output0 has ${rows} rows, too few for 4 box values and ${maskDims[1]} mask coefficients`);
  return classes;
}

/**
 * v8/v11 `[1, 4 + nc (+ nm), N]`: best class per column, reading each class row contiguously. Only scores at or
 * above the threshold are tracked (one compare per value for the great majority below it), so a column whose best
 * class falls short never becomes a candidate.
 */
function transposedCandidates(data: Float32Array, rows: number, columns: number, classes: number, confidence: number): Candidate[] {
  const bestScore = new Float32Array(columns);
  const bestClass = new Int32Array(columns);
  // Scores must also be positive (an all-zero column is no detection even at confidence 0).
  const threshold = Math.max(confidence, Number.MIN_VALUE);
  for (let c = 0; c < classes; c++) {
    const offset = (4 + c) * columns;
    for (let i = 0; i < columns; i++) {
      const score = data[offset + i];
      if (score >= threshold && score > bestScore[i]) {
        bestScore[i] = score;
        bestClass[i] = c;
      }
    }
  }
  const candidates: Candidate[] = [];
  for (let i = 0; i < columns; i++) {
    if (bestScore[i] === 0) continue;
    const cx = data[i];
    const cy = data[columns + i];
    const w = data[2 * columns + i];
    const h = data[3 * columns + i];
    candidates.push({ x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2, score: bestScore[i], classId: bestClass[i], index: i });
  }
  return candidates;
}

/** v5 `[1, N, 5 + nc]`: confidence is objectness × the best class score. */
function v5Candidates(data: Float32Array, rows: number, columns: number, confidence: number): Candidate[] {
  const candidates: Candidate[] = [];
  for (let i = 0; i < rows; i++) {
    const row = i * columns;
    const objectness = data[row + 4];
    if (objectness < confidence || objectness <= 0) continue;
    let best = 0;
    let classId = 0;
    for (let c = 5; c < columns; c++) {
      if (data[row + c] > best) {
        best = data[row + c];
        classId = c - 5;
      }
    }
    const score = objectness * best;
    if (score < confidence || score <= 0) continue;
    const [cx, cy, w, h] = [data[row], data[row + 1], data[row + 2], data[row + 3]];
    candidates.push({ x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2, score, classId, index: i });
  }
  return candidates;
}

function endToEndCandidates(data: Float32Array, rows: number, columns: number, confidence: number): Candidate[] {
  const candidates: Candidate[] = [];
  for (let i = 0; i < rows; i++) {
    const row = i * columns;
    const score = data[row + 4];
    if (score < confidence || score <= 0) continue;
    candidates.push({ x1: data[row], y1: data[row + 1], x2: data[row + 2], y2: data[row + 3], score, classId: Math.round(data[row + 5]), index: i });
  }
  return candidates;
}

/** A candidate's mask coefficients: the last nm rows of its column (v8-seg) or the last nm values of its row. */
function maskCoefficients(layout: YoloLayout, outputs: readonly TensorData[], candidate: Candidate): Float32Array {
  const [, rows, columns] = outputs[0].dims;
  const head = outputs[0].data as Float32Array;
  const nm = outputs[1]?.dims.length === 4 ? outputs[1].dims[1] : 0;
  if (nm < 1 || (layout === 'end2end-seg' ? columns : rows) < nm + (layout === 'end2end-seg' ? 6 : 5)) {
    throw new UnsupportedModelError(`Output0 [${outputs[0].dims.join(', ')}] has no room for ${nm} mask coefficients`);
  }
  const coefficients = new Float32Array(nm);
  for (let k = 0; k < nm; k++) {
    coefficients[k] = layout === 'end2end-seg' ? head[candidate.index * columns + 6 + k] : head[(rows - nm + k) * columns + candidate.index];
  }
  return coefficients;
}

/**
 * The detection's mask: sigmoid(coefficients · prototypes) > 0.5, i.e. the linear combination > 0, cropped to the
 * box. It is evaluated at each original pixel's centre, mapped through the letterbox into the prototype grid and
 * sampled bilinearly, so no intermediate upsampled image is built; only the prototype cells under the box are
 * combined.
 */
function segmentPolygons(
  outputs: readonly TensorData[],
  coefficients: Float32Array,
  box: Box,
  t: LetterboxTransform,
  polygon?: PolygonOptions,
): Point[][] {
  const protos = outputs[1].data as Float32Array;
  const [, nm, mh, mw] = outputs[1].dims;
  const gridX = (x: number) => ((x * t.scaleX + t.padLeft) * mw) / t.inputWidth - 0.5;
  const gridY = (y: number) => ((y * t.scaleY + t.padTop) * mh) / t.inputHeight - 0.5;
  const gx0 = Math.max(0, Math.floor(gridX(box.x)) - 1);
  const gx1 = Math.min(mw - 1, Math.ceil(gridX(box.x + box.width)) + 1);
  const gy0 = Math.max(0, Math.floor(gridY(box.y)) - 1);
  const gy1 = Math.min(mh - 1, Math.ceil(gridY(box.y + box.height)) + 1);
  const regionWidth = gx1 - gx0 + 1;
  const regionHeight = gy1 - gy0 + 1;
  if (regionWidth <= 0 || regionHeight <= 0) return [];
  const logits = new Float32Array(regionWidth * regionHeight);
  for (let k = 0; k < nm; k++) {
    const coefficient = coefficients[k];
    if (coefficient === 0) continue;
    const plane = k * mh * mw;
    for (let gy = gy0; gy <= gy1; gy++) {
      const source = plane + gy * mw;
      const target = (gy - gy0) * regionWidth - gx0;
      for (let gx = gx0; gx <= gx1; gx++) logits[target + gx] += coefficient * protos[source + gx];
    }
  }
  const px0 = Math.floor(box.x);
  const py0 = Math.floor(box.y);
  const width = Math.ceil(box.x + box.width) - px0;
  const height = Math.ceil(box.y + box.height) - py0;
  const mask: Bitmap = { width, height, data: new Uint8Array(width * height) };
  for (let y = 0; y < height; y++) {
    const cy = py0 + y + 0.5;
    if (cy < box.y || cy > box.y + box.height) continue;
    const fy = Math.min(Math.max(gridY(cy) - gy0, 0), regionHeight - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, regionHeight - 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const cx = px0 + x + 0.5;
      if (cx < box.x || cx > box.x + box.width) continue;
      const fx = Math.min(Math.max(gridX(cx) - gx0, 0), regionWidth - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, regionWidth - 1);
      const wx = fx - x0;
      const top = logits[y0 * regionWidth + x0] * (1 - wx) + logits[y0 * regionWidth + x1] * wx;
      const bottom = logits[y1 * regionWidth + x0] * (1 - wx) + logits[y1 * regionWidth + x1] * wx;
      if (top * (1 - wy) + bottom * wy > 0) mask.data[y * width + x] = 1;
    }
  }
  return maskToPolygons(mask, polygon).map((points) => points.map(([x, y]): Point => [x + px0, y + py0]));
}

/**
 * Ultralytics pose `[1, 4 + nc + k·d, N]`: candidates as for v8 (class-aware NMS on their boxes), then each kept
 * candidate's keypoints read from its column and taken back through the letterbox, unclamped: a keypoint the model
 * places off the image is not moved onto its border. Without `kpt_shape` the model is read as one class with
 * (x, y, confidence) per keypoint, k from the output height.
 */
function decodePose(output: TensorData, transform: LetterboxTransform, options: YoloDecodeOptions): YoloDetection[] {
  const data = output.data as Float32Array;
  const [, rows, columns] = output.dims;
  const [k, d] = options.keypointShape ?? [(rows - 4 - (options.classCount ?? 1)) / 3, 3];
  const classes = rows - 4 - k * d;
  if (!Number.isInteger(k) || k < 1 || (d !== 2 && d !== 3) || classes < 1) {
    throw new UnsupportedModelError(`Pose output [${output.dims.join(', ')}] does not hold 4 box values, class scores and ${k}×${d} keypoint values`);
  }
  const candidates = transposedCandidates(data, rows, columns, classes, options.confidence);
  const kept = nonMaxSuppression(limit(candidates, options.maxCandidates), options.iou, options.maxDetections ?? 300);
  const detections: YoloDetection[] = [];
  for (const candidate of kept) {
    const box = boxToOriginal(candidate, transform);
    if (!box) continue;
    const keypoints: [number, number, number][] = [];
    for (let j = 0; j < k; j++) {
      const row = 4 + classes + j * d;
      const [x, y] = toOriginal(transform, data[row * columns + candidate.index], data[(row + 1) * columns + candidate.index], false);
      keypoints.push([x, y, d === 3 ? data[(row + 2) * columns + candidate.index] : 1]);
    }
    detections.push({ classId: candidate.classId, confidence: candidate.score, box, keypoints });
  }
  return detections;
}

/**
 * Ultralytics OBB `[1, 4 + nc + 1, N]`: best class per column, class-aware NMS by rotated-box IoU, then the box
 * taken back through the letterbox: its corners are mapped (unclamped: a rotated box cannot be cut to the image
 * without changing its shape) and the box rebuilt from them, so the slightly different x and y scales of a rounded
 * letterbox are honoured.
 */
function decodeObb(output: TensorData, transform: LetterboxTransform, options: YoloDecodeOptions): YoloDetection[] {
  const data = output.data as Float32Array;
  const [, rows, columns] = output.dims;
  const classes = rows - 5;
  if (classes < 1) throw new UnsupportedModelError(`OBB output [${output.dims.join(', ')}] has no room for class scores and an angle`);
  const angleRow = (rows - 1) * columns;
  const oriented = (c: Candidate): OrientedBox => {
    const [w, h] = [c.x2 - c.x1, c.y2 - c.y1];
    return { x: c.x1, y: c.y1, width: w, height: h, rotation: normalizeDegrees((data[angleRow + c.index] * 180) / Math.PI) };
  };
  const sorted = limit(transposedCandidates(data, rows, columns, classes, options.confidence), options.maxCandidates).sort((a, b) => b.score - a.score);
  const kept: { candidate: Candidate; box: OrientedBox }[] = [];
  const maxDetections = options.maxDetections ?? 300;
  for (const candidate of sorted) {
    if (kept.length >= maxDetections) break;
    const box = oriented(candidate);
    if (kept.some((k) => k.candidate.classId === candidate.classId && boxIou(k.box, box) > options.iou)) continue;
    kept.push({ candidate, box });
  }
  const detections: YoloDetection[] = [];
  for (const { candidate, box } of kept) {
    const corners = rotatedCorners(box).map(([x, y]) => toOriginal(transform, x, y, false));
    const back = orientedFromCorners(corners);
    if (!(back.width > 0 && back.height > 0)) continue;
    const envelope = pointsBox(corners);
    detections.push({ classId: candidate.classId, confidence: candidate.score, box: envelope, oriented: back });
  }
  return detections;
}

/** The rotated box whose corners (clockwise from its top left before rotation) these are, to within a shear. */
export function orientedFromCorners(corners: readonly Point[]): OrientedBox {
  const [p0, p1, p2, p3] = corners;
  const cx = (p0[0] + p1[0] + p2[0] + p3[0]) / 4;
  const cy = (p0[1] + p1[1] + p2[1] + p3[1]) / 4;
  const width = Math.hypot(p1[0] - p0[0], p1[1] - p0[1]);
  const height = Math.hypot(p3[0] - p0[0], p3[1] - p0[1]);
  const rotation = normalizeDegrees((Math.atan2(p1[1] - p0[1], p1[0] - p0[0]) * 180) / Math.PI);
  return { x: cx - width / 2, y: cy - height / 2, width, height, rotation };
}

/** An input-frame candidate box in original pixels (clamped to the image); null when nothing is left. */
function boxToOriginal(candidate: Candidate, transform: LetterboxTransform): Box | null {
  const [x1, y1] = toOriginal(transform, candidate.x1, candidate.y1);
  const [x2, y2] = toOriginal(transform, candidate.x2, candidate.y2);
  return x2 > x1 && y2 > y1 ? { x: x1, y: y1, width: x2 - x1, height: y2 - y1 } : null;
}

function limit(candidates: Candidate[], maxCandidates = 30000): Candidate[] {
  return candidates.length > maxCandidates ? candidates.sort((x, y) => y.score - x.score).slice(0, maxCandidates) : candidates;
}
