import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Random } from '../../src/lib/random.js';
import {
  executePlan,
  parseRecipe,
  planOutputs,
  RESIZE_MODES,
  ROTATE_90_CHOICES,
  type RecipeOutput,
} from '../../src/imaging/recipe/index.js';
import {
  BLUE, GREEN, RED, canvas, centroid, colourPixels, count, decode, encode, fillRect, fillTriangle, iou, pointInPolygon,
  shareInsideBox, type TestAnnotation,
} from './recipe-fixtures.js';

/** A random geometric-only recipe: every preprocessing and augmentation move, no pixel-value change. */
function randomRecipe(random: Random) {
  // Reflect padding copies pixels (not annotations) into the border; it has its own test.
  const modes = RESIZE_MODES.filter((m) => m !== 'fit_reflect');
  const preprocessing = {
    resize: { enabled: random.chance(0.85), width: random.int(40, 90), height: random.int(40, 90), mode: random.pick(modes) },
    static_crop: random.chance(0.3) ? { enabled: true, x_min: random.int(0, 20), x_max: random.int(75, 100), y_min: random.int(0, 20), y_max: random.int(75, 100) } : {},
  };
  const augmentation = random.chance(0.2)
    ? {}
    : {
        enabled: true,
        flip_horizontal: random.chance(0.5),
        flip_vertical: random.chance(0.5),
        rotate_90: ROTATE_90_CHOICES.filter(() => random.chance(0.5)),
        rotation: random.chance(0.6) ? random.int(1, 30) : 0,
        shear: random.chance(0.4) ? { horizontal: random.int(0, 15), vertical: random.int(0, 15) } : {},
        crop: random.chance(0.4) ? random.int(1, 40) : 0,
      };
  return { preprocessing, augmentation };
}

async function scene(random: Random) {
  const width = random.int(70, 130);
  const height = random.int(60, 120);
  const image = canvas(width, height);
  const annotations: TestAnnotation[] = [];
  const rw = random.int(16, 30);
  const rh = random.int(14, 28);
  const rx = random.int(0, width - rw);
  const ry = random.int(0, Math.floor(height / 2) - rh + 10);
  fillRect(image, rx, ry, rw, rh, RED);
  annotations.push({ label: 'red', class_name: 'box', geometry: { type: 'bbox', box: { x: rx, y: ry, width: rw, height: rh } } });
  const bw = random.int(14, 24);
  const bh = random.int(14, 24);
  const bx = random.int(0, width - bw);
  const by = random.int(Math.floor(height / 2) + 2, height - bh);
  fillRect(image, bx, by, bw, bh, BLUE);
  annotations.push({ label: 'blue', class_name: 'box', geometry: { type: 'bbox', box: { x: bx, y: by, width: bw, height: bh } } });
  // A green triangle, annotated both as a polygon and as a mask of exactly its pixels.
  const tx = random.int(0, width - 30);
  const ty = random.int(0, height - 30);
  const triangle: [number, number][] = [[tx + 1, ty + 1], [tx + random.int(24, 30), ty + random.int(2, 8)], [tx + random.int(4, 12), ty + random.int(24, 29)]];
  const mask = fillTriangle(image, triangle, GREEN);
  annotations.push({ label: 'green-polygon', class_name: 'shape', geometry: { type: 'polygon', points: triangle } });
  annotations.push({ label: 'green-mask', class_name: 'shape', geometry: { type: 'mask', mask } });
  // The shapes overlap sometimes; paint order decides which colour wins, so keep only the unoccluded checks.
  return { width, height, image: await encode(image), annotations };
}

function check(output: RecipeOutput<TestAnnotation>, label: string, pixels: ReturnType<typeof colourPixels>, context: string): void {
  const annotation = output.annotations.find((a) => a.label === label);
  const n = count(pixels);
  if (!annotation) {
    assert.ok(n < 6, `${context}: ${label} was dropped but ${n} of its pixels are in the output`);
    return;
  }
  if (n < 25) return; // a sliver at the border: too few pixels to measure
  const g = annotation.geometry;
  if (g.type === 'bbox') {
    assert.ok(shareInsideBox(pixels, g.box) > 0.97, `${context}: ${label} pixels outside its box ${JSON.stringify(g.box)}`);
    const [cx, cy] = centroid(pixels);
    assert.ok(cx >= g.box.x - 1 && cx <= g.box.x + g.box.width + 1 && cy >= g.box.y - 1 && cy <= g.box.y + g.box.height + 1, `${context}: ${label} centroid outside its box`);
  } else if (g.type === 'polygon') {
    assert.ok(pointInPolygon(centroid(pixels), g.points), `${context}: ${label} centroid ${centroid(pixels)} outside ${JSON.stringify(g.points)}`);
  } else if (g.type === 'mask') {
    // Resampling blends a thin shape's edges away from the colour, so compare positions and a loose overlap.
    const overlap = iou(g.mask, pixels);
    const [mx, my] = centroid(g.mask);
    const [px, py] = centroid(pixels);
    const detail = `${count(g.mask)} mask pixels at ${mx.toFixed(2)},${my.toFixed(2)}; ${n} coloured at ${px.toFixed(2)},${py.toFixed(2)}; IoU ${overlap.toFixed(3)}`;
    assert.ok(Math.hypot(mx - px, my - py) < 1.5, `${context}: ${label} ${detail}`);
    if (n >= 60) assert.ok(overlap > 0.6, `${context}: ${label} ${detail}`);
  }
}

test('transformed geometry matches where the coloured pixels went, for random geometric recipes', async () => {
  const random = new Random(Number(process.env.RECIPE_PROPERTY_SEED ?? 20240611));
  for (let trial = 0; trial < 40; trial++) {
    const { preprocessing, augmentation } = randomRecipe(random);
    const parsed = parseRecipe(preprocessing, augmentation);
    assert.deepEqual(parsed.issues, []);
    const source = await scene(random);
    const plan = planOutputs({ recipe: parsed.recipe!, seed: trial, source: { id: trial, width: source.width, height: source.height }, outputIndex: 0, split: 'train' });
    const [output] = await executePlan({ image: source.image, annotations: source.annotations }, plan, { format: 'png' }).catch((error: Error) => {
      throw new Error(`trial ${trial} ${JSON.stringify(plan.outputs[0].steps)} (source ${source.width}×${source.height}): ${error.message}`);
    });
    const context = `trial ${trial} ${JSON.stringify(output.steps)}`;
    assert.equal(output.width, plan.outputs[0].width, context);
    assert.equal(output.height, plan.outputs[0].height, context);
    const pixels = await decode(output.image);
    assert.equal(pixels.width, output.width);
    // Which colour owns a pixel is only unambiguous when shapes do not overlap in the source.
    const red = colourPixels(pixels, RED);
    const blue = colourPixels(pixels, BLUE);
    const green = colourPixels(pixels, GREEN);
    check(output, 'red', red, context);
    check(output, 'blue', blue, context);
    if (count(colourPixels(await decode(source.image), GREEN)) === count((source.annotations[3].geometry as { mask: { data: Uint8Array } }).mask as never)) {
      check(output, 'green-polygon', green, context);
      check(output, 'green-mask', green, context);
    }
  }
});
