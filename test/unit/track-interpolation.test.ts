import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpolateGeometry, lerpDegrees, shapeAt, type Keyframe } from '../../src/modules/tracks/track-interpolation.logic.js';

const key = (frame: number, geometry: Record<string, unknown>, extra: Partial<Keyframe> = {}): Keyframe => ({
  frame, annotation_type: 'bbox', geometry, outside: false, occluded: false, ...extra,
});

describe('track interpolation (issue 26)', () => {
  it('gives the exact middle box between two keyframes, and the keyframes themselves as they are', () => {
    const track = [key(10, { x: 10, y: 20, width: 30, height: 40 }), key(20, { x: 30, y: 60, width: 50, height: 20 })];
    assert.deepEqual(shapeAt(track, 15), { annotation_type: 'bbox', geometry: { x: 20, y: 40, width: 40, height: 30 }, occluded: false, interpolated: true });
    assert.deepEqual(shapeAt(track, 10), { annotation_type: 'bbox', geometry: { x: 10, y: 20, width: 30, height: 40 }, occluded: false, interpolated: false });
    assert.deepEqual(shapeAt(track, 12)?.geometry, { x: 14, y: 28, width: 34, height: 36 });
    assert.equal(shapeAt(track, 9), null, 'nothing before the first keyframe');
    assert.deepEqual(shapeAt(track, 500), { ...shapeAt(track, 20), interpolated: true }, 'held after the last keyframe');
  });

  it('ends a visible stretch at an outside keyframe and starts another at the next keyframe', () => {
    const track = [
      key(0, { x: 0, y: 0, width: 10, height: 10 }),
      key(10, { x: 100, y: 0, width: 10, height: 10 }, { outside: true }),
      key(20, { x: 50, y: 50, width: 10, height: 10 }),
    ];
    assert.deepEqual(shapeAt(track, 5)?.geometry, { x: 0, y: 0, width: 10, height: 10 }, 'held, not moved towards an outside keyframe');
    assert.equal(shapeAt(track, 10), null);
    assert.equal(shapeAt(track, 15), null);
    assert.deepEqual(shapeAt(track, 20)?.geometry, { x: 50, y: 50, width: 10, height: 10 });
  });

  it('turns a rotation the short way round, across 0°', () => {
    assert.equal(lerpDegrees(350, 10, 0.5), 0);
    assert.equal(lerpDegrees(10, 350, 0.25), 5);
    assert.equal(lerpDegrees(90, 270, 0.5), 0, 'half a turn either way goes through the sign the difference gives');
    const track = [key(0, { x: 0, y: 0, width: 10, height: 10, rotation: 340 }), key(4, { x: 0, y: 0, width: 10, height: 10, rotation: 20 })];
    assert.equal(shapeAt(track, 1)?.geometry.rotation, 350);
    assert.equal(shapeAt(track, 3)?.geometry.rotation, 10);
    assert.equal(interpolateGeometry('ellipse', { cx: 0, cy: 0, rx: 2, ry: 2, rotation: 300 }, { cx: 10, cy: 0, rx: 4, ry: 2, rotation: 0 }, 0.5)?.rotation, 330);
  });

  it('moves points of equal count and holds the earlier keyframe otherwise', () => {
    const a = { points: [[0, 0], [10, 0], [10, 10]] };
    const b = { points: [[10, 10], [20, 10], [20, 30]] };
    assert.deepEqual(interpolateGeometry('polygon', a, b, 0.5), { points: [[5, 5], [15, 5], [15, 20]] });
    const track = [key(0, a, { annotation_type: 'polygon' }), key(2, { points: [[1, 1], [2, 2], [3, 1], [4, 4]] }, { annotation_type: 'polygon' })];
    assert.deepEqual(shapeAt(track, 1)?.geometry, a);
    const kp = interpolateGeometry('keypoints', { points: [[0, 0, 2], [0, 0, 0]] }, { points: [[4, 8, 1], [5, 5, 2]] }, 0.25);
    assert.deepEqual(kp, { points: [[1, 2, 2], [0, 0, 0]] }, 'an unlabelled point stays unlabelled; visibility is the earlier one');
  });

  it('holds the earlier shape when the next keyframe is of another type', () => {
    const track = [key(0, { x: 0, y: 0, width: 4, height: 4 }), key(4, { points: [[1, 1]] }, { annotation_type: 'points' })];
    assert.deepEqual(shapeAt(track, 2), { annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 4, height: 4 }, occluded: false, interpolated: true });
  });
});
