/**
 * The planner turns a recipe into the concrete steps of each output image, sampling every random parameter from
 * the shared seeded PRNG: same recipe, seed, source and output index → the same steps, so the same bytes.
 */
import { Random } from '../../lib/random.js';
import type { Augmentation, Preprocessing, Recipe, ResizeMode } from './recipe.js';
import { augmentsSplit } from './recipe.js';
import type { MosaicPartner, Region, Size, Step, StepOf } from './steps.js';
import { composeGeometry } from './geometry-transform.js';
import { tileRegions } from './tile.js';

/** A source image as the database knows it: upright (EXIF-applied) size and the EXIF orientation of its bytes. */
export interface SourceDescriptor {
  id: number | string;
  width: number;
  height: number;
  orientation?: number;
}

export interface PlanInput {
  recipe: Recipe;
  seed: number;
  source: SourceDescriptor;
  /** 0 … outputsPerImage − 1. */
  outputIndex: number;
  /** The source's split; decides whether it is augmented (`apply_to`). */
  split?: string | null;
  /** Other images of the same split a mosaic may draw its three partners from. */
  mosaicPool?: readonly SourceDescriptor[];
}

export interface OutputPlan {
  /** Position among this plan's outputs (one per tile). */
  index: number;
  tile: { row: number; column: number } | null;
  steps: Step[];
  width: number;
  height: number;
}

export interface Plan {
  source: SourceDescriptor;
  outputs: OutputPlan[];
  /** Outputs left with no annotation are not produced. */
  filter_unannotated: boolean;
}

export function planOutputs(input: PlanInput): Plan {
  const { recipe, source } = input;
  const pre = recipe.preprocessing;
  const random = Random.from(input.seed, source.id, input.outputIndex);
  const augment = augmentsSplit(recipe.augmentation, input.split);

  const head = sourceSteps(pre, source);
  const headSize = composeGeometry(head, source).size;
  const tiles = pre.tile.enabled && pre.tile.rows * pre.tile.columns > 1 ? tileRegions(headSize, pre.tile.rows, pre.tile.columns) : [null];

  const outputs = tiles.map((tile, index): OutputPlan => {
    const steps: Step[] = [...head];
    if (tile) steps.push({ op: 'tile', rows: pre.tile.rows, columns: pre.tile.columns, ...tile });
    steps.push(...finishingSteps(pre, tile ?? headSize));
    if (augment) {
      const size = composeGeometry(steps, source).size;
      steps.push(...augmentationSteps(recipe.augmentation, size, random, source, input.mosaicPool ?? [], pre));
    }
    const { size } = composeGeometry(steps, source);
    return { index, tile: tile && { row: tile.row, column: tile.column }, steps, width: size.width, height: size.height };
  });
  return { source, outputs, filter_unannotated: pre.filter_unannotated };
}

/** Steps up to the tiling: class mapping, orientation, static crop. */
function sourceSteps(pre: Preprocessing, source: SourceDescriptor): Step[] {
  const steps: Step[] = [];
  if (Object.keys(pre.classes.remap).length > 0 || pre.classes.drop.length > 0) {
    steps.push({ op: 'classes', remap: { ...pre.classes.remap }, drop: [...pre.classes.drop] });
  }
  const orientation = source.orientation ?? 1;
  if (orientation > 1 && orientation <= 8) steps.push({ op: pre.auto_orient ? 'auto_orient' : 'strip_orientation', orientation });
  if (pre.static_crop.enabled) {
    const size = composeGeometry(steps, source).size;
    steps.push({ op: 'static_crop', ...staticCropRegion(pre.static_crop, size) });
  }
  return steps;
}

export function staticCropRegion(crop: Preprocessing['static_crop'], size: Size): Region {
  const x = Math.min(size.width - 1, Math.round((crop.x_min / 100) * size.width));
  const y = Math.min(size.height - 1, Math.round((crop.y_min / 100) * size.height));
  const x1 = Math.max(x + 1, Math.round((crop.x_max / 100) * size.width));
  const y1 = Math.max(y + 1, Math.round((crop.y_max / 100) * size.height));
  return { x, y, width: Math.min(size.width, x1) - x, height: Math.min(size.height, y1) - y };
}

/** Resize and the pixel-wide preprocessing after the tiling. */
function finishingSteps(pre: Preprocessing, size: Size): Step[] {
  const steps: Step[] = [];
  if (pre.resize.enabled) steps.push(resizeStep(pre.resize.mode, size, { width: pre.resize.width, height: pre.resize.height }));
  if (pre.grayscale) steps.push({ op: 'grayscale' });
  if (pre.contrast !== 'none') steps.push({ op: 'contrast', method: pre.contrast });
  return steps;
}

/** The exact scaled size and the letterbox padding or centre crop of a resize. */
export function resizeStep(mode: ResizeMode, from: Size, to: Size): StepOf<'resize'> {
  let width = to.width;
  let height = to.height;
  let scaledWidth = to.width;
  let scaledHeight = to.height;
  let padLeft = 0;
  let padTop = 0;
  let cropLeft = 0;
  let cropTop = 0;
  if (mode === 'fit_black' || mode === 'fit_white' || mode === 'fit_reflect') {
    const s = Math.min(to.width / from.width, to.height / from.height);
    scaledWidth = clamp(Math.round(from.width * s), 1, to.width);
    scaledHeight = clamp(Math.round(from.height * s), 1, to.height);
    padLeft = Math.floor((to.width - scaledWidth) / 2);
    padTop = Math.floor((to.height - scaledHeight) / 2);
  } else if (mode === 'fill') {
    const s = Math.max(to.width / from.width, to.height / from.height);
    scaledWidth = Math.max(to.width, Math.round(from.width * s));
    scaledHeight = Math.max(to.height, Math.round(from.height * s));
    cropLeft = Math.floor((scaledWidth - to.width) / 2);
    cropTop = Math.floor((scaledHeight - to.height) / 2);
  } else if (mode === 'fit_within') {
    const s = Math.min(1, to.width / from.width, to.height / from.height);
    scaledWidth = width = clamp(Math.round(from.width * s), 1, from.width);
    scaledHeight = height = clamp(Math.round(from.height * s), 1, from.height);
  }
  return {
    op: 'resize',
    mode,
    width,
    height,
    scaled_width: scaledWidth,
    scaled_height: scaledHeight,
    scale_x: scaledWidth / from.width,
    scale_y: scaledHeight / from.height,
    pad_left: padLeft,
    pad_top: padTop,
    crop_left: cropLeft,
    crop_top: cropTop,
  };
}

const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));
/** Sampled values are recorded rounded, so the lineage reads cleanly and replays exactly what ran. */
const round3 = (v: number) => Math.round(v * 1000) / 1000;
const symmetric = (random: Random, limit: number) => round3(random.uniform(-limit, limit));

/** Mosaic, with `aug.mosaic` % chance: three partners from the pool, each prepared as the source was. */
function mosaicStep(aug: Augmentation, canvas: Size, random: Random, candidates: readonly SourceDescriptor[], pre: Preprocessing): Step | null {
  if (!(aug.mosaic > 0 && candidates.length > 0 && random.chance(aug.mosaic / 100))) return null;
  const partners: MosaicPartner[] = [0, 1, 2].map(() => {
    const partner = random.pick(candidates);
    const partnerSteps = sourceSteps(pre, partner);
    partnerSteps.push(...finishingSteps(pre, composeGeometry(partnerSteps, partner).size).filter((s) => s.op === 'resize'));
    return { image_id: partner.id, steps: partnerSteps };
  });
  return {
    op: 'mosaic',
    center_x: Math.round(canvas.width * random.uniform(0.25, 0.75)),
    center_y: Math.round(canvas.height * random.uniform(0.25, 0.75)),
    partners,
  };
}

/** Cutout: `count` squares of `size` % of the canvas, placed at random. */
function cutoutStep(cutout: Augmentation['cutout'], canvas: Size, random: Random): Step {
  const width = Math.max(1, Math.round((canvas.width * cutout.size) / 100));
  const height = Math.max(1, Math.round((canvas.height * cutout.size) / 100));
  const rects = Array.from({ length: cutout.count }, () => ({ x: random.int(0, canvas.width - width), y: random.int(0, canvas.height - height), width, height }));
  return { op: 'cutout', rects };
}

/** The augmentation's steps, drawn in a fixed order from `random` (the order is part of a version's replay). */
function augmentationSteps(
  aug: Augmentation,
  size: Size,
  random: Random,
  source: SourceDescriptor,
  pool: readonly SourceDescriptor[],
  pre: Preprocessing,
): Step[] {
  const steps: Step[] = [];
  if (aug.flip_horizontal && random.chance(0.5)) steps.push({ op: 'flip', axis: 'horizontal' });
  if (aug.flip_vertical && random.chance(0.5)) steps.push({ op: 'flip', axis: 'vertical' });
  let canvas = size;
  if (aug.rotate_90.length > 0) {
    const choice = random.int(0, aug.rotate_90.length);
    if (choice > 0) {
      const turn = aug.rotate_90[choice - 1];
      steps.push({ op: 'rotate_90', turn });
      if (turn !== '180') canvas = { width: canvas.height, height: canvas.width };
    }
  }
  if (aug.crop > 0) {
    const zoom = round3(random.uniform(0, aug.crop));
    const keep = 1 - zoom / 100;
    const width = round3(canvas.width * keep);
    const height = round3(canvas.height * keep);
    steps.push({ op: 'crop_zoom', zoom_percent: zoom, x: round3(random.uniform(0, canvas.width - width)), y: round3(random.uniform(0, canvas.height - height)), width, height });
  }
  if (aug.rotation > 0) steps.push({ op: 'rotate', degrees: symmetric(random, aug.rotation) });
  if (aug.shear.horizontal > 0 || aug.shear.vertical > 0) {
    steps.push({ op: 'shear', horizontal_degrees: symmetric(random, aug.shear.horizontal), vertical_degrees: symmetric(random, aug.shear.vertical) });
  }
  const mosaic = mosaicStep(aug, canvas, random, pool.filter((p) => p.id !== source.id), pre);
  if (mosaic) steps.push(mosaic);
  if (aug.grayscale > 0 && random.chance(aug.grayscale / 100)) steps.push({ op: 'grayscale' });
  if (aug.blur > 0) {
    const sigma = round3(random.uniform(0, aug.blur) / 2);
    if (sigma >= 0.3) steps.push({ op: 'blur', sigma });
  }
  if (aug.hue > 0) steps.push({ op: 'hue', degrees: Math.round(random.uniform(-aug.hue, aug.hue)) });
  if (aug.saturation > 0) steps.push({ op: 'saturation', percent: symmetric(random, aug.saturation) });
  if (aug.noise > 0) steps.push({ op: 'noise', percent: round3(random.uniform(0, aug.noise)), seed: random.int(0, 2 ** 31 - 1) });
  if (aug.cutout.count > 0) steps.push(cutoutStep(aug.cutout, canvas, random));
  if (aug.brightness > 0) steps.push({ op: 'brightness', percent: symmetric(random, aug.brightness) });
  if (aug.exposure > 0) steps.push({ op: 'exposure', percent: symmetric(random, aug.exposure) });
  if (aug.contrast > 0) steps.push({ op: 'contrast_adjust', percent: symmetric(random, aug.contrast) });
  return steps;
}
