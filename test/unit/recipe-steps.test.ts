import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import {
  executePlan,
  parseRecipe,
  planOutputs,
  resizeStep,
  tileRegions,
  transformBox,
  type Plan,
  type Step,
} from '../../src/imaging/recipe/index.js';
import { BLUE, GREEN, RED, canvas, centroid, colourPixels, count, decode, encode, fillRect, type TestAnnotation } from './recipe-fixtures.js';

function recipe(pre: unknown, aug: unknown = {}) {
  const parsed = parseRecipe(pre, aug);
  assert.deepEqual(parsed.issues, []);
  return parsed.recipe!;
}

function assertBox(actual: unknown, expected: { x: number; y: number; width: number; height: number }): void {
  const b = (actual as { box: typeof expected }).box;
  for (const key of ['x', 'y', 'width', 'height'] as const) assert.ok(Math.abs(b[key] - expected[key]) < 1e-9, `${JSON.stringify(b)} ≈ ${JSON.stringify(expected)}`);
}

const box = (label: string, x: number, y: number, width: number, height: number, class_name = 'thing'): TestAnnotation => ({
  label, class_name, geometry: { type: 'bbox', box: { x, y, width, height } },
});

test('letterbox (fit_black / fit_white) centres the scaled image; offsets and padding colour are exact', async () => {
  const step = resizeStep('fit_black', { width: 200, height: 100 }, { width: 64, height: 64 });
  assert.deepEqual([step.scaled_width, step.scaled_height, step.pad_left, step.pad_top], [64, 32, 0, 16]);
  const odd = resizeStep('fit_white', { width: 100, height: 300 }, { width: 64, height: 64 });
  assert.deepEqual([odd.scaled_width, odd.scaled_height, odd.pad_left, odd.pad_top], [21, 64, 21, 0]);

  const image = canvas(200, 100, RED);
  for (const [mode, pad] of [['fit_black', [0, 0, 0]], ['fit_white', [255, 255, 255]]] as const) {
    const plan = planOutputs({ recipe: recipe({ resize: { width: 64, height: 64, mode } }), seed: 1, source: { id: 1, width: 200, height: 100 }, outputIndex: 0 });
    const [out] = await executePlan({ image: await encode(image), annotations: [box('all', 0, 0, 200, 100)] }, plan, { format: 'png' });
    assert.deepEqual([out.width, out.height], [64, 64]);
    assert.deepEqual((out.annotations[0].geometry as { box: unknown }).box, { x: 0, y: 16, width: 64, height: 32 });
    const pixels = await decode(out.image);
    assert.deepEqual([...pixels.data.subarray(0, 3)], pad, `${mode} top-left is padding`);
    assert.deepEqual([...pixels.data.subarray((15 * 64 + 10) * 3, (15 * 64 + 10) * 3 + 3)], pad, `${mode} row 15 is padding`);
    assert.deepEqual([...pixels.data.subarray((16 * 64 + 10) * 3, (16 * 64 + 10) * 3 + 3)], [255, 0, 0], `${mode} row 16 is image`);
    assert.deepEqual([...pixels.data.subarray((47 * 64 + 10) * 3, (47 * 64 + 10) * 3 + 3)], [255, 0, 0], `${mode} row 47 is image`);
    assert.deepEqual([...pixels.data.subarray((48 * 64 + 10) * 3, (48 * 64 + 10) * 3 + 3)], pad, `${mode} row 48 is padding`);
  }
});

test('fit_reflect mirrors the edges into the padding but does not duplicate annotations', async () => {
  const image = canvas(200, 100);
  fillRect(image, 0, 0, 200, 10, BLUE); // top band, mirrored into the top padding
  const plan = planOutputs({ recipe: recipe({ resize: { width: 64, height: 64, mode: 'fit_reflect' } }), seed: 1, source: { id: 1, width: 200, height: 100 }, outputIndex: 0 });
  const [out] = await executePlan({ image: await encode(image), annotations: [box('band', 0, 0, 200, 10)] }, plan, { format: 'png' });
  const pixels = await decode(out.image);
  assert.deepEqual([...pixels.data.subarray((15 * 64 + 30) * 3, (15 * 64 + 30) * 3 + 3)], [0, 0, 255]);
  assert.equal(out.annotations.length, 1);
  assertBox(out.annotations[0].geometry, { x: 0, y: 16, width: 64, height: 3.2 });
});

test('fill scales to cover and crops the centre', async () => {
  const step = resizeStep('fill', { width: 200, height: 100 }, { width: 64, height: 64 });
  assert.deepEqual([step.scaled_width, step.scaled_height, step.crop_left, step.crop_top], [128, 64, 32, 0]);
  const image = canvas(200, 100);
  fillRect(image, 0, 0, 50, 100, BLUE); // the left quarter is cropped away entirely
  fillRect(image, 90, 40, 20, 20, RED);
  const plan = planOutputs({ recipe: recipe({ resize: { width: 64, height: 64, mode: 'fill' } }), seed: 1, source: { id: 1, width: 200, height: 100 }, outputIndex: 0 });
  const [out] = await executePlan({ image: await encode(image), annotations: [box('blue', 0, 0, 50, 100), box('red', 90, 40, 20, 20)] }, plan, { format: 'png' });
  assert.deepEqual(out.annotations.map((a) => a.label), ['red']);
  assertBox(out.annotations[0].geometry, { x: 25.6, y: 25.6, width: 12.8, height: 12.8 });
  const pixels = await decode(out.image);
  assert.equal(count(colourPixels(pixels, BLUE)), 0);
  const [cx, cy] = centroid(colourPixels(pixels, RED));
  assert.ok(Math.abs(cx - 32) < 0.5 && Math.abs(cy - 32) < 0.5);
});

test('fit_within shrinks to fit but never enlarges', async () => {
  const small = resizeStep('fit_within', { width: 50, height: 40 }, { width: 640, height: 640 });
  assert.deepEqual([small.width, small.height, small.scale_x, small.scale_y], [50, 40, 1, 1]);
  const large = resizeStep('fit_within', { width: 1000, height: 500 }, { width: 640, height: 640 });
  assert.deepEqual([large.width, large.height], [640, 320]);
  const plan = planOutputs({ recipe: recipe({ resize: { width: 640, height: 640, mode: 'fit_within' } }), seed: 1, source: { id: 1, width: 50, height: 40 }, outputIndex: 0 });
  const [out] = await executePlan({ image: await encode(canvas(50, 40)), annotations: [] }, plan, { format: 'png' });
  assert.deepEqual([out.width, out.height], [50, 40]);
});

test('tiles cover the image exactly and split its annotations', async () => {
  const regions = tileRegions({ width: 101, height: 50 }, 2, 3);
  assert.equal(regions.length, 6);
  assert.equal(regions.filter((r) => r.row === 0).reduce((sum, r) => sum + r.width, 0), 101);
  assert.equal(regions.filter((r) => r.column === 0).reduce((sum, r) => sum + r.height, 0), 50);
  assert.deepEqual(regions[4], { row: 1, column: 1, x: 34, y: 25, width: 33, height: 25 });

  const image = canvas(100, 60);
  fillRect(image, 40, 20, 20, 20, RED); // straddles the vertical and horizontal cuts of a 2 × 2 tiling
  fillRect(image, 5, 5, 10, 10, BLUE); // only in the top-left tile
  const plan = planOutputs({
    recipe: recipe({ resize: { enabled: false }, tile: { enabled: true, rows: 2, columns: 2 } }),
    seed: 1, source: { id: 1, width: 100, height: 60 }, outputIndex: 0,
  });
  assert.equal(plan.outputs.length, 4);
  const outs = await executePlan({ image: await encode(image), annotations: [box('red', 40, 20, 20, 20), box('blue', 5, 5, 10, 10)] }, plan, { format: 'png' });
  assert.equal(outs.length, 4);
  assert.deepEqual(outs.map((o) => [o.width, o.height]), [[50, 30], [50, 30], [50, 30], [50, 30]]);
  assert.deepEqual(outs[0].annotations.map((a) => [a.label, (a.geometry as { box: unknown }).box]), [
    ['red', { x: 40, y: 20, width: 10, height: 10 }],
    ['blue', { x: 5, y: 5, width: 10, height: 10 }],
  ]);
  assert.deepEqual(outs[3].annotations.map((a) => [a.label, (a.geometry as { box: unknown }).box]), [['red', { x: 0, y: 0, width: 10, height: 10 }]]);
  for (const out of outs) assert.equal(count(colourPixels(await decode(out.image), RED)), 100);
  assert.deepEqual(outs[3].steps.find((s) => s.op === 'tile'), { op: 'tile', rows: 2, columns: 2, row: 1, column: 1, x: 50, y: 30, width: 50, height: 30 });

  const filtered = planOutputs({
    recipe: recipe({ resize: { enabled: false }, tile: { enabled: true, rows: 2, columns: 2 }, filter_unannotated: true }),
    seed: 1, source: { id: 1, width: 100, height: 60 }, outputIndex: 0,
  });
  const kept = await executePlan({ image: await encode(image), annotations: [box('blue', 5, 5, 10, 10)] }, filtered, { format: 'png' });
  assert.deepEqual(kept.map((o) => o.index), [0]);
});

test('EXIF orientation: auto_orient turns pixels upright; otherwise annotations move into the stored frame', async () => {
  // Stored 60 × 40 with orientation 6 (displayed rotated clockwise: 40 × 60). Red at stored (0..10, 0..10).
  const stored = canvas(60, 40);
  fillRect(stored, 0, 0, 10, 10, RED);
  const bytes = await encode(stored, 'png', 6);
  // Upright, the red square sits at the top right: x 30..40, y 0..10.
  const upright = box('red', 30, 0, 10, 10);
  for (const autoOrient of [true, false]) {
    const plan = planOutputs({ recipe: recipe({ auto_orient: autoOrient, resize: { enabled: false } }), seed: 1, source: { id: 1, width: 40, height: 60, orientation: 6 }, outputIndex: 0 });
    const [out] = await executePlan({ image: bytes, annotations: [upright] }, plan, { format: 'png' });
    const pixels = await decode(out.image);
    const [cx, cy] = centroid(colourPixels(pixels, RED));
    const b = (out.annotations[0].geometry as { box: { x: number; y: number; width: number; height: number } }).box;
    assert.deepEqual([out.width, out.height], autoOrient ? [40, 60] : [60, 40]);
    assert.ok(cx > b.x && cx < b.x + b.width && cy > b.y && cy < b.y + b.height, `${autoOrient}: ${cx},${cy} in ${JSON.stringify(b)}`);
    assert.equal(plan.outputs[0].steps[0].op, autoOrient ? 'auto_orient' : 'strip_orientation');
  }
});

test('same seed → byte-identical output; another seed → other bytes', async () => {
  const image = canvas(120, 90);
  fillRect(image, 30, 20, 40, 30, RED);
  fillRect(image, 70, 50, 30, 30, GREEN);
  const r = recipe(
    { resize: { width: 96, height: 80, mode: 'fit_black' }, contrast: 'clahe' },
    { flip_horizontal: true, rotate_90: ['cw', '180'], rotation: 20, shear: { horizontal: 10 }, crop: 30, brightness: 25, exposure: 20, contrast: 20, hue: 30, saturation: 40, grayscale: 30, blur: 3, noise: 5, cutout: { count: 2, size: 15 } },
  );
  const input = { image: await encode(image, 'jpeg'), annotations: [box('red', 30, 20, 40, 30)] };
  const run = async (seed: number) => {
    const plan = planOutputs({ recipe: r, seed, source: { id: 7, width: 120, height: 90 }, outputIndex: 2, split: 'train' });
    return { plan, outputs: await executePlan(input, plan) };
  };
  const a = await run(42);
  const b = await run(42);
  const c = await run(43);
  assert.deepEqual(a.plan, b.plan);
  assert.ok(a.outputs[0].image.equals(b.outputs[0].image));
  assert.deepEqual(a.outputs[0].annotations, b.outputs[0].annotations);
  assert.notDeepEqual(a.plan.outputs[0].steps, c.plan.outputs[0].steps);
  assert.ok(!a.outputs[0].image.equals(c.outputs[0].image));
  assert.equal((await sharp(a.outputs[0].image).metadata()).format, 'jpeg');
  // The lineage is plain JSON and replays to the same bytes.
  const replayed: Plan = JSON.parse(JSON.stringify(a.plan));
  assert.ok((await executePlan(input, replayed))[0].image.equals(a.outputs[0].image));
});

test('photometric steps change pixels but never geometry; cutout drops nothing', async () => {
  const image = canvas(80, 60);
  fillRect(image, 20, 20, 20, 20, RED);
  const annotations = [box('red', 20, 20, 20, 20)];
  const steps: Step[] = [
    { op: 'contrast', method: 'equalize' },
    { op: 'grayscale' },
    { op: 'blur', sigma: 1.2 },
    { op: 'hue', degrees: 30 },
    { op: 'saturation', percent: -20 },
    { op: 'noise', percent: 10, seed: 5 },
    { op: 'cutout', rects: [{ x: 18, y: 18, width: 30, height: 30 }] },
    { op: 'brightness', percent: 10 },
    { op: 'exposure', percent: -10 },
    { op: 'contrast_adjust', percent: 15 },
  ];
  const plan: Plan = { source: { id: 1, width: 80, height: 60 }, outputs: [{ index: 0, tile: null, steps, width: 80, height: 60 }], filter_unannotated: false };
  const [out] = await executePlan({ image: await encode(image), annotations }, plan, { format: 'png' });
  assert.deepEqual([out.width, out.height], [80, 60]);
  assert.deepEqual(out.annotations.map((a) => a.geometry), annotations.map((a) => a.geometry));
  const pixels = await decode(out.image);
  assert.equal(count(colourPixels(pixels, RED)), 0, 'the red square is cut out and grey');
});

test('class remap and drop apply before geometry', async () => {
  const plan = planOutputs({
    recipe: recipe({ resize: { enabled: false }, classes: { remap: { car: 'vehicle', truck: 'vehicle' }, drop: ['person'] } }),
    seed: 1, source: { id: 1, width: 40, height: 40 }, outputIndex: 0,
  });
  const annotations: TestAnnotation[] = [
    box('a', 1, 1, 5, 5, 'car'), box('b', 1, 1, 5, 5, 'truck'), box('c', 1, 1, 5, 5, 'person'), box('d', 1, 1, 5, 5, 'dog'),
    { label: 'e', class_name: 'person', geometry: { type: 'classification' } },
  ];
  const [out] = await executePlan({ image: await encode(canvas(40, 40)), annotations }, plan, { format: 'png' });
  assert.deepEqual(out.annotations.map((a) => [a.label, a.class_name]), [['a', 'vehicle'], ['b', 'vehicle'], ['d', 'dog']]);
});

test('boxes become the clipped bounding box of their mapped corners; boxes left outside are dropped', () => {
  const rotate90 = { a: 0, b: -1, c: 1, d: 0, e: 100, f: 0 };
  assert.deepEqual(transformBox({ x: 10, y: 20, width: 30, height: 5 }, rotate90, { width: 100, height: 100 }), { x: 75, y: 10, width: 5, height: 30 });
  assert.deepEqual(transformBox({ x: -10, y: 90, width: 30, height: 30 }, { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 }, { width: 100, height: 100 }), { x: 0, y: 90, width: 20, height: 10 });
  assert.equal(transformBox({ x: 120, y: 10, width: 5, height: 5 }, { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 }, { width: 100, height: 100 }), null);
});

test('mosaic takes four inputs and places each, with its annotations, in one quadrant', async () => {
  const colours = [RED, GREEN, BLUE, RED];
  const sources = await Promise.all(colours.map(async (colour, i) => {
    const image = canvas(60, 60);
    fillRect(image, 20, 20, 20, 20, colour);
    return { id: i + 1, image: await encode(image), annotations: [box(`square-${i + 1}`, 20, 20, 20, 20)] };
  }));
  const pool = sources.map((s) => ({ id: s.id, width: 60, height: 60 }));
  const r = recipe({ resize: { width: 80, height: 80 } }, { mosaic: 100 });
  const plan = planOutputs({ recipe: r, seed: 3, source: pool[0], outputIndex: 0, split: 'train', mosaicPool: pool });
  const mosaic = plan.outputs[0].steps.find((s) => s.op === 'mosaic');
  assert.ok(mosaic && mosaic.op === 'mosaic' && mosaic.partners.length === 3);
  const [out] = await executePlan({ image: sources[0].image, annotations: sources[0].annotations }, plan, {
    format: 'png',
    partner: async (id) => sources.find((s) => s.id === id)!,
  });
  assert.deepEqual([out.width, out.height], [80, 80]);
  assert.equal(out.annotations.length, 4);
  const pixels = await decode(out.image);
  const red = colourPixels(pixels, RED);
  const [cx, cy] = centroid(red);
  assert.ok(count(red) > 20);
  // Each annotation's box holds the colour drawn in its quadrant; the main image's square is in the top-left one.
  const first = (out.annotations[0].geometry as { box: { x: number; y: number; width: number; height: number } }).box;
  assert.ok(first.x + first.width <= mosaic.center_x + 1e-9 && first.y + first.height <= mosaic.center_y + 1e-9);
  assert.ok(Number.isFinite(cx) && Number.isFinite(cy));
});
