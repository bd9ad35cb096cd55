import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { letterboxTransform } from '../../src/inference/letterbox.js';
import { decodeYolo } from '../../src/inference/yolo-decode.js';

/** A semantic model's `[1, 1 + nc, H, W]` scores read as class regions (versa-segment's output, issue 28). */
describe('decodeYolo on a semantic segmentation output', () => {
  it('turns each connected region of a class into a polygon in original pixels, scored by its mean probability', () => {
    // Input 8 x 8; the original is 16 x 8, letterboxed to 8 x 4 with 2 rows of padding above and below.
    const t = letterboxTransform(16, 8, 8, 8);
    const [nc1, h, w] = [3, 8, 8];
    const data = new Float32Array(nc1 * h * w);
    const set = (c: number, x: number, y: number, p: number) => {
      for (let k = 0; k < nc1; k++) data[k * h * w + y * w + x] = k === c ? p : (1 - p) / 2;
    };
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) set(0, x, y, 0.9);
    // Class 0 (channel 1): input cells x 0-1, y 2-3 → original x 0-3, y 0-3. Class 1 (channel 2): x 5-7, y 4-5 → x 10-15, y 4-7.
    for (let y = 2; y <= 3; y++) for (let x = 0; x <= 1; x++) set(1, x, y, 0.8);
    for (let y = 4; y <= 5; y++) for (let x = 5; x <= 7; x++) set(2, x, y, 0.6);
    const detections = decodeYolo([{ dims: [1, nc1, h, w], data, type: 'float32' } as any], t, { confidence: 0.5, iou: 0.5, semantic: true, polygon: { epsilon: 0, minArea: 1 } });
    const summary = detections.map((d) => ({ classId: d.classId, box: d.box, confidence: Math.round(d.confidence * 100) / 100 }));
    assert.deepEqual(summary, [
      { classId: 1, box: { x: 10, y: 4, width: 6, height: 4 }, confidence: 0.6 },
      { classId: 0, box: { x: 0, y: 0, width: 4, height: 4 }, confidence: 0.8 },
    ]);
    assert.ok(detections.every((d) => d.polygons?.length === 1 && d.polygons[0].length >= 4));
    // Under the confidence threshold a region is left out.
    assert.deepEqual(decodeYolo([{ dims: [1, nc1, h, w], data, type: 'float32' } as any], t, { confidence: 0.7, iou: 0.5, semantic: true }).map((d) => d.classId), [0]);
  });
});
