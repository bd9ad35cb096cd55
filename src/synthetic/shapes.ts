import sharp from 'sharp';
import { encodeRle, type Box, type Rle } from '../imaging/rle.js';
import { Random } from '../lib/random.js';
import { storedForOrientation, type ExifOrientation, type RawImage } from './orientation.js';
import { polygonSpans, spansArea, type Point, type Span } from './raster.js';
import { SHAPE_CLASSES, hexOf, rgbOf, type ShapeKind } from './shape-classes.js';
import { pointsBox } from '../imaging/geometry.js';

export type SyntheticFormat = 'jpeg' | 'png' | 'webp';
export type SyntheticBackground = 'plain' | 'gradient' | 'noise';

export interface ShapesImageOptions {
  /** Same seed and options → identical bytes and labels. */
  seed: number | string;
  /** Size as displayed (after any EXIF orientation is applied); labels are in these pixels. Default 640×480. */
  width?: number;
  height?: number;
  /** Shapes to draw (default 5). Shapes never overlap; when they cannot all fit, fewer are drawn. */
  count?: number;
  format?: SyntheticFormat;
  /** JPEG/WebP quality, 1–100 (default 90). */
  quality?: number;
  /** `noise` (default) is a gradient with sensor-like noise over everything, which makes realistic file sizes. */
  background?: SyntheticBackground;
  /** Writes this EXIF orientation and stores the pixels so that the oriented image is the labelled one. */
  orientation?: ExifOrientation;
  /** Compute each shape's RLE mask (default true); benchmarks that only need pixels turn it off. */
  masks?: boolean;
}

export interface SyntheticShape {
  className: string;
  /** Index into SHAPE_CLASSES. */
  classIndex: number;
  kind: ShapeKind;
  /** The `#rrggbb` the shape was filled with. */
  color: string;
  /** Axis-aligned extent of the polygon, inside the image. */
  bbox: Box;
  /** The outline, clockwise on screen, coordinates rounded to 0.1 px. */
  polygon: Point[];
  /** Pixels covered (those whose centre is inside the polygon): the mask's foreground count. */
  area: number;
  /** COCO uncompressed RLE of exactly the pixels painted for this shape; null when masks are off. */
  mask: Rle | null;
}

export interface RenderedShapes {
  /** The upright image, RGB. */
  raw: RawImage;
  shapes: SyntheticShape[];
}

export interface ShapesImage {
  data: Buffer;
  /** As displayed: for orientations 5–8 the stored pixel grid is height×width. */
  width: number;
  height: number;
  format: SyntheticFormat;
  mimeType: string;
  extension: string;
  orientation: ExifOrientation | null;
  shapes: SyntheticShape[];
}

const MIME: Record<SyntheticFormat, { mimeType: string; extension: string }> = {
  jpeg: { mimeType: 'image/jpeg', extension: 'jpg' },
  png: { mimeType: 'image/png', extension: 'png' },
  webp: { mimeType: 'image/webp', extension: 'webp' },
};

/** Keeps every vertex at least this far from the image border, so boxes are strictly inside. */
const BORDER = 1;
/** Space kept between the bounding squares of two shapes, so their masks never touch. */
const GAP = 3;
const NOISE_AMPLITUDE = 10;
const ROUND_SEGMENTS = 48;

/** Draws the shapes and their labels into raw pixels; `generateShapesImage` encodes the result. */
export function renderShapes(options: ShapesImageOptions): RenderedShapes {
  const width = dimension(options.width ?? 640, 'width');
  const height = dimension(options.height ?? 480, 'height');
  const count = options.count ?? 5;
  if (!Number.isInteger(count) || count < 0 || count > 500) throw new RangeError('count must be an integer from 0 to 500');
  // Separate streams, so the layout of a seed does not depend on the background chosen.
  const layout = Random.from('synthetic-layout', options.seed);
  const pixels = Random.from('synthetic-pixels', options.seed);

  const data = Buffer.alloc(width * height * 3);
  paintBackground(data, width, height, options.background ?? 'noise', pixels);

  const mask = options.masks === false ? null : new Uint8Array(width * height);
  const shapes: SyntheticShape[] = [];
  for (const placed of placeShapes(width, height, count, layout)) {
    const shapeClass = SHAPE_CLASSES[placed.classIndex];
    const polygon = outline(shapeClass.kind, placed.cx, placed.cy, placed.radius, layout);
    const spans = polygonSpans(polygon, width, height);
    const rgb = jitter(rgbOf(shapeClass.color), layout);
    fillSpans(data, width, spans, rgb);
    shapes.push({
      className: shapeClass.name,
      classIndex: placed.classIndex,
      kind: shapeClass.kind,
      color: hexOf(rgb),
      bbox: extent(polygon),
      polygon,
      area: spansArea(spans),
      mask: mask ? spansRle(mask, width, height, spans) : null,
    });
  }
  if ((options.background ?? 'noise') === 'noise') addNoise(data, pixels);
  return { raw: { width, height, data }, shapes };
}

/** A deterministic image of coloured shapes with its ground truth. */
export async function generateShapesImage(options: ShapesImageOptions): Promise<ShapesImage> {
  const format = options.format ?? 'jpeg';
  if (!(format in MIME)) throw new RangeError(`format must be one of ${Object.keys(MIME).join(', ')}`);
  const quality = options.quality ?? 90;
  if (!Number.isInteger(quality) || quality < 1 || quality > 100) throw new RangeError('quality must be an integer from 1 to 100');
  const orientation = options.orientation ?? null;
  if (orientation !== null && !(Number.isInteger(orientation) && orientation >= 1 && orientation <= 8)) {
    throw new RangeError('orientation must be an integer from 1 to 8');
  }
  const { raw, shapes } = renderShapes(options);
  const stored = orientation === null ? raw : storedForOrientation(raw, orientation);
  let image = sharp(stored.data, { raw: { width: stored.width, height: stored.height, channels: 3 } });
  if (orientation !== null) image = image.withMetadata({ orientation });
  if (format === 'jpeg') image = image.jpeg({ quality });
  else if (format === 'png') image = image.png({ compressionLevel: 6 });
  else image = image.webp({ quality });
  const data = await image.toBuffer();
  return { data, width: raw.width, height: raw.height, format, ...MIME[format], orientation, shapes };
}

function dimension(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 16 || value > 8192) throw new RangeError(`${name} must be an integer from 16 to 8192`);
  return value;
}

interface Placement {
  classIndex: number;
  cx: number;
  cy: number;
  /** Every vertex lies within this distance of the centre. */
  radius: number;
}

/** Non-overlapping positions by rejection sampling; a shape that keeps colliding shrinks until it fits or is dropped. */
function placeShapes(width: number, height: number, count: number, random: Random): Placement[] {
  const shortest = Math.min(width, height);
  const largest = Math.max(4, Math.min(shortest * 0.2, Math.sqrt((width * height) / Math.max(count, 1) / Math.PI) * 0.55));
  const placed: Placement[] = [];
  for (let i = 0; i < count; i++) {
    const classIndex = random.int(0, SHAPE_CLASSES.length - 1);
    let radius = random.uniform(largest * 0.45, largest);
    for (let attempt = 0; attempt < 200 && radius >= 3; attempt++, radius *= 0.97) {
      const room = radius + BORDER + 0.5;
      if (2 * room >= shortest) continue;
      const candidate = { classIndex, radius, cx: random.uniform(room, width - room), cy: random.uniform(room, height - room) };
      const clear = placed.every(
        (other) =>
          Math.abs(candidate.cx - other.cx) >= candidate.radius + other.radius + GAP ||
          Math.abs(candidate.cy - other.cy) >= candidate.radius + other.radius + GAP,
      );
      if (clear) {
        placed.push(candidate);
        break;
      }
    }
  }
  return placed;
}

/** The shape's polygon around (cx, cy); every vertex is within `radius` of the centre. */
function outline(kind: ShapeKind, cx: number, cy: number, radius: number, random: Random): Point[] {
  const turn = random.uniform(0, Math.PI);
  switch (kind) {
    case 'rectangle': {
      // Half-sides from the half-diagonal's angle keep the corners on the circle; half the rectangles stay axis-aligned.
      const diagonal = random.uniform(0.45, 1.12);
      const a = radius * Math.cos(diagonal);
      const b = radius * Math.sin(diagonal);
      const angle = random.chance(0.5) ? 0 : turn;
      return ([[-a, -b], [a, -b], [a, b], [-a, b]] as Point[]).map(([x, y]) => rotated(cx, cy, x, y, angle));
    }
    case 'circle':
      return ring(cx, cy, radius, radius, 0, ROUND_SEGMENTS);
    case 'ellipse':
      return ring(cx, cy, radius, radius * random.uniform(0.45, 0.75), turn, ROUND_SEGMENTS);
    case 'triangle':
      return [0, 1, 2].map((k) => {
        const angle = turn + (k * 2 * Math.PI) / 3 + random.uniform(-0.35, 0.35);
        const r = radius * random.uniform(0.8, 1);
        return rounded(cx + r * Math.cos(angle), cy + r * Math.sin(angle));
      });
    case 'hexagon':
      return ring(cx, cy, radius, radius, turn, 6);
  }
}

function ring(cx: number, cy: number, a: number, b: number, angle: number, segments: number): Point[] {
  const points: Point[] = [];
  for (let k = 0; k < segments; k++) {
    const t = (k * 2 * Math.PI) / segments;
    points.push(rotated(cx, cy, a * Math.cos(t), b * Math.sin(t), angle));
  }
  return points;
}

function rotated(cx: number, cy: number, x: number, y: number, angle: number): Point {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  return rounded(cx + x * cos - y * sin, cy + x * sin + y * cos);
}

function rounded(x: number, y: number): Point {
  return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
}

function extent(polygon: readonly Point[]): Box {
  const { x, y, width, height } = pointsBox(polygon);
  return { x, y, width: Math.round(width * 10) / 10, height: Math.round(height * 10) / 10 };
}

function jitter(rgb: [number, number, number], random: Random): [number, number, number] {
  return rgb.map((c) => Math.min(255, Math.max(0, c + random.int(-16, 16)))) as [number, number, number];
}

function fillSpans(data: Buffer, width: number, spans: readonly Span[], [r, g, b]: readonly number[]): void {
  for (const { y, x0, x1 } of spans) {
    for (let i = (y * width + x0) * 3, end = (y * width + x1) * 3; i < end; i += 3) {
      data[i] = r;
      data[i + 1] = g;
      data[i + 2] = b;
    }
  }
}

/** Encodes the spans through the shared RLE helper, reusing one scratch bitmap for every shape of the image. */
function spansRle(scratch: Uint8Array, width: number, height: number, spans: readonly Span[]): Rle {
  for (const { y, x0, x1 } of spans) scratch.fill(1, y * width + x0, y * width + x1);
  const rle = encodeRle({ width, height, data: scratch });
  for (const { y, x0, x1 } of spans) scratch.fill(0, y * width + x0, y * width + x1);
  return rle;
}

/** Muted tones, so the saturated shapes stand out. */
function backgroundTone(random: Random): [number, number, number] {
  const base = random.int(105, 185);
  return [base + random.int(-25, 25), base + random.int(-25, 25), base + random.int(-25, 25)];
}

function paintBackground(data: Buffer, width: number, height: number, kind: SyntheticBackground, random: Random): void {
  if (kind !== 'plain' && kind !== 'gradient' && kind !== 'noise') throw new RangeError('background must be plain, gradient or noise');
  const from = backgroundTone(random);
  if (kind === 'plain') {
    for (let i = 0; i < data.length; i += 3) data.set(from, i);
    return;
  }
  const to = backgroundTone(random);
  const angle = random.uniform(0, 2 * Math.PI);
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  // Project each pixel on the gradient direction and scale the projections of the four corners to 0..1.
  const corners = [0, width * dx, height * dy, width * dx + height * dy];
  const low = Math.min(...corners);
  const span = Math.max(...corners) - low || 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x * dx + y * dy - low) / span;
      const i = (y * width + x) * 3;
      data[i] = from[0] + (to[0] - from[0]) * t;
      data[i + 1] = from[1] + (to[1] - from[1]) * t;
      data[i + 2] = from[2] + (to[2] - from[2]) * t;
    }
  }
}

function addNoise(data: Buffer, random: Random): void {
  for (let i = 0; i < data.length; i += 3) {
    const delta = Math.round((random.next() - 0.5) * 2 * NOISE_AMPLITUDE);
    data[i] = clampByte(data[i] + delta);
    data[i + 1] = clampByte(data[i + 1] + delta);
    data[i + 2] = clampByte(data[i + 2] + delta);
  }
}

function clampByte(value: number): number {
  return value < 0 ? 0 : value > 255 ? 255 : value;
}
