import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION_TYPES } from '../../src/imaging/geometry.js';
import { AnnotationColumns } from '../../src/modules/quality/dataset-snapshot.logic.js';

const type = (name: string) => ANNOTATION_TYPES.indexOf(name as (typeof ANNOTATION_TYPES)[number]);

/** The quality report measures every shape by its envelope, not by the stored box columns (a rotated box's are the box before rotation). */
describe('quality snapshot of the new shapes', () => {
  it('measures a rotated box by its envelope, an ellipse as spatial, keypoints by their labelled points', () => {
    const a = new AnnotationColumns(4);
    // A 100 × 10 box turned 90° about its centre (50, 5): the stored columns say x 0..100, y 0..10.
    a.push([1, 1, 1, type('bbox'), 0, 0, 100, 10, JSON.stringify({ x: 0, y: 0, width: 100, height: 10, rotation: 90 })], 0);
    a.push([2, 1, 1, type('ellipse'), null, null, null, null, JSON.stringify({ cx: 50, cy: 50, rx: 20, ry: 10, rotation: 0 })], 0);
    a.push([3, 1, 1, type('keypoints'), null, null, null, null, JSON.stringify({ points: [[10, 10, 2], [0, 0, 0], [30, 40, 1]] })], 0);
    a.push([4, 1, 1, type('bbox'), 5, 6, 7, 8, null], 0);
    const box = (k: number) => [a.x[k], a.y[k], a.w[k], a.h[k]].map((v) => Math.round(v * 1000) / 1000);
    assert.deepEqual(box(0), [45, -45, 10, 100]);
    assert.equal(Math.round(a.area[0]), 1000);
    assert.deepEqual(box(1), [30, 40, 40, 20]);
    assert.equal(Math.round(a.area[1]), Math.round(Math.PI * 200));
    assert.ok(a.spatial(1), 'an ellipse has an extent the box checks measure');
    assert.deepEqual(box(2), [10, 10, 20, 30]);
    assert.ok(!a.spatial(2), 'keypoints are not compared as boxes');
    assert.deepEqual(box(3), [5, 6, 7, 8]);
  });
});
