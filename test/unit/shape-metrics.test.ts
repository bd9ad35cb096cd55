/**
 * shape-metrics: areas and overlaps of every shape checked against brute force — Monte Carlo point sampling for boxes,
 * ellipses and polygons (with parts and holes), pixel counting for masks — on seeded random shapes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rotatedCorners, type Point, type RotatedBox } from '../../src/imaging/geometry.js';
import { encodeRle } from '../../src/imaging/rle.js';
import { Random } from '../../src/lib/random.js';
import {
  boxIou,
  clipConvex,
  COCO_PERSON_SIGMAS,
  defaultSigmas,
  distinctPoints,
  ellipsePolygon,
  mixedShapeIou,
  oks,
  pointSetDistance,
  polygonShapeArea,
  polylineDistance,
  shapeArea,
  shapeIou,
  UNIFORM_SIGMA,
  type EllipseShape,
  type PolygonShape,
} from '../../src/imaging/shape-metrics.js';

/** The project's seeded generator (mulberry32): the same shapes on every run. */
function rng(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}

/** Even–odd point-in-ring test. */
function inRing(ring: Point[], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if (yi > y !== yj > y && x < xi + ((y - yi) / (yj - yi)) * (xj - xi)) inside = !inside;
  }
  return inside;
}

const inPolygon = (g: PolygonShape, x: number, y: number) =>
  (g.parts ?? [g.points]).some((p) => inRing(p, x, y)) && !(g.holes ?? []).some((h) => inRing(h, x, y));

function inEllipse(e: EllipseShape, x: number, y: number): boolean {
  const rad = (e.rotation * Math.PI) / 180;
  const dx = x - e.cx;
  const dy = y - e.cy;
  const u = dx * Math.cos(rad) + dy * Math.sin(rad);
  const v = -dx * Math.sin(rad) + dy * Math.cos(rad);
  return (u / e.rx) ** 2 + (v / e.ry) ** 2 <= 1;
}

const inBox = (b: RotatedBox, x: number, y: number) => inRing(rotatedCorners(b), x, y);

/** Monte Carlo IoU and areas of two inside-tests over a window. */
function monteCarlo(inA: (x: number, y: number) => boolean, inB: (x: number, y: number) => boolean, window: { x: number; y: number; w: number; h: number }, n: number, random: () => number) {
  let a = 0;
  let b = 0;
  let both = 0;
  for (let k = 0; k < n; k++) {
    const x = window.x + random() * window.w;
    const y = window.y + random() * window.h;
    const ia = inA(x, y);
    const ib = inB(x, y);
    if (ia) a++;
    if (ib) b++;
    if (ia && ib) both++;
  }
  const cell = (window.w * window.h) / n;
  return { areaA: a * cell, areaB: b * cell, iou: a + b - both === 0 ? 0 : both / (a + b - both) };
}

const randomBox = (r: () => number): RotatedBox => ({ x: 20 + r() * 40, y: 20 + r() * 40, width: 5 + r() * 40, height: 5 + r() * 40, rotation: r() * 360 });
const randomEllipse = (r: () => number): EllipseShape => ({ cx: 40 + r() * 20, cy: 40 + r() * 20, rx: 5 + r() * 25, ry: 5 + r() * 25, rotation: r() * 360 });

/** A star-shaped (often concave) ring around a centre. */
function randomRing(r: () => number, cx: number, cy: number, radius: number, n = 7): Point[] {
  return Array.from({ length: n }, (_, i) => {
    const t = (2 * Math.PI * i) / n;
    const rr = radius * (0.4 + 0.6 * r());
    return [cx + rr * Math.cos(t), cy + rr * Math.sin(t)] as Point;
  });
}

const WINDOW = { x: -20, y: -20, w: 140, h: 140 };
const SAMPLES = 100_000;

describe('shape-metrics: areas', () => {
  it('shape-metrics: a rotated box covers w·h whatever its angle, as point sampling finds', () => {
    const r = rng(1);
    for (let t = 0; t < 5; t++) {
      const b = randomBox(r);
      assert.equal(shapeArea('bbox', b), b.width * b.height);
      const mc = monteCarlo((x, y) => inBox(b, x, y), () => false, WINDOW, SAMPLES, r);
      assert.ok(Math.abs(mc.areaA - b.width * b.height) < 0.03 * b.width * b.height + 10, `${mc.areaA} vs ${b.width * b.height}`);
    }
  });

  it('shape-metrics: an ellipse covers π·rx·ry, and its stand-in 64-gon covers the same', () => {
    const e = { cx: 50, cy: 50, rx: 30, ry: 12, rotation: 33 };
    assert.ok(Math.abs(shapeArea('ellipse', e) - Math.PI * 360) < 1e-9);
    const gon = ellipsePolygon(e);
    assert.equal(gon.length, 64);
    assert.ok(Math.abs(polygonShapeArea({ points: gon }) - Math.PI * 360) < 1e-6);
    const mc = monteCarlo((x, y) => inEllipse(e, x, y), () => false, WINDOW, SAMPLES, rng(2));
    assert.ok(Math.abs(mc.areaA - Math.PI * 360) < 0.03 * Math.PI * 360);
  });

  it('shape-metrics: a polygon object is its parts less its holes', () => {
    const square = (x: number, y: number, s: number): Point[] => [[x, y], [x + s, y], [x + s, y + s], [x, y + s]];
    const g: PolygonShape = { points: square(0, 0, 40), parts: [square(0, 0, 40), square(60, 60, 20)], holes: [square(10, 10, 10)] };
    assert.equal(shapeArea('polygon', g), 1600 + 400 - 100);
    assert.ok(Math.abs(polygonShapeArea(g, { scan: true }) - 1900) < 1);
    // Overlapping parts: the default sums them; the scan unites them.
    const overlap: PolygonShape = { points: square(0, 0, 40), parts: [square(0, 0, 40), square(20, 20, 40)] };
    assert.ok(Math.abs(polygonShapeArea(overlap, { scan: true }) - (1600 + 1600 - 400)) < 1);
  });

  it('shape-metrics: a mask covers its foreground pixels; polylines, points and keypoints cover nothing', () => {
    const width = 10;
    const height = 8;
    const data = new Uint8Array(width * height);
    for (const i of [3, 4, 5, 13, 14, 50, 79]) data[i] = 1;
    assert.equal(shapeArea('mask', { rle: encodeRle({ width, height, data }) }), 7);
    for (const type of ['polyline', 'points', 'keypoints', 'classification']) assert.equal(shapeArea(type, { points: [[0, 0], [10, 10]] }), 0);
  });
});

describe('shape-metrics: IoU against Monte Carlo', () => {
  it('shape-metrics: rotated boxes (exact convex clipping) agree with point sampling', () => {
    const r = rng(3);
    for (let t = 0; t < 20; t++) {
      const a = randomBox(r);
      const b = t % 4 === 0 ? { ...a, rotation: (a.rotation! + 10) % 360 } : randomBox(r);
      const exact = shapeIou('bbox', a, b)!;
      const mc = monteCarlo((x, y) => inBox(a, x, y), (x, y) => inBox(b, x, y), WINDOW, SAMPLES, r);
      assert.ok(Math.abs(exact - mc.iou) < 0.02, `box pair ${t}: ${exact} vs ${mc.iou}`);
    }
  });

  it('shape-metrics: known rotated-box overlaps', () => {
    const a = { x: 0, y: 0, width: 10, height: 10, rotation: 0 };
    assert.equal(boxIou(a, a), 1);
    assert.ok(Math.abs(boxIou(a, { ...a, rotation: 90 }) - 1) < 1e-9);
    // A square and the same square turned 45°: the octagon (1 − (3 − 2√2)) · 100 shared.
    const inter = 100 * (2 * Math.SQRT2 - 2);
    assert.ok(Math.abs(boxIou(a, { ...a, rotation: 45 }) - inter / (200 - inter)) < 1e-9);
    assert.equal(boxIou(a, { x: 50, y: 50, width: 10, height: 10, rotation: 30 }), 0);
    // Axis-aligned boxes: the plain formula.
    assert.ok(Math.abs(boxIou({ x: 0, y: 0, width: 10, height: 10 }, { x: 5, y: 0, width: 10, height: 10 }) - 50 / 150) < 1e-12);
  });

  it('shape-metrics: clipping a concave polygon against a convex one keeps the inside', () => {
    const concave: Point[] = [[0, 0], [10, 0], [10, 10], [5, 3], [0, 10]];
    const clip: Point[] = [[0, 0], [10, 0], [10, 5], [0, 5]];
    const out = clipConvex(concave, clip);
    const mc = monteCarlo((x, y) => inRing(out, x, y), (x, y) => inRing(concave, x, y) && inRing(clip, x, y), { x: 0, y: 0, w: 10, h: 10 }, SAMPLES, rng(4));
    assert.ok(Math.abs(mc.areaA - mc.areaB) < 1);
  });

  it('shape-metrics: ellipses (64-gons of equal area) agree with point sampling within 0.02', () => {
    const r = rng(5);
    for (let t = 0; t < 15; t++) {
      const a = randomEllipse(r);
      const b = randomEllipse(r);
      const estimate = shapeIou('ellipse', a, b)!;
      const mc = monteCarlo((x, y) => inEllipse(a, x, y), (x, y) => inEllipse(b, x, y), WINDOW, SAMPLES, r);
      assert.ok(Math.abs(estimate - mc.iou) < 0.02, `ellipse pair ${t}: ${estimate} vs ${mc.iou}`);
    }
    const e = { cx: 50, cy: 50, rx: 20, ry: 10, rotation: 10 };
    assert.ok(Math.abs(shapeIou('ellipse', e, e)! - 1) < 1e-9);
  });

  it('shape-metrics: concave polygons with parts and holes (scanline integration) agree with point sampling', () => {
    const r = rng(6);
    for (let t = 0; t < 12; t++) {
      const a: PolygonShape = { points: randomRing(r, 40, 40, 30, 9) };
      a.parts = [a.points, randomRing(r, 85, 30, 12)];
      a.holes = [randomRing(r, 40, 40, 8, 5)];
      const b: PolygonShape = { points: randomRing(r, 50 + r() * 20, 45, 30, 11) };
      if (t % 2) b.holes = [randomRing(r, 55, 45, 10, 6)];
      const estimate = shapeIou('polygon', a, b)!;
      const mc = monteCarlo((x, y) => inPolygon(a, x, y), (x, y) => inPolygon(b, x, y), WINDOW, SAMPLES, r);
      assert.ok(Math.abs(estimate - mc.iou) < 0.02, `polygon pair ${t}: ${estimate} vs ${mc.iou}`);
    }
  });

  it('shape-metrics: mixed area shapes (a rotated box against an ellipse and a polygon)', () => {
    const r = rng(7);
    const box = { x: 30, y: 35, width: 40, height: 20, rotation: 25 };
    const ellipse = { cx: 50, cy: 45, rx: 22, ry: 14, rotation: 70 };
    const polygon: PolygonShape = { points: randomRing(r, 50, 45, 25, 8) };
    const be = mixedShapeIou('bbox', box, 'ellipse', ellipse)!;
    const mcBe = monteCarlo((x, y) => inBox(box, x, y), (x, y) => inEllipse(ellipse, x, y), WINDOW, SAMPLES, r);
    assert.ok(Math.abs(be - mcBe.iou) < 0.02);
    const bp = mixedShapeIou('bbox', box, 'polygon', polygon)!;
    const mcBp = monteCarlo((x, y) => inBox(box, x, y), (x, y) => inPolygon(polygon, x, y), WINDOW, SAMPLES, r);
    assert.ok(Math.abs(bp - mcBp.iou) < 0.02);
    assert.equal(mixedShapeIou('bbox', box, 'polyline', { points: [[0, 0], [1, 1]] }), null);
  });

  it('shape-metrics: masks (exact over runs) agree with counting pixels', () => {
    const r = rng(8);
    const width = 37;
    const height = 23;
    for (let t = 0; t < 10; t++) {
      const a = new Uint8Array(width * height).map(() => (r() < 0.4 ? 1 : 0));
      const b = new Uint8Array(width * height).map((_, i) => (r() < 0.3 || (a[i] && r() < 0.5) ? 1 : 0));
      let both = 0;
      let either = 0;
      for (let i = 0; i < a.length; i++) {
        if (a[i] && b[i]) both++;
        if (a[i] || b[i]) either++;
      }
      const value = shapeIou('mask', { rle: encodeRle({ width, height, data: a }) }, { rle: encodeRle({ width, height, data: b }) })!;
      assert.ok(Math.abs(value - both / either) < 1e-12);
    }
  });

  it('shape-metrics: types without area have no IoU', () => {
    assert.equal(shapeIou('polyline', { points: [[0, 0], [1, 1]] }, { points: [[0, 0], [1, 1]] }), null);
    assert.equal(shapeIou('keypoints', { points: [[1, 1, 2]] }, { points: [[1, 1, 2]] }), null);
  });
});

describe('shape-metrics: keypoints (OKS)', () => {
  const person = COCO_PERSON_SIGMAS.map((_, i) => [10 + i * 3, 20 + (i % 4) * 5, 2]);

  it('shape-metrics: the same instance scores 1, a moved one follows COCO’s formula point by point', () => {
    assert.equal(oks(person, person, { area: 1000 }), 1);
    const moved = person.map(([x, y, v]) => [x + 3, y - 4, v]);
    const expected = COCO_PERSON_SIGMAS.reduce((sum, s) => sum + Math.exp(-25 / (2 * 1000 * (2 * s) ** 2)), 0) / 17;
    assert.ok(Math.abs(oks(person, moved, { area: 1000 })! - expected) < 1e-12);
    // Farther is worse; a bigger object forgives more.
    const far = person.map(([x, y, v]) => [x + 10, y, v]);
    assert.ok(oks(person, far, { area: 1000 })! < oks(person, moved, { area: 1000 })!);
    assert.ok(oks(person, far, { area: 10_000 })! > oks(person, far, { area: 1000 })!);
  });

  it('shape-metrics: only the ground truth’s labelled points count; a point the other lacks scores 0; none labelled is null', () => {
    const gt = [[10, 10, 2], [0, 0, 0], [30, 30, 1]];
    const pred = [[10, 10, 2], [50, 50, 2], [0, 0, 0]];
    assert.equal(oks(gt, pred, { area: 400 }), 0.5);
    assert.equal(oks([[0, 0, 0]], pred), null);
    // Default area: the labelled points' envelope (20 × 20 here).
    assert.equal(oks(gt, gt.map(([x, y, v]) => [x + 1, y, v]))!.toFixed(12), oks(gt, gt.map(([x, y, v]) => [x + 1, y, v]), { area: 400 })!.toFixed(12));
  });

  it('shape-metrics: 17 points get COCO’s person sigmas, other skeletons a uniform sigma', () => {
    assert.deepEqual(defaultSigmas(17), [...COCO_PERSON_SIGMAS]);
    assert.deepEqual(defaultSigmas(5), new Array(5).fill(UNIFORM_SIGMA));
    assert.ok(UNIFORM_SIGMA > 0.066 && UNIFORM_SIGMA < 0.068, `${UNIFORM_SIGMA}`);
  });
});

describe('shape-metrics: polylines and point sets', () => {
  it('shape-metrics: a path is 0 from itself, d from a parallel copy d away, and symmetric', () => {
    const r = rng(9);
    const path: Point[] = Array.from({ length: 6 }, (_, i) => [i * 10, r() * 5]);
    assert.ok(polylineDistance(path, path) < 1e-9, 'same path');
    assert.ok(Math.abs(polylineDistance([[0, 0], [100, 0]], [[0, 7], [100, 7]]) - 7) < 1e-9);
    const other: Point[] = path.map(([x, y]) => [x + r(), y + 2 * r()]);
    assert.ok(Math.abs(polylineDistance(path, other) - polylineDistance(other, path)) < 1e-12);
    // Extra vertices along the same line change nothing.
    assert.ok(polylineDistance([[0, 0], [100, 0]], [[0, 0], [30, 0], [100, 0]]) < 1e-9);
  });

  it('shape-metrics: the polyline distance matches a brute-force dense sampling', () => {
    const r = rng(10);
    for (let t = 0; t < 5; t++) {
      const a: Point[] = Array.from({ length: 5 }, () => [r() * 100, r() * 100]);
      const b: Point[] = Array.from({ length: 4 }, () => [r() * 100, r() * 100]);
      const dense = (p: Point[]) => {
        const out: Point[] = [];
        for (let i = 1; i < p.length; i++) for (let k = 0; k < 100; k++) out.push([p[i - 1][0] + (k / 100) * (p[i][0] - p[i - 1][0]), p[i - 1][1] + (k / 100) * (p[i][1] - p[i - 1][1])]);
        return out;
      };
      // Sampled evenly by length, the mean over a dense path's points approximates the same mean.
      const da = dense(a);
      const db = dense(b);
      const brute = (pointSetDistance(da, db) + pointSetDistance(db, da)) / 2;
      assert.ok(Math.abs(polylineDistance(a, b) - brute) < 0.25 * brute + 1, `${polylineDistance(a, b)} vs ${brute}`);
    }
  });

  it('shape-metrics: point sets and distinct points', () => {
    assert.equal(pointSetDistance([[0, 0], [10, 0]], [[0, 0], [10, 0]]), 0);
    assert.equal(pointSetDistance([[0, 0]], [[3, 4]]), 5);
    assert.equal(distinctPoints([[1, 1], [1, 1], [1, 1]]), 1);
    assert.equal(distinctPoints([[1, 1], [1, 1], [2, 1], [3, 3]]), 3);
    assert.equal(distinctPoints([[1, 1], [2, 2], [3, 3]], 1e-6, 2), 2);
  });
});
