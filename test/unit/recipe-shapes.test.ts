/**
 * recipe-shapes: every geometric step × every shape, on random shapes, checked against an independent computation —
 * the step's own map applied to the shape's corners / sample points, areas, flip twice = identity, keypoint left/right
 * swaps, keypoints outside a crop not labelled, polylines clipped, attributes and group ids carried unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Random } from '../../src/lib/random.js';
import { apply, chain, type Affine, type Point } from '../../src/imaging/recipe/affine.js';
import { stepGeometry, transformAnnotations, transformShape, type AnnotationGeometry } from '../../src/imaging/recipe/geometry-transform.js';
import type { Size, Step } from '../../src/imaging/recipe/steps.js';
import { polygonArea, rotatedCorners, type EllipseGeometry, type Keypoint, type RotatedBox } from '../../src/imaging/geometry.js';
import { flipPermutation } from '../../src/imaging/class-specs.js';

const SIZE: Size = { width: 200, height: 160 };
const near = (a: number, b: number, eps = 1e-6) => Math.abs(a - b) <= eps * Math.max(1, Math.abs(a), Math.abs(b));
const closePoint = (p: readonly number[], q: readonly number[], eps = 1e-6) => near(p[0], q[0], eps) && near(p[1], q[1], eps);

/** Every geometric step, sampled: name → step on SIZE. */
function randomSteps(random: Random): [string, Step][] {
  return [
    ['flip-horizontal', { op: 'flip', axis: 'horizontal' }],
    ['flip-vertical', { op: 'flip', axis: 'vertical' }],
    ['rotate-90-cw', { op: 'rotate_90', turn: 'cw' }],
    ['rotate-90-ccw', { op: 'rotate_90', turn: 'ccw' }],
    ['rotate-180', { op: 'rotate_90', turn: '180' }],
    ['rotate', { op: 'rotate', degrees: random.uniform(-45, 45) }],
    ['shear', { op: 'shear', horizontal_degrees: random.uniform(3, 15), vertical_degrees: random.uniform(-15, -3) }],
    ['resize-uniform', { op: 'resize', mode: 'stretch', width: 100, height: 80, scaled_width: 100, scaled_height: 80, scale_x: 0.5, scale_y: 0.5, pad_left: 0, pad_top: 0, crop_left: 0, crop_top: 0 }],
    ['resize-stretch', { op: 'resize', mode: 'stretch', width: 300, height: 80, scaled_width: 300, scaled_height: 80, scale_x: 1.5, scale_y: 0.5, pad_left: 0, pad_top: 0, crop_left: 0, crop_top: 0 }],
    ['letterbox', { op: 'resize', mode: 'fit_black', width: 220, height: 220, scaled_width: 200, scaled_height: 160, scale_x: 1, scale_y: 1, pad_left: 10, pad_top: 30, crop_left: 0, crop_top: 0 }],
    ['crop-zoom', { op: 'crop_zoom', zoom_percent: 20, x: 20, y: 16, width: 160, height: 128 }],
    ['static-crop', { op: 'static_crop', x: 30, y: 20, width: 140, height: 120 }],
    ['tile', { op: 'tile', row: 0, column: 1, rows: 1, columns: 2, x: 100, y: 0, width: 100, height: 160 }],
  ];
}

const isSimilarity = (m: Affine) => Math.abs(m.a * m.a + m.c * m.c - (m.b * m.b + m.d * m.d)) < 1e-9 && Math.abs(m.a * m.b + m.c * m.d) < 1e-9;
const isCrop = (name: string) => ['crop-zoom', 'static-crop', 'tile'].includes(name);

/** A shape around the image centre, small enough that no step here moves it out of its output (except crops/tiles). */
function centred(random: Random): { cx: number; cy: number } {
  return { cx: SIZE.width / 2 + random.uniform(-10, 10), cy: SIZE.height / 2 + random.uniform(-8, 8) };
}

function randomRotatedBox(random: Random): RotatedBox {
  const { cx, cy } = centred(random);
  const width = random.uniform(4, 24);
  const height = random.uniform(4, 24);
  return { x: cx - width / 2, y: cy - height / 2, width, height, rotation: random.uniform(1, 359) };
}

function randomEllipse(random: Random): EllipseGeometry {
  const { cx, cy } = centred(random);
  return { cx, cy, rx: random.uniform(3, 20), ry: random.uniform(3, 20), rotation: random.uniform(0, 359) };
}

function ellipsePoint(e: EllipseGeometry, t: number): Point {
  const r = (e.rotation * Math.PI) / 180;
  const x = e.rx * Math.cos(t);
  const y = e.ry * Math.sin(t);
  return [e.cx + x * Math.cos(r) - y * Math.sin(r), e.cy + x * Math.sin(r) + y * Math.cos(r)];
}

/** (x, y) in the ellipse's own frame, squared and summed: 1 on its outline. */
function ellipseLevel(e: EllipseGeometry, [x, y]: Point): number {
  const r = (e.rotation * Math.PI) / 180;
  const dx = x - e.cx;
  const dy = y - e.cy;
  const u = dx * Math.cos(r) + dy * Math.sin(r);
  const v = -dx * Math.sin(r) + dy * Math.cos(r);
  return (u / e.rx) ** 2 + (v / e.ry) ** 2;
}

/** A ring of n points on a star around a centre (a simple polygon). */
function ring(cx: number, cy: number, radius: number, n: number, random: Random): Point[] {
  return Array.from({ length: n }, (_, i) => {
    const a = (i / n) * 2 * Math.PI;
    const r = radius * random.uniform(0.6, 1);
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)] as Point;
  });
}

function sameCorners(actual: Point[], expected: Point[], eps = 1e-6) {
  for (const e of expected) assert.ok(actual.some((a) => closePoint(a, e, eps)), `corner ${e} not among ${JSON.stringify(actual)}`);
}

const ITERATIONS = 60;

test('recipe-shapes: a rotated box stays a rotated box under flips, quarter turns, rotations and uniform scales (its corners are the mapped corners), a polygon of its mapped corners under shear or stretch', () => {
  const random = new Random(11);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      if (isCrop(name)) continue;
      const box = randomRotatedBox(random);
      const { map, size } = stepGeometry(step, SIZE);
      const out = transformShape({ type: 'bbox', box }, map, size);
      assert.equal(out.length, 1, name);
      const expected = rotatedCorners(box).map((p) => apply(map, p));
      const g = out[0];
      if (isSimilarity(map)) {
        assert.equal(g.type, 'bbox', `${name}: stays a rotated box`);
        if (g.type !== 'bbox') continue;
        sameCorners(rotatedCorners(g.box), expected, 1e-6);
        if (name === 'rotate' && step.op === 'rotate') {
          const turned = ((box.rotation! + step.degrees) % 360 + 360) % 360;
          assert.ok(near(g.box.rotation!, turned, 1e-6) || near(Math.abs(g.box.rotation! - turned), 360, 1e-6), `${name}: angle ${g.box.rotation} = ${turned}`);
        }
      } else {
        assert.equal(g.type, 'polygon', `${name}: a skewed rotated box becomes a polygon`);
        if (g.type !== 'polygon') continue;
        sameCorners(g.points, expected);
        assert.ok(near(polygonArea(g.points), polygonArea(expected), 1e-9), 'area');
      }
    }
  }
});

test('recipe-shapes: flipping twice gives back every shape, and a flip mirrors angles (180° − θ horizontally, −θ vertically)', () => {
  const random = new Random(12);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const axis of ['horizontal', 'vertical'] as const) {
      const { map } = stepGeometry({ op: 'flip', axis }, SIZE);
      const box = randomRotatedBox(random);
      const once = transformShape({ type: 'bbox', box }, map, SIZE)[0] as Extract<AnnotationGeometry, { type: 'bbox' }>;
      const mirrored = axis === 'horizontal' ? 180 - box.rotation! : -box.rotation!;
      const norm = (a: number) => ((a % 180) + 180) % 180; // a rectangle is the same turned by 180°
      assert.ok(near(norm(once.box.rotation!), norm(mirrored), 1e-9) || near(Math.abs(norm(once.box.rotation!) - norm(mirrored)), 180, 1e-9), 'mirrored angle');
      const twice = transformShape(once, map, SIZE)[0] as Extract<AnnotationGeometry, { type: 'bbox' }>;
      sameCorners(rotatedCorners(twice.box), rotatedCorners(box));
      const ellipse = randomEllipse(random);
      const e2 = transformShape(transformShape({ type: 'ellipse', ellipse }, map, SIZE)[0], map, SIZE)[0] as Extract<AnnotationGeometry, { type: 'ellipse' }>;
      for (let k = 0; k < 8; k++) assert.ok(near(ellipseLevel(e2.ellipse, ellipsePoint(ellipse, k)), 1, 1e-6), 'flip twice: same ellipse');
    }
  }
});

test('recipe-shapes: an ellipse maps to the ellipse through its mapped outline under every step (shear and stretch included)', () => {
  const random = new Random(13);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      if (isCrop(name)) continue;
      const ellipse = randomEllipse(random);
      const { map, size } = stepGeometry(step, SIZE);
      const out = transformShape({ type: 'ellipse', ellipse }, map, size);
      assert.equal(out.length, 1, name);
      const g = out[0] as Extract<AnnotationGeometry, { type: 'ellipse' }>;
      assert.equal(g.type, 'ellipse');
      for (let k = 0; k < 16; k++) {
        const level = ellipseLevel(g.ellipse, apply(map, ellipsePoint(ellipse, (k / 16) * 2 * Math.PI)));
        assert.ok(near(level, 1, 1e-6), `${name}: mapped outline point at level ${level}`);
      }
      if (name === 'rotate' && step.op === 'rotate' && Math.abs(ellipse.rx - ellipse.ry) > 1) {
        const turned = ((ellipse.rotation + step.degrees) % 360 + 360) % 360;
        assert.ok(near(g.ellipse.rotation, turned, 1e-6) || near(Math.abs(g.ellipse.rotation - turned), 360, 1e-6), `angle ${g.ellipse.rotation} = ${turned}`);
        assert.ok(near(g.ellipse.rx, ellipse.rx) && near(g.ellipse.ry, ellipse.ry), 'radii kept');
      }
    }
  }
});

test('recipe-shapes: a multi-part polygon with a hole maps every ring; rotation keeps each area, a scale multiplies it by the determinant', () => {
  const random = new Random(14);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      if (isCrop(name)) continue;
      const { cx, cy } = centred(random);
      const parts = [ring(cx - 8, cy, 7, random.int(3, 9), random), ring(cx + 8, cy, 6, random.int(3, 9), random)];
      const holes = [ring(cx - 8, cy, 2, 4, random)];
      const { map, size } = stepGeometry(step, SIZE);
      const out = transformShape({ type: 'polygon', points: parts[0], parts, holes }, map, size);
      assert.equal(out.length, 1);
      const g = out[0] as Extract<AnnotationGeometry, { type: 'polygon' }>;
      assert.equal(g.parts?.length, 2, `${name}: both parts kept`);
      assert.equal(g.holes?.length, 1, `${name}: the hole kept`);
      const det = Math.abs(map.a * map.d - map.b * map.c);
      [...parts, ...holes].forEach((r, k) => {
        const mapped = k < 2 ? g.parts![k] : g.holes![0];
        assert.equal(mapped.length, r.length);
        r.forEach((p, j) => assert.ok(closePoint(mapped[j], apply(map, p)), 'vertex mapped'));
        assert.ok(near(polygonArea(mapped), polygonArea(r) * det, 1e-9), `${name}: area`);
      });
    }
  }
});

test('recipe-shapes: keypoints follow the map; a mirroring step swaps left/right points by the skeleton flip pairs; flipping twice is the identity', () => {
  const random = new Random(15);
  const skeleton = { flip_pairs: [[1, 2], [3, 4]] as [number, number][] };
  const flip = flipPermutation(skeleton, 5);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      if (isCrop(name)) continue;
      const { cx, cy } = centred(random);
      const points: Keypoint[] = Array.from({ length: 5 }, (_, k) => (k === 4 && random.chance(0.5) ? [0, 0, 0] : [cx + random.uniform(-15, 15), cy + random.uniform(-15, 15), random.chance(0.5) ? 1 : 2]));
      const { map, size } = stepGeometry(step, SIZE);
      const out = transformShape({ type: 'keypoints', points, flip }, map, size);
      const g = out[0] as Extract<AnnotationGeometry, { type: 'keypoints' }>;
      const mirror = map.a * map.d - map.b * map.c < 0;
      assert.equal(mirror, name.startsWith('flip'), name);
      g.points.forEach((p, k) => {
        const from = points[mirror ? flip[k] : k];
        if (from[2] === 0) assert.deepEqual(p, [0, 0, 0]);
        else {
          assert.ok(closePoint(p, apply(map, [from[0], from[1]])), `${name}: point ${k}`);
          assert.equal(p[2], from[2]);
        }
      });
      if (mirror) {
        const back = transformShape(g, map, size)[0] as Extract<AnnotationGeometry, { type: 'keypoints' }>;
        back.points.forEach((p, k) => assert.ok(closePoint(p, points[k], 1e-9), 'flip twice'));
      }
    }
  }
});

test('recipe-shapes: crops and tiles mark keypoints outside as not labelled, keep points inside, clip polygons, and drop point-set points outside', () => {
  const random = new Random(16);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      if (!isCrop(name)) continue;
      const { map, size } = stepGeometry(step, SIZE);
      const inside = (p: Point) => p[0] >= 0 && p[1] >= 0 && p[0] <= size.width && p[1] <= size.height;
      const points: Keypoint[] = Array.from({ length: 8 }, () => [random.uniform(0, SIZE.width), random.uniform(0, SIZE.height), 2]);
      points.push([random.uniform(0, 100), random.uniform(0, SIZE.height), 2], [random.uniform(0, 100) + 100, random.uniform(40, 100), 2]);
      const out = transformShape({ type: 'keypoints', points }, map, size);
      const expected = points.map(([x, y]) => apply(map, [x, y]));
      if (!expected.some(inside)) {
        assert.equal(out.length, 0);
        continue;
      }
      const g = out[0] as Extract<AnnotationGeometry, { type: 'keypoints' }>;
      g.points.forEach((p, k) => {
        if (inside(expected[k])) assert.ok(closePoint(p, expected[k]) && p[2] === 2, `${name}: kept`);
        else assert.deepEqual(p, [0, 0, 0], `${name}: outside → not labelled`);
      });
      const set = transformShape({ type: 'points', points: points.map(([x, y]) => [x, y] as Point) }, map, size)[0] as Extract<AnnotationGeometry, { type: 'points' }>;
      assert.equal(set.points.length, expected.filter(inside).length);
      const poly = ring(random.uniform(0, SIZE.width), random.uniform(0, SIZE.height), 40, 12, random);
      for (const g2 of transformShape({ type: 'polygon', points: poly }, map, size)) {
        assert.equal(g2.type, 'polygon');
        if (g2.type === 'polygon') assert.ok(g2.points.every(inside), 'clipped inside');
      }
    }
  }
});

/** Length of the part of a path inside [0, w] × [0, h], by dense sampling (independent of the clipping code). */
function sampledInsideLength(points: Point[], size: Size): number {
  let length = 0;
  const n = 2000;
  for (let i = 0; i + 1 < points.length; i++) {
    const [p, q] = [points[i], points[i + 1]];
    const step = Math.hypot(q[0] - p[0], q[1] - p[1]) / n;
    for (let k = 0; k < n; k++) {
      const t = (k + 0.5) / n;
      const x = p[0] + t * (q[0] - p[0]);
      const y = p[1] + t * (q[1] - p[1]);
      if (x >= 0 && y >= 0 && x <= size.width && y <= size.height) length += step;
    }
  }
  return length;
}

test('recipe-shapes: a crop clips a polyline; pieces lie on the mapped path, inside the output, with the same inside length; a cut polyline keeps its pieces in one group', () => {
  const random = new Random(17);
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, step] of randomSteps(random)) {
      const { map, size } = stepGeometry(step, SIZE);
      const path: Point[] = Array.from({ length: random.int(2, 7) }, () => [random.uniform(-20, SIZE.width + 20), random.uniform(-20, SIZE.height + 20)]);
      const mapped = path.map((p) => apply(map, p));
      const pieces = transformShape({ type: 'polyline', points: path }, map, size) as Extract<AnnotationGeometry, { type: 'polyline' }>[];
      const total = pieces.reduce((sum, piece) => sum + piece.points.slice(1).reduce((s, p, k) => s + Math.hypot(p[0] - piece.points[k][0], p[1] - piece.points[k][1]), 0), 0);
      const expected = sampledInsideLength(mapped, size);
      assert.ok(Math.abs(total - expected) <= 1e-3 * Math.max(1, expected) + 0.01 * mapped.length, `${name}: inside length ${total} vs ${expected}`);
      for (const piece of pieces) {
        assert.ok(piece.points.length >= 2, 'piece of 2 points');
        for (const p of piece.points) assert.ok(p[0] >= -1e-9 && p[1] >= -1e-9 && p[0] <= size.width + 1e-9 && p[1] <= size.height + 1e-9, 'piece inside');
      }
      const annotations = transformAnnotations([{ class_name: 'road', geometry: { type: 'polyline', points: path }, attributes: { lanes: 2 } }, { class_name: 'x', geometry: { type: 'classification' }, group_id: 4 }], map, size);
      const lines = annotations.filter((a) => a.geometry.type === 'polyline');
      assert.equal(lines.length, pieces.length);
      for (const a of lines) assert.deepEqual(a.attributes, { lanes: 2 });
      if (lines.length > 1) {
        assert.ok(lines.every((a) => a.group_id === 5), `${name}: pieces share a new group above the others`);
      }
    }
  }
});

test('recipe-shapes: attributes and group ids are carried unchanged through a chain of steps, for every shape', () => {
  const random = new Random(18);
  const steps = randomSteps(random).filter(([name]) => !isCrop(name) && name !== 'resize-stretch' && name !== 'letterbox');
  let size = SIZE;
  let map: Affine = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
  for (const [, step] of steps) {
    const next = stepGeometry(step, size);
    map = chain(map, next.map);
    size = next.size;
  }
  const { cx, cy } = { cx: 100, cy: 80 };
  const geometries: AnnotationGeometry[] = [
    { type: 'bbox', box: { x: cx - 5, y: cy - 5, width: 10, height: 10 } },
    { type: 'bbox', box: randomRotatedBox(random) },
    { type: 'polygon', points: ring(cx, cy, 10, 6, random) },
    { type: 'keypoints', points: [[cx, cy, 2], [cx + 3, cy, 1]] },
    { type: 'polyline', points: [[cx - 5, cy], [cx + 5, cy + 2]] },
    { type: 'points', points: [[cx, cy]] },
    { type: 'ellipse', ellipse: randomEllipse(random) },
    { type: 'classification' },
  ];
  const input = geometries.map((geometry, k) => ({ class_name: `c${k}`, geometry, attributes: { k, occluded: k % 2 === 0 }, group_id: k % 3 === 0 ? null : k, id: k }));
  // Each step in turn, as a version applies stages (mask shapes are covered by recipe-property's tests).
  const out = transformAnnotations(input, map, size);
  assert.equal(out.length, input.length);
  out.forEach((a, k) => {
    assert.deepEqual(a.attributes, input[k].attributes);
    assert.equal(a.group_id, input[k].group_id);
    assert.equal(a.id, k);
  });
});
