/**
 * Pixel-value steps appended to sharp pipelines. sharp runs its operations in a fixed internal order (blur →
 * modulate → composite → linear → normalise → CLAHE, whatever the call order), so a step that must come before
 * one already in the pipeline starts a new pass; consecutive steps of one kind merge into one operation.
 */
import type { OverlayOptions, Sharp } from 'sharp';
import { Random } from '../../lib/random.js';
import type { Size, Step } from './steps.js';

/** sharp's internal order of the operations we use; grayscale commutes with all of them. */
const STAGE: Partial<Record<Step['op'], number>> = {
  blur: 1,
  hue: 2,
  saturation: 2,
  noise: 3,
  cutout: 3,
  brightness: 4,
  exposure: 4,
  contrast_adjust: 4,
};

function stageOf(step: Step): number {
  if (step.op === 'contrast') return step.method === 'stretch' ? 5 : step.method === 'clahe' ? 6 : 7;
  if (step.op === 'grayscale') return 0;
  return STAGE[step.op] ?? 0;
}

/** Photometric steps split into passes that one sharp pipeline each can run in order; equalise ends its pass. */
export function photometricPasses(steps: readonly Step[]): Step[][] {
  const passes: Step[][] = [[]];
  let stage = 0;
  for (const step of steps) {
    const next = stageOf(step);
    const current = passes[passes.length - 1];
    const repeatsSingle = next >= 5 && next === stage; // normalise / CLAHE / equalise do not merge
    if ((next !== 0 && next < stage) || repeatsSingle || stage === 7) {
      passes.push([step]);
      stage = next;
    } else {
      current.push(step);
      stage = Math.max(stage, next);
    }
  }
  return passes.filter((p) => p.length > 0);
}

/** Append one pass's steps (from photometricPasses) to a pipeline whose image is `size`. Equalise is left out. */
export function applyPhotometric(pipeline: Sharp, steps: readonly Step[], size: Size): Sharp {
  let multiply = 1;
  let add = 0;
  let linear = false;
  let hue = 0;
  let saturation = 1;
  let modulate = false;
  const overlays: OverlayOptions[] = [];
  for (const step of steps) {
    switch (step.op) {
      case 'grayscale':
        pipeline = pipeline.grayscale();
        break;
      case 'blur':
        pipeline = pipeline.blur(step.sigma);
        break;
      case 'hue':
        hue += step.degrees;
        modulate = true;
        break;
      case 'saturation':
        saturation *= 1 + step.percent / 100;
        modulate = true;
        break;
      case 'noise':
        overlays.push(noiseOverlay(size, step.percent, step.seed));
        break;
      case 'cutout':
        for (const r of step.rects) {
          overlays.push({ input: { create: { width: r.width, height: r.height, channels: 3, background: '#000000' } }, left: r.x, top: r.y });
        }
        break;
      // brightness adds, exposure multiplies, contrast scales around mid grey; all compose into one a·x + b.
      case 'brightness':
        add += (step.percent / 100) * 255;
        linear = true;
        break;
      case 'exposure':
        multiply *= 1 + step.percent / 100;
        add *= 1 + step.percent / 100;
        linear = true;
        break;
      case 'contrast_adjust': {
        const k = 1 + step.percent / 100;
        multiply *= k;
        add = k * add + 128 * (1 - k);
        linear = true;
        break;
      }
      case 'contrast':
        if (step.method === 'stretch') pipeline = pipeline.normalise();
        if (step.method === 'clahe') pipeline = pipeline.clahe({ width: claheTile(size.width), height: claheTile(size.height), maxSlope: 3 });
        break;
      default:
        break;
    }
  }
  if (modulate) pipeline = pipeline.modulate({ hue: Math.round(hue), saturation });
  if (overlays.length > 0) pipeline = pipeline.composite(overlays);
  if (linear) pipeline = pipeline.linear(multiply, add);
  return pipeline;
}

const claheTile = (side: number) => Math.max(3, Math.round(side / 8));

/** Salt-and-pepper pixels as a transparent overlay, drawn from the step's own seed. */
function noiseOverlay(size: Size, percent: number, seed: number): OverlayOptions {
  const { width, height } = size;
  const data = Buffer.alloc(width * height * 4);
  const random = new Random(seed);
  const count = Math.round((percent / 100) * width * height);
  for (let i = 0; i < count; i++) {
    const offset = Math.floor(random.next() * width * height) * 4;
    const value = random.next() < 0.5 ? 0 : 255;
    data[offset] = value;
    data[offset + 1] = value;
    data[offset + 2] = value;
    data[offset + 3] = 255;
  }
  return { input: data, raw: { width, height, channels: 4 }, left: 0, top: 0 };
}

/** Histogram equalisation of raw pixels in place: one lookup table from the luma histogram for every channel. */
export function equalize(data: Buffer, channels: number): void {
  const pixels = data.length / channels;
  const histogram = new Uint32Array(256);
  for (let i = 0; i < data.length; i += channels) {
    const luma = channels >= 3 ? (data[i] * 299 + data[i + 1] * 587 + data[i + 2] * 114) / 1000 : data[i];
    histogram[Math.round(luma)]++;
  }
  let first = 0;
  while (first < 255 && histogram[first] === 0) first++;
  const lut = new Uint8Array(256);
  let cumulative = 0;
  const denominator = pixels - histogram[first];
  for (let v = 0; v < 256; v++) {
    cumulative += histogram[v];
    lut[v] = denominator > 0 ? Math.round(((cumulative - histogram[first]) / denominator) * 255) : v;
  }
  for (let i = 0; i < data.length; i++) data[i] = lut[data[i]];
}
