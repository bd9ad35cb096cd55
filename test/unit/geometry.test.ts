import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clampBox,
  clipPolygon,
  GeometryError,
  geometryBox,
  parseBox,
  parseGeometry,
  parseMask,
  parsePolygon,
  polygonArea,
  type Point,
} from '../../src/imaging/geometry.js';

const image = { width: 100, height: 50 };

/** Runs `fn` and returns the GeometryError it throws, failing the test if it throws nothing else. */
function problem(fn: () => unknown): GeometryError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GeometryError, `expected a GeometryError, got ${err}`);
    return err;
  }
  assert.fail('expected a GeometryError');
}

describe('boxes', () => {
  it('keeps a box inside the image as it is', () => {
    assert.deepEqual(parseBox({ x: 10.5, y: 0, width: 89.5, height: 50 }, image), { x: 10.5, y: 0, width: 89.5, height: 50 });
  });

  it('cuts a box reaching past the image to the image', () => {
    assert.deepEqual(clampBox({ x: -10, y: 40, width: 30, height: 20 }, image), { x: 0, y: 40, width: 20, height: 10 });
    assert.deepEqual(clampBox({ x: 90, y: -5, width: 50, height: 100 }, image), { x: 90, y: 0, width: 10, height: 50 });
  });

  it('refuses a box with no area inside the image', () => {
    assert.equal(clampBox({ x: 100, y: 0, width: 10, height: 10 }, image), null);
    assert.equal(clampBox({ x: -20, y: 0, width: 20, height: 10 }, image), null);
    const err = problem(() => parseBox({ x: 0, y: 60, width: 10, height: 10 }, image));
    assert.deepEqual(err.path, []);
    assert.match(err.message, /outside the 100×50 image/);
  });

  it('refuses missing, non-numeric and non-positive sizes, pointing at the field', () => {
    assert.deepEqual(problem(() => parseBox({ x: 0, y: 0, width: 10 }, image)).path, ['height']);
    assert.deepEqual(problem(() => parseBox({ x: '1', y: 0, width: 10, height: 10 }, image)).path, ['x']);
    assert.deepEqual(problem(() => parseBox({ x: 0, y: Infinity, width: 10, height: 10 }, image)).path, ['y']);
    assert.deepEqual(problem(() => parseBox({ x: 0, y: 0, width: 0, height: 10 }, image)).path, ['width']);
    assert.deepEqual(problem(() => parseBox({ x: 0, y: 0, width: 5, height: -1 }, image)).path, ['height']);
  });

  it('stores only the box fields', () => {
    assert.deepEqual(parseBox({ x: 1, y: 2, width: 3, height: 4, label: 'extra' }, image), { x: 1, y: 2, width: 3, height: 4 });
  });
});

describe('polygons', () => {
  it('measures area whatever the winding', () => {
    const square: Point[] = [[0, 0], [10, 0], [10, 10], [0, 10]];
    assert.equal(polygonArea(square), 100);
    assert.equal(polygonArea([...square].reverse()), 100);
    assert.equal(polygonArea([[0, 0], [4, 0], [0, 3]]), 6);
    assert.equal(polygonArea([[0, 0], [5, 5], [10, 10]]), 0);
  });

  it('keeps a polygon inside the image untouched', () => {
    const points: Point[] = [[0, 0], [100, 0], [100, 50], [0, 50]];
    assert.deepEqual(parsePolygon({ points }, image), { points });
  });

  it('clips a polygon reaching past the image to the image border', () => {
    // A square hanging over the right edge keeps its inside half.
    const clipped = clipPolygon([[80, 10], [120, 10], [120, 30], [80, 30]], image);
    assert.equal(polygonArea(clipped), 20 * 20);
    assert.ok(clipped.every(([x, y]) => x >= 0 && x <= 100 && y >= 0 && y <= 50));
    // A triangle over the top-left corner gains vertices where it crosses the border.
    const corner = clipPolygon([[-10, -10], [30, -10], [-10, 30]], image);
    assert.equal(polygonArea(corner), (20 * 20) / 2);
    assert.ok(corner.every(([x, y]) => x >= 0 && y >= 0));
  });

  it('refuses polygons outside the image or without area', () => {
    assert.deepEqual(problem(() => parsePolygon({ points: [[200, 0], [300, 0], [300, 40]] }, image)).path, ['points']);
    assert.match(problem(() => parsePolygon({ points: [[0, 0], [10, 10], [20, 20]] }, image)).message, /no area/);
    // Touching the image only along its edge leaves no area inside.
    assert.match(problem(() => parsePolygon({ points: [[100, 0], [120, 0], [120, 50], [100, 50]] }, image)).message, /outside/);
  });

  it('refuses malformed points, pointing at the bad one', () => {
    assert.deepEqual(problem(() => parsePolygon({}, image)).path, ['points']);
    assert.deepEqual(problem(() => parsePolygon({ points: 'x' }, image)).path, ['points']);
    assert.match(problem(() => parsePolygon({ points: [[0, 0], [1, 1]] }, image)).message, /at least 3 points/);
    assert.deepEqual(problem(() => parsePolygon({ points: [[0, 0], [1, 1, 1], [2, 0]] }, image)).path, ['points', 1]);
    assert.deepEqual(problem(() => parsePolygon({ points: [[0, 0], [5, 0], [5, null]] }, image)).path, ['points', 2, 1]);
    assert.deepEqual(problem(() => parsePolygon({ points: [[0, 0], [5, 0], { x: 1, y: 2 }] }, image)).path, ['points', 2]);
  });
});

describe('masks', () => {
  const small = { width: 3, height: 2 };

  it('accepts an RLE the size of the image and adds its box', () => {
    const rle = { size: [2, 3], counts: [1, 3, 2] };
    assert.deepEqual(parseMask({ rle }, small), { rle, bbox: { x: 0, y: 0, width: 2, height: 2 } });
    // A box sent by the client is replaced by the computed one.
    assert.deepEqual(parseMask({ rle, bbox: { x: 9, y: 9, width: 1, height: 1 } }, small).bbox, { x: 0, y: 0, width: 2, height: 2 });
  });

  it('refuses a size other than the image size, bad counts and empty masks', () => {
    assert.deepEqual(problem(() => parseMask({ rle: { size: [3, 2], counts: [6] } }, small)).path, ['rle', 'size']);
    assert.deepEqual(problem(() => parseMask({ rle: { size: [2], counts: [6] } }, small)).path, ['rle', 'size']);
    assert.deepEqual(problem(() => parseMask({ rle: { size: [2, 3], counts: [1, 3] } }, small)).path, ['rle', 'counts']);
    assert.deepEqual(problem(() => parseMask({ rle: { size: [2, 3], counts: 'abc' } }, small)).path, ['rle', 'counts']);
    assert.deepEqual(problem(() => parseMask({ rle: { size: [2, 3], counts: [2, -1, 5] } }, small)).path, ['rle', 'counts']);
    assert.match(problem(() => parseMask({ rle: { size: [2, 3], counts: [6] } }, small)).message, /no foreground/);
    assert.deepEqual(problem(() => parseMask({}, small)).path, ['rle']);
    assert.deepEqual(problem(() => parseMask({ rle: [1, 2] }, small)).path, ['rle']);
  });
});

describe('annotation geometry by type', () => {
  it('dispatches on the annotation type', () => {
    assert.deepEqual(parseGeometry('bbox', { x: 1, y: 1, width: 2, height: 2 }, image), { x: 1, y: 1, width: 2, height: 2 });
    assert.deepEqual(parseGeometry('classification', {}, image), {});
    assert.throws(() => parseGeometry('polygon', { x: 1, y: 1, width: 2, height: 2 }, image), GeometryError);
  });

  it('refuses anything in a classification geometry', () => {
    assert.deepEqual(problem(() => parseGeometry('classification', { x: 1 }, image)).path, ['x']);
  });
});

describe('the box of a geometry', () => {
  it('is the bbox itself, the bounds of a polygon, the stored box of a mask (else its RLE\'s), and none for a classification', () => {
    assert.deepEqual(geometryBox('bbox', { x: 1, y: 2, width: 3, height: 4 }), { x: 1, y: 2, width: 3, height: 4 });
    assert.deepEqual(geometryBox('polygon', { points: [[5, 1], [9, 4], [2, 7]] }), { x: 2, y: 1, width: 7, height: 6 });
    assert.deepEqual(geometryBox('mask', { rle: { size: [2, 3], counts: [1, 2, 3] }, bbox: { x: 0, y: 0, width: 3, height: 2 } }), { x: 0, y: 0, width: 3, height: 2 });
    // Without a stored box, the RLE's: pixels 1 and 2 of a column-major 2×3 mask are (x 0, y 1) and (x 1, y 0).
    assert.deepEqual(geometryBox('mask', { rle: { size: [2, 3], counts: [1, 2, 3] } }), { x: 0, y: 0, width: 2, height: 2 });
    assert.equal(geometryBox('classification', {}), null);
    assert.equal(geometryBox('polygon', { points: [] }), null);
  });

  it('takes a polygon of any length (the copies it replaced spread every point into Math.min and overflowed the stack)', () => {
    const points = Array.from({ length: 300_000 }, (_, i): Point => [i % 1000, Math.floor(i / 1000)]);
    assert.deepEqual(geometryBox('polygon', { points }), { x: 0, y: 0, width: 999, height: 299 });
  });
});
