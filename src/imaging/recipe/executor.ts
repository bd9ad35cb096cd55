/**
 * The executor applies planned steps to an image and its annotations. Geometry runs in as few sharp passes as
 * possible: orientation, crop/tile, resize and letterbox in one pipeline, and every augmentation move (flips,
 * quarter turns, crop/zoom, rotation, shear) composed into one affine in that same pipeline; a second pass only
 * cuts the affine's output to the canvas and runs the pixel-value steps before encoding.
 */
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { apply, chain, invert, translate, type Affine } from './affine.js';
import { composeGeometry, isGeometric, mapClasses, stepGeometry, transformAnnotations, transformThrough, type RecipeAnnotation } from './geometry-transform.js';
import { composeMosaic, type MosaicTile, type RawImage } from './mosaic.js';
import { applyPhotometric, equalize, photometricPasses } from './photometric.js';
import type { OutputPlan, Plan } from './planner.js';
import type { Size, Step, StepOf } from './steps.js';

export interface RecipeInput<A extends RecipeAnnotation> {
  /** The encoded source file, bytes untouched (EXIF orientation still in them). */
  image: Buffer;
  /** Annotations in the upright image's pixels. */
  annotations: readonly A[];
}

export interface ExecuteOptions<A extends RecipeAnnotation> {
  format?: 'jpeg' | 'png';
  /** JPEG quality. */
  quality?: number;
  /** Loads a mosaic partner named by a `mosaic` step. */
  partner?: (imageId: number | string) => Promise<RecipeInput<A>>;
}

export interface RecipeOutput<A extends RecipeAnnotation> {
  index: number;
  tile: OutputPlan['tile'];
  steps: Step[];
  image: Buffer;
  format: 'jpeg' | 'png';
  width: number;
  height: number;
  annotations: A[];
}

/** Every output of a plan; tiles share one decode of the source. Outputs filtered as unannotated are left out. */
export async function executePlan<A extends RecipeAnnotation>(
  input: RecipeInput<A>,
  plan: Plan,
  options: ExecuteOptions<A> = {},
): Promise<RecipeOutput<A>[]> {
  const format = options.format ?? 'jpeg';
  let start: Start = { kind: 'encoded', data: input.image };
  let frame: Size = { width: plan.source.width, height: plan.source.height };
  let annotations = input.annotations;
  let headLength = 0;
  if (plan.outputs.length > 1) {
    // Everything before the tile step is shared: run it once into raw pixels.
    const steps = plan.outputs[0].steps;
    headLength = steps.findIndex((s) => s.op === 'tile');
    const head = steps.slice(0, headLength);
    annotations = headAnnotations(annotations, head, frame);
    const rendered = await renderGeometry(start, head.filter(isGeometric), frame);
    start = { kind: 'raw', image: await toRaw(rendered.pipeline) };
    frame = rendered.size;
  }
  const outputs: RecipeOutput<A>[] = [];
  for (const output of plan.outputs) {
    const result = await executeSteps(start, frame, output.steps.slice(headLength), annotations, format, options);
    if (plan.filter_unannotated && result.annotations.length === 0) continue;
    outputs.push({ index: output.index, tile: output.tile, steps: output.steps, format, ...result });
  }
  return outputs;
}

function headAnnotations<A extends RecipeAnnotation>(annotations: readonly A[], head: Step[], frame: Size): A[] {
  const classes = head.find((s): s is StepOf<'classes'> => s.op === 'classes');
  const mapped = classes ? mapClasses(annotations, classes.remap, classes.drop) : [...annotations];
  const { map, size } = composeGeometry(head, frame);
  return transformAnnotations(mapped, map, size);
}

type Start = { kind: 'encoded'; data: Buffer } | { kind: 'raw'; image: RawImage };

async function executeSteps<A extends RecipeAnnotation>(
  start: Start,
  frame: Size,
  steps: Step[],
  annotations: readonly A[],
  format: 'jpeg' | 'png',
  options: ExecuteOptions<A>,
): Promise<{ image: Buffer; width: number; height: number; annotations: A[] }> {
  const classes = steps.find((s): s is StepOf<'classes'> => s.op === 'classes');
  let current = classes ? mapClasses(annotations, classes.remap, classes.drop) : [...annotations];
  const mosaicAt = steps.findIndex((s) => s.op === 'mosaic');
  const geometric = (mosaicAt < 0 ? steps : steps.slice(0, mosaicAt)).filter(isGeometric);
  const photometric = steps.filter((s) => !isGeometric(s) && s.op !== 'classes');

  let { pipeline, size } = await renderGeometry(start, geometric, frame);
  current = transformThrough(current, geometric, frame);

  if (mosaicAt >= 0) {
    const mosaic = steps[mosaicAt] as StepOf<'mosaic'>;
    const tiles = [{ image: await toRaw(pipeline), annotations: current }] as MosaicTile<A>[];
    for (const partner of mosaic.partners) {
      if (!options.partner) throw new Error('a mosaic step needs ExecuteOptions.partner to load its partner images');
      const source = await options.partner(partner.image_id);
      const partnerFrame = await uprightSize(source.image);
      const partnerSteps = partner.steps.filter(isGeometric);
      const rendered = await renderGeometry({ kind: 'encoded', data: source.image }, partnerSteps, partnerFrame);
      const partnerClasses = partner.steps.find((s): s is StepOf<'classes'> => s.op === 'classes');
      const own = partnerClasses ? mapClasses(source.annotations, partnerClasses.remap, partnerClasses.drop) : [...source.annotations];
      tiles.push({ image: await toRaw(rendered.pipeline), annotations: transformThrough(own, partnerSteps, partnerFrame) });
    }
    const composed = await composeMosaic(size, mosaic.center_x, mosaic.center_y, tiles as [MosaicTile<A>, MosaicTile<A>, MosaicTile<A>, MosaicTile<A>]);
    pipeline = openRaw(composed.image);
    current = composed.annotations;
  }

  const passes = photometricPasses(photometric);
  for (const pass of passes) {
    pipeline = applyPhotometric(pipeline, pass, size);
    const last = pass[pass.length - 1];
    if (last.op === 'contrast' && last.method === 'equalize') {
      const raw = await toRaw(pipeline);
      equalize(raw.data, raw.channels);
      pipeline = openRaw(raw);
    } else if (pass !== passes.at(-1)) {
      pipeline = openRaw(await toRaw(pipeline));
    }
  }
  pipeline = pipeline.toColourspace('srgb');
  const encoded = format === 'png' ? pipeline.png() : pipeline.jpeg({ quality: options.quality ?? 90 });
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
  return { image: data, width: info.width, height: info.height, annotations: current };
}

async function uprightSize(image: Buffer): Promise<Size> {
  const metadata = await sharp(image).metadata();
  return metadata.autoOrient ?? { width: metadata.width ?? 0, height: metadata.height ?? 0 };
}

function openRaw(image: RawImage): Sharp {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } });
}

async function toRaw(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const AUGMENT_OPS = new Set<Step['op']>(['flip', 'rotate_90', 'crop_zoom', 'rotate', 'shear']);
const BLACK = '#000000';
const WHITE = '#ffffff';

/**
 * A pending pipeline that renders the geometric steps (orientation, crop/tile, resize, augmentation moves) from
 * `frame`, the size of the start image as the steps see it (upright for an encoded source).
 */
async function renderGeometry(start: Start, steps: Step[], frame: Size): Promise<{ pipeline: Sharp; size: Size }> {
  let pipeline = start.kind === 'encoded' ? sharp(start.data).flatten({ background: BLACK }) : openRaw(start.image);
  let size = frame;
  // Crops before the resize merge into sharp's one pre-resize extract; later crops are its post-resize extract.
  let preCrop: { left: number; top: number; width: number; height: number } | null = null;
  let resized = false;
  const extract = (left: number, top: number, width: number, height: number) => {
    if (resized) {
      pipeline = pipeline.extract({ left, top, width, height });
    } else {
      preCrop = { left: (preCrop?.left ?? 0) + left, top: (preCrop?.top ?? 0) + top, width, height };
    }
  };
  let flushed = false;
  const flushPreCrop = () => {
    if (preCrop && !flushed) pipeline = pipeline.extract(preCrop);
    flushed = true;
  };

  let augment: Affine | null = null;
  let augmentedSize = size;
  let resize: StepOf<'resize'> | null = null;
  for (const step of steps) {
    if (AUGMENT_OPS.has(step.op)) {
      const next = stepGeometry(step, augmentedSize);
      augment = chain(augment ?? translate(0, 0), next.map);
      augmentedSize = next.size;
      continue;
    }
    if (augment) throw new Error(`step ${step.op} cannot follow an augmentation step`);
    if (step.op === 'auto_orient' && start.kind === 'encoded') pipeline = pipeline.autoOrient();
    if (step.op === 'static_crop' || step.op === 'tile') extract(step.x, step.y, step.width, step.height);
    if (step.op === 'resize') resize = step;
    size = stepGeometry(step, size).size;
    augmentedSize = size;
  }

  // The resize, and where the canvas sits relative to the scaled image.
  let scaled = preCrop ? { width: (preCrop as { width: number }).width, height: (preCrop as { height: number }).height } : frameAfterOrientation(steps, frame);
  let background = BLACK;
  let padLeft = 0;
  let padTop = 0;
  if (resize) {
    if (resize.scaled_width !== scaled.width || resize.scaled_height !== scaled.height) {
      flushPreCrop();
      pipeline = pipeline.resize(resize.scaled_width, resize.scaled_height, { fit: 'fill' });
      resized = true;
    }
    scaled = { width: resize.scaled_width, height: resize.scaled_height };
    background = resize.mode === 'fit_white' ? WHITE : BLACK;
    padLeft = resize.pad_left - resize.crop_left;
    padTop = resize.pad_top - resize.crop_top;
  }
  const canvas = resize ? { width: resize.width, height: resize.height } : scaled;

  const letterbox = resize !== null && (resize.pad_left > 0 || resize.pad_top > 0 || resize.scaled_width < resize.width || resize.scaled_height < resize.height);
  if (!augment || (letterbox && resize?.mode === 'fit_reflect')) {
    // Canvas = the scaled image cropped (fill) and/or padded (letterbox).
    const cropLeft = Math.max(0, -padLeft);
    const cropTop = Math.max(0, -padTop);
    const keptWidth = Math.min(scaled.width - cropLeft, canvas.width);
    const keptHeight = Math.min(scaled.height - cropTop, canvas.height);
    if (cropLeft > 0 || cropTop > 0 || keptWidth < scaled.width || keptHeight < scaled.height) extract(cropLeft, cropTop, keptWidth, keptHeight);
    flushPreCrop();
    if (letterbox) {
      const left = Math.max(0, padLeft);
      const top = Math.max(0, padTop);
      pipeline = pipeline.extend({
        left,
        top,
        right: canvas.width - keptWidth - left,
        bottom: canvas.height - keptHeight - top,
        ...(resize?.mode === 'fit_reflect' ? { extendWith: 'mirror' as const } : { background }),
      });
    }
    if (!augment) return { pipeline, size: canvas };
    // Mirror padding cannot be an affine background: pad in this pass, move in the next.
    const padded = await toRaw(pipeline);
    return renderAffine(openRaw(padded), canvas, augment, augmentedSize, background, (l, t, w, h) => openRaw(padded).extract({ left: l, top: t, width: w, height: h }));
  }

  // Letterbox and fill crop are translations: fold them into the augmentation affine, padding = its background.
  const map = chain(translate(padLeft, padTop), augment);
  return renderAffine(pipeline, scaled, map, augmentedSize, background, (left, top, width, height) => {
    // sharp misplaces an affine that follows a post-resize extract; only a pre-resize crop can share the pass.
    if (resized) return null;
    extract(left, top, width, height);
    flushPreCrop();
    return pipeline;
  });
}

function frameAfterOrientation(steps: Step[], frame: Size): Size {
  return composeGeometry(steps.filter((s) => s.op === 'strip_orientation'), frame).size;
}

/**
 * Render `map` (from an image of `from` pixels to an `to` canvas) with sharp's affine. Only the part of the image
 * that lands on the canvas is transformed. libvips sizes its output to the bounding box of the transformed input
 * (origin at the rounded minimum corner, pixel centres at integer coordinates), so the result is cut to the
 * canvas in a second, raw pass.
 */
async function renderAffine(
  pipeline: Sharp,
  from: Size,
  map: Affine,
  to: Size,
  background: string,
  cropTo: (left: number, top: number, width: number, height: number) => Sharp | null,
): Promise<{ pipeline: Sharp; size: Size }> {
  const inverse = invert(map);
  const corners = [apply(inverse, [0, 0]), apply(inverse, [to.width, 0]), apply(inverse, [0, to.height]), apply(inverse, [to.width, to.height])];
  const margin = 2; // interpolation reads neighbours
  const left = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[0]))) - margin);
  const top = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[1]))) - margin);
  const right = Math.min(from.width, Math.ceil(Math.max(...corners.map((p) => p[0]))) + margin);
  const bottom = Math.min(from.height, Math.ceil(Math.max(...corners.map((p) => p[1]))) + margin);
  if (right <= left || bottom <= top) return { pipeline: blank(to, background), size: to };
  const region = { width: right - left, height: bottom - top };
  const whole = left === 0 && top === 0 && region.width === from.width && region.height === from.height;
  if (!whole) {
    // Zooming in: transform only the part that lands on the canvas, else libvips renders the whole enlarged image.
    pipeline = cropTo(left, top, region.width, region.height) ?? openRaw(await toRaw(pipeline)).extract({ left, top, width: region.width, height: region.height });
  } else {
    pipeline = cropTo(0, 0, from.width, from.height) ?? pipeline;
  }

  const m = chain(translate(left, top), map);
  // Our coordinates put pixel centres at +0.5, libvips' at integers: p_out = M·p_in + (M·½ + t − ½).
  const cx = (m.a + m.b) / 2 + m.e - 0.5;
  const cy = (m.c + m.d) / 2 + m.f - 0.5;
  const xs = [0, m.a * region.width, m.b * region.height, m.a * region.width + m.b * region.height];
  const ys = [0, m.c * region.width, m.d * region.height, m.c * region.width + m.d * region.height];
  const dx = Math.round(Math.min(...xs)) + cx;
  const dy = Math.round(Math.min(...ys)) + cy;
  const kx = Math.round(dx);
  const ky = Math.round(dy);
  const moved = await toRaw(
    pipeline.affine([m.a, m.b, m.c, m.d], { odx: dx - kx, ody: dy - ky, background, interpolator: sharp.interpolators.bilinear }),
  );
  // Canvas pixel j is affine-output pixel j − k.
  const x0 = Math.max(0, -kx);
  const y0 = Math.max(0, -ky);
  const x1 = Math.min(moved.width, to.width - kx);
  const y1 = Math.min(moved.height, to.height - ky);
  if (x1 <= x0 || y1 <= y0) return { pipeline: blank(to, background), size: to };
  let out = openRaw(moved);
  if (x0 > 0 || y0 > 0 || x1 < moved.width || y1 < moved.height) out = out.extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 });
  const padLeft = x0 + kx;
  const padTop = y0 + ky;
  const padRight = to.width - padLeft - (x1 - x0);
  const padBottom = to.height - padTop - (y1 - y0);
  if (padLeft > 0 || padTop > 0 || padRight > 0 || padBottom > 0) {
    out = out.extend({ left: padLeft, top: padTop, right: padRight, bottom: padBottom, background });
  }
  return { pipeline: out, size: to };
}

function blank(size: Size, background: string): Sharp {
  return sharp({ create: { width: size.width, height: size.height, channels: 3, background } });
}
