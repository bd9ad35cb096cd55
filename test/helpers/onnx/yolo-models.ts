import { OnnxGraph } from './onnx-graph.js';
import type { YoloLayout } from '../../../src/inference/yolo-decode.js';

/**
 * Tiny YOLO-shaped detectors built from plain ONNX ops whose outputs depend on the image: class 0 finds red
 * pixels (R − G − B > 0.4), class 1 green ones (G − R − B > 0.4). Each class reports the extent of its pixels as one
 * box, scored with the brightest matching channel value, so a pure red square scores 1.0 and a dim one less. The
 * v5/v8/seg variants also emit a shifted, lower-scored duplicate of every box for NMS to remove.
 */
export const TEST_CLASSES = ['red', 'green'];
export const DUPLICATE_SCORE = 0.7;
/** v5 class probabilities (confidence = objectness × this). */
export const V5_CLASS_PROBABILITY = 0.9;
const MASK_COEFFICIENTS = 32;
const EMPTY_CANDIDATES = 60;

/**
 * `names` (up to three) renames the classes and sets their number: class 0 finds red, 1 green, 2 blue pixels
 * (a three-class model with `['person', 'helmet', 'vest']` is the pipelines tests' protective-equipment detector).
 */
export function buildYoloModel(layout: Exclude<YoloLayout, 'pose' | 'obb'>, size = { width: 128, height: 128 }, names: readonly string[] = TEST_CLASSES): Uint8Array {
  const { width: W, height: H } = size;
  const nc = names.length;
  if (nc < 1 || nc > 3) throw new Error('test detectors have one to three classes (red, green, blue)');
  const g = new OnnxGraph(`test-${layout}`);
  const { mask, score, x1, y1, x2, y2, cx, cy } = colourBoxes(g, W, H, nc);
  const xywh = g.op('Concat', [cx, cy, g.op('Sub', [x2, x1]), g.op('Sub', [y2, y1])], { axis: 2 });
  const shifted = g.op('Add', [xywh, g.floats([2, 1, 0, 0], [4])]);
  const eye = g.floats(ramp(nc * nc, (i) => (Math.floor(i / nc) === i % nc ? 1 : 0)), [1, nc, nc]);
  const classScores = g.op('Mul', [score, eye]);
  const duplicate = (rows: string) => g.op('Mul', [rows, g.scalar(DUPLICATE_SCORE)]);
  const empty = (columns: number) => g.floats(new Array(EMPTY_CANDIDATES * columns).fill(0), [1, EMPTY_CANDIDATES, columns]);

  if (layout === 'end2end') {
    const classIds = g.floats(ramp(nc, (i) => i), [1, nc, 1]);
    const rows = g.op('Concat', [x1, y1, x2, y2, score, classIds], { axis: 2 });
    g.op('Concat', [rows, g.floats(new Array(3 * 6).fill(0), [1, 3, 6])], { axis: 1 }, 'output0');
    g.output('output0', [1, nc + 3, 6]);
  } else if (layout === 'end2end-seg') {
    // YOLO26-style: NMS done, rows of x1, y1, x2, y2, score, class, then the mask coefficients.
    const classIds = g.floats(ramp(nc, (i) => i), [1, nc, 1]);
    const rows = g.op('Concat', [x1, y1, x2, y2, score, classIds, maskSelectors(g, nc)], { axis: 2 });
    const width = 6 + MASK_COEFFICIENTS;
    g.op('Concat', [rows, g.floats(new Array(3 * width).fill(0), [1, 3, width])], { axis: 1 }, 'output0');
    g.output('output0', [1, nc + 3, width]);
    prototypes(g, mask, W, H, 'output1', nc);
  } else if (layout === 'v5') {
    const classProbabilities = g.floats(ramp(nc * nc, (i) => (Math.floor(i / nc) === i % nc ? V5_CLASS_PROBABILITY : 0)), [1, nc, nc]);
    const rows = g.op('Concat', [xywh, score, classProbabilities], { axis: 2 });
    const dupes = g.op('Concat', [shifted, duplicate(score), classProbabilities], { axis: 2 });
    g.op('Concat', [rows, dupes, empty(5 + nc)], { axis: 1 }, 'output0');
    g.output('output0', [1, 2 * nc + EMPTY_CANDIDATES, 5 + nc]);
  } else if (layout === 'v8') {
    const rows = g.op('Concat', [xywh, classScores], { axis: 2 });
    const dupes = g.op('Concat', [shifted, duplicate(classScores)], { axis: 2 });
    transposedHead(g, [rows, dupes], 4 + nc, 2 * nc);
  } else {
    const coefficients = maskSelectors(g, nc);
    const rows = g.op('Concat', [xywh, classScores, coefficients], { axis: 2 });
    const dupes = g.op('Concat', [shifted, duplicate(classScores), coefficients], { axis: 2 });
    transposedHead(g, [rows, dupes], 4 + nc + MASK_COEFFICIENTS, 2 * nc);
    prototypes(g, mask, W, H, 'output1', nc);
  }
  const metadata: Record<string, string> = {
    names: `{${names.map((name, i) => `${i}: '${name}'`).join(', ')}}`,
    imgsz: `[${H}, ${W}]`,
    task: layout === 'v8-seg' || layout === 'end2end-seg' ? 'segment' : 'detect',
  };
  if (layout === 'end2end' || layout === 'end2end-seg') metadata.end2end = 'True';
  return g.toBytes({ metadata });
}

/**
 * The Ultralytics pose test model's keypoints: the top-left and top-right corners of the red pixels, their centre,
 * and a point 40 input pixels above their top edge (off the image when they lie near its top).
 */
export const POSE_KEYPOINTS = ['top_left', 'top_right', 'centre', 'above'];
/** Each keypoint's confidence in the pose test model's output (≥ 0.5 reads as visible). */
export const POSE_KEYPOINT_CONFIDENCES = [0.9, 0.3, 0.8, 0.9];

/**
 * An Ultralytics pose export (`[1, 4 + 1 + 3k, N]`, one class `person`) that finds red pixels as the v8 model does
 * and places POSE_KEYPOINTS on them (scored `confidences`), with the metadata Ultralytics writes for
 * pose models: `kpt_shape`, `kpt_names` and `flip_idx` (the corners swap in a flip).
 */
export function buildYoloPoseModel(size = { width: 128, height: 128 }, confidences = POSE_KEYPOINT_CONFIDENCES): Uint8Array {
  const { width: W, height: H } = size;
  const g = new OnnxGraph('test-pose');
  const { score, x1, y1, x2, y2, cx, cy } = colourBoxes(g, W, H, 1);
  const [c0, c1, c2, c3] = confidences.map((c) => g.floats([c], [1, 1, 1]));
  const keypoints = [x1, y1, c0, x2, y1, c1, cx, cy, c2, cx, g.op('Sub', [y1, g.scalar(40)]), c3];
  const row = g.op('Concat', [cx, cy, g.op('Sub', [x2, x1]), g.op('Sub', [y2, y1]), score, ...keypoints], { axis: 2 });
  transposedHead(g, [row], 5 + keypoints.length, 1);
  return g.toBytes({
    metadata: {
      names: "{0: 'person'}",
      imgsz: `[${H}, ${W}]`,
      task: 'pose',
      kpt_shape: `[${POSE_KEYPOINTS.length}, 3]`,
      kpt_names: `{0: [${POSE_KEYPOINTS.map((n) => `'${n}'`).join(', ')}]}`,
      flip_idx: '[1, 0, 2, 3]',
    },
  });
}

/** The OBB test model's classes and each one's angle in radians (Ultralytics' range is [−π/4, 3π/4)). */
export const OBB_CLASSES = ['plane', 'ship'];
export const OBB_ANGLES = [Math.PI / 6, -Math.PI / 9];

/**
 * An Ultralytics OBB export (`[1, 4 + nc + 1, N]`): class `plane` finds red pixels, `ship` green ones, each reported
 * as the extent of its pixels (centre, width, height) turned by its class's angle in OBB_ANGLES.
 */
export function buildYoloObbModel(size = { width: 128, height: 128 }): Uint8Array {
  const { width: W, height: H } = size;
  const nc = OBB_CLASSES.length;
  const g = new OnnxGraph('test-obb');
  const { score, x1, y1, x2, y2, cx, cy } = colourBoxes(g, W, H, nc);
  const classScores = g.op('Mul', [score, g.floats(ramp(nc * nc, (i) => (Math.floor(i / nc) === i % nc ? 1 : 0)), [1, nc, nc])]);
  const rows = g.op('Concat', [cx, cy, g.op('Sub', [x2, x1]), g.op('Sub', [y2, y1]), classScores, g.floats(OBB_ANGLES, [1, nc, 1])], { axis: 2 });
  transposedHead(g, [rows], 4 + nc + 1, nc);
  return g.toBytes({ metadata: { names: `{${OBB_CLASSES.map((name, i) => `${i}: '${name}'`).join(', ')}}`, imgsz: `[${H}, ${W}]`, task: 'obb' } });
}

/**
 * `output0` `[1, width, N]` from candidate rows `[1, count, width]` (`count` rows in all): real heads emit thousands
 * of candidates, most of them empty, so a few zero rows keep N larger than the row count.
 */
function transposedHead(g: OnnxGraph, rows: string[], width: number, count: number): void {
  const empty = g.floats(new Array(EMPTY_CANDIDATES * width).fill(0), [1, EMPTY_CANDIDATES, width]);
  g.op('Transpose', [g.op('Concat', [...rows, empty], { axis: 1 })], { perm: [0, 2, 1] }, 'output0');
  g.output('output0', [1, width, count + EMPTY_CANDIDATES]);
}

/**
 * The graph's input `images` [1, 3, H, W] and, per class (red, green, blue pixels), the pixel mask, the score and
 * the extent of its pixels as `[1, nc, 1]` values in input pixels.
 */
function colourBoxes(g: OnnxGraph, W: number, H: number, nc: number) {
  const images = g.input('images', [1, 3, H, W]);
  const colourness = g.op('Conv', [images, g.floats([1, -1, -1, -1, 1, -1, -1, -1, 1].slice(0, 3 * nc), [nc, 3, 1, 1])]);
  const mask = g.op('Cast', [g.op('Greater', [colourness, g.scalar(0.4)])], { to: 1 });
  const channel = g.op('Conv', [images, g.floats([1, 0, 0, 0, 1, 0, 0, 0, 1].slice(0, 3 * nc), [nc, 3, 1, 1])]);
  const score = g.op('Reshape', [g.op('ReduceMax', [g.op('Mul', [mask, channel])], { axes: [2, 3], keepdims: 0 }), g.ints([1, nc, 1])]);

  // Extents along x and y from the columns/rows that hold any matching pixel, weighted by coordinate ramps.
  const extent = (axis: 2 | 3, length: number): [string, string] => {
    const present = g.op('ReduceMax', [mask], { axes: [axis === 3 ? 2 : 3], keepdims: 0 });
    const upper = g.op('ReduceMax', [g.op('Mul', [present, g.floats(ramp(length, (i) => i + 1), [length])])], { axes: [2], keepdims: 1 });
    const fromEnd = g.op('ReduceMax', [g.op('Mul', [present, g.floats(ramp(length, (i) => length - i), [length])])], { axes: [2], keepdims: 1 });
    return [g.op('Sub', [g.scalar(length), fromEnd]), upper];
  };
  const [x1, x2] = extent(3, W);
  const [y1, y2] = extent(2, H);
  const cx = g.op('Div', [g.op('Add', [x1, x2]), g.scalar(2)]);
  const cy = g.op('Div', [g.op('Add', [y1, y2]), g.scalar(2)]);
  return { mask, score, x1, y1, x2, y2, cx, cy };
}

/** Mask coefficients per class row `[1, nc, nm]`: class k's row selects prototype k. */
function maskSelectors(g: OnnxGraph, nc: number): string {
  return g.floats(ramp(nc * MASK_COEFFICIENTS, (i) => (Math.floor(i / MASK_COEFFICIENTS) === i % MASK_COEFFICIENTS ? 1 : 0)), [1, nc, MASK_COEFFICIENTS]);
}

/** Prototypes `[1, nm, H/4, W/4]`: prototype k < nc is class k's pixel mask at a quarter of the input size as a steep logit. */
function prototypes(g: OnnxGraph, mask: string, W: number, H: number, name: string, nc: number): void {
  const pooled = g.op('AveragePool', [mask], { kernel_shape: [4, 4], strides: [4, 4] });
  const logits = g.op('Mul', [g.op('Sub', [pooled, g.scalar(0.5)]), g.scalar(20)]);
  const [mh, mw] = [H / 4, W / 4];
  const rest = g.floats(new Array((MASK_COEFFICIENTS - nc) * mh * mw).fill(-10), [1, MASK_COEFFICIENTS - nc, mh, mw]);
  g.op('Concat', [logits, rest], { axis: 1 }, name);
  g.output(name, [1, MASK_COEFFICIENTS, mh, mw]);
}

function ramp(length: number, value: (i: number) => number): number[] {
  return Array.from({ length }, (_, i) => value(i));
}
