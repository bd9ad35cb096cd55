import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectorBox } from '../../src/training/materialise.js';

describe("training: a detector's boxes come from shapes with an extent", () => {
  it('polylines and point sets give no box, a straight horizontal line included (it would have height 0)', () => {
    assert.equal(detectorBox(0, 'polyline', { points: [[10, 20], [60, 40], [90, 25]] }), null);
    assert.equal(detectorBox(0, 'polyline', { points: [[10, 20], [90, 20]] }), null);
    assert.equal(detectorBox(0, 'points', { points: [[10, 20], [60, 40]] }), null);
    assert.equal(detectorBox(0, 'points', { points: [[10, 20]] }), null);
  });

  it('shapes with an area give their envelope, with the class index', () => {
    assert.deepEqual(detectorBox(2, 'bbox', { x: 10, y: 20, width: 30, height: 40 }), [2, 10, 20, 30, 40]);
    assert.deepEqual(detectorBox(1, 'polygon', { points: [[10, 20], [50, 20], [30, 60]] }), [1, 10, 20, 40, 40]);
    assert.deepEqual(detectorBox(0, 'ellipse', { cx: 50, cy: 40, rx: 20, ry: 10, rotation: 0 }), [0, 30, 30, 40, 20]);
    const [, x, y, width, height] = detectorBox(0, 'bbox', { x: 0, y: 0, width: 20, height: 20, rotation: 45 })!;
    const half = 10 * Math.SQRT2;
    for (const [got, want] of [[x, 10 - half], [y, 10 - half], [width, 2 * half], [height, 2 * half]]) assert.ok(Math.abs(got - want) < 1e-9, `${got} vs ${want}`);
  });

  it('keypoints give their box, else the labelled points when they span an area; a classification gives none', () => {
    assert.deepEqual(detectorBox(0, 'keypoints', { points: [[15, 25, 2], [0, 0, 0]], bbox: { x: 10, y: 20, width: 30, height: 40 } }), [0, 10, 20, 30, 40]);
    assert.deepEqual(detectorBox(0, 'keypoints', { points: [[15, 25, 2], [0, 0, 0], [35, 45, 1]] }), [0, 15, 25, 20, 20]);
    assert.equal(detectorBox(0, 'keypoints', { points: [[15, 25, 2], [0, 0, 0]] }), null, 'one labelled point has no extent');
    assert.equal(detectorBox(0, 'keypoints', { points: [[15, 25, 2], [40, 25, 2]] }), null, 'two points on a row have no height');
    assert.equal(detectorBox(0, 'classification', {}), null);
  });
});
