import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { letterboxTransform } from '../../src/inference/letterbox.js';
import { boxIou as rotatedIou } from '../../src/imaging/shape-metrics.js';
import { decodeYolo } from '../../src/inference/yolo-decode.js';
import type { TensorData } from '../../src/inference/tensor-data.js';
import { parseUltralyticsMetadata } from '../../src/inference/onnx-metadata.js';

/** A transposed `[1, rows, N]` head from its columns. */
function head(columns: number[][]): TensorData {
  const rows = columns[0].length;
  const data = new Float32Array(rows * columns.length);
  columns.forEach((column, i) => column.forEach((v, r) => (data[r * columns.length + i] = v)));
  return { type: 'float32', data, dims: [1, rows, columns.length] };
}

describe('shapes-models: pose and OBB decoding', () => {
  // A 200 × 100 image letterboxed into 128 × 128: scale 0.64, 32 px of padding above and below.
  const t = letterboxTransform(200, 100, 128, 128);

  it('pose: keypoints come back through the letterbox with their confidence; NMS drops the duplicate', () => {
    const k = [[40, 50, 0.9], [60, 60, 0.2]];
    const column = (score: number, dx: number) => [64 + dx, 64, 32, 32, score, ...k.flatMap(([x, y, c]) => [x + dx, y, c])];
    const out = head([column(0.9, 0), column(0.8, 1), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]);
    const detections = decodeYolo([out], t, { confidence: 0.25, iou: 0.5, layout: 'pose', classCount: 1 });
    assert.equal(detections.length, 1);
    const [d] = detections;
    assert.deepEqual(d.box, { x: (48 - 0) / 0.64, y: (48 - 32) / 0.64, width: 32 / 0.64, height: 32 / 0.64 });
    assert.deepEqual(d.keypoints!.map(([x, y, c]) => [x, y, Math.round(c * 10) / 10]), [[40 / 0.64, 18 / 0.64, 0.9], [60 / 0.64, 28 / 0.64, 0.2]]);
  });

  it('pose: kpt_shape with two values per point reads every point as confident', () => {
    const out = head([[64, 64, 32, 32, 0.9, 40, 50, 60, 60]]);
    const [d] = decodeYolo([out], t, { confidence: 0.25, iou: 0.5, layout: 'pose', keypointShape: [2, 2] });
    assert.deepEqual(d.keypoints!.map((p) => p[2]), [1, 1]);
  });

  it('obb: the angle becomes a clockwise rotation in degrees and rotated NMS keeps crossing boxes apart', () => {
    const angle = Math.PI / 6;
    const out = head([
      [64, 64, 40, 10, 0.9, angle],
      [64, 64, 40, 10, 0.8, angle + 0.01], // the same box: suppressed
      [64, 64, 40, 10, 0.7, angle + Math.PI / 2], // crossing it: axis IoU would be high, rotated IoU is low
    ]);
    const detections = decodeYolo([out], t, { confidence: 0.25, iou: 0.5, layout: 'obb' });
    assert.equal(detections.length, 2);
    const o = detections[0].oriented!;
    assert.ok(Math.abs(o.rotation - 30) < 1e-3, String(o.rotation));
    assert.ok(Math.abs(o.x + o.width / 2 - 100) < 1e-3 && Math.abs(o.y + o.height / 2 - 50) < 1e-3);
    assert.ok(Math.abs(o.width - 40 / 0.64) < 1e-3 && Math.abs(o.height - 10 / 0.64) < 1e-3);
    assert.ok(Math.abs(detections[1].oriented!.rotation - 120) < 1e-3);
  });

  it('rotated IoU of a box with itself turned 90° is its overlap square', () => {
    const a = { x: 0, y: 4, width: 10, height: 2, rotation: 0 };
    assert.ok(Math.abs(rotatedIou(a, a) - 1) < 1e-9);
    const b = { ...a, rotation: 90 };
    assert.ok(Math.abs(rotatedIou(a, b) - 4 / 36) < 1e-9);
  });

  it('reads kpt_shape, kpt_names and flip_idx from the metadata', () => {
    const m = parseUltralyticsMetadata({ kpt_shape: '[3, 3]', kpt_names: "{0: ['nose', 'left_eye', 'right_eye']}", flip_idx: '[0, 2, 1]' });
    assert.deepEqual(m.keypointShape, [3, 3]);
    assert.deepEqual(m.keypointNames, ['nose', 'left_eye', 'right_eye']);
    assert.deepEqual(m.flipIndex, [0, 2, 1]);
  });
});
