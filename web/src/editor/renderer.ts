import type { Annotation } from '../types.js';
import { handlePoints, type Point } from './geometry.js';
import type { Bitmap } from './mask.js';
import type { GridIndex, Rect } from './spatial-index.js';

// The editor's renderer: what a frame draws (the image, the shapes in view, the selection, the minimap) and the cached
// layer that makes panning a blit. State is passed in; nothing here handles input. A tool draws its own draft.

/** Half the side of a selection handle, in screen pixels. */
export const HANDLE_PX = 5;

export interface Shape {
  ann: Annotation;
  bounds: Rect;
  bitmap?: Bitmap;
  maskCanvas?: HTMLCanvasElement;
}

/** A shape being dragged by the select tool: drawn offset by (dx, dy) until it is dropped. */
export interface Moving {
  key: number;
  dx: number;
  dy: number;
}

export interface MaskEdit {
  key: number | null;
  bitmap: Bitmap;
  canvas: HTMLCanvasElement;
}

/** What a scene is drawn from. */
export interface Scene {
  image: { width: number; height: number; source: CanvasImageSource; preview: (CanvasImageSource & { width: number }) | null };
  index: GridIndex;
  shapes: Map<number, Shape>;
  /** Scratch array for the index query. */
  visible: number[];
  maskEdit: MaskEdit | null;
  colorOf(classId: number): string;
  maskCanvasOf(shape: Shape): HTMLCanvasElement | undefined;
  /** Shapes the annotator hid in the objects sidebar. */
  hidden: ReadonlySet<number>;
  className(classId: number): string;
}

/**
 * The image and the unselected shapes rendered once into a layer a little larger than the view: panning then only
 * blits it, and zooming stretches it until the wheel rests, when it is rendered again sharp.
 */
export class LayerCache {
  private layer: { canvas: HTMLCanvasElement; rect: Rect; scale: number; version: number } | null = null;
  private sharpenTimer = 0;

  constructor(private readonly requestPaint: () => void) {}

  reset(): void {
    this.layer = null;
  }

  layerFor(
    img: { width: number; height: number },
    view: Rect,
    s: number,
    dpr: number,
    version: number,
    draw: (ctx: CanvasRenderingContext2D, rect: Rect) => void,
  ): { canvas: HTMLCanvasElement; rect: Rect; scale: number; version: number } {
    const visible: Rect = {
      x: Math.max(0, view.x),
      y: Math.max(0, view.y),
      width: Math.min(img.width, view.x + view.width) - Math.max(0, view.x),
      height: Math.min(img.height, view.y + view.height) - Math.max(0, view.y),
    };
    const l = this.layer;
    const covers =
      l !== null &&
      l.version === version &&
      visible.x >= l.rect.x - 0.5 &&
      visible.y >= l.rect.y - 0.5 &&
      visible.x + visible.width <= l.rect.x + l.rect.width + 0.5 &&
      visible.y + visible.height <= l.rect.y + l.rect.height + 0.5;
    if (covers && l.scale === s) return l;
    const zooming = l !== null && l.version === version && l.scale !== s;
    if (covers) {
      this.sharpenLater();
      return l;
    }
    // Half a view of margin on every side, inside the image, and never more than 4096 pixels a side. In the middle
    // of a zoom the margin is a whole view, so the next frames of a zoom-out still find the layer covering them and
    // only stretch it; the sharp render follows when the wheel rests.
    if (zooming) this.sharpenLater();
    const k = zooming ? 2 : 1;
    const marginX = Math.max(0, Math.min(view.width * k, 4096 / (s * dpr) - view.width) / 2);
    const marginY = Math.max(0, Math.min(view.height * k, 4096 / (s * dpr) - view.height) / 2);
    const x0 = Math.max(0, view.x - marginX), y0 = Math.max(0, view.y - marginY);
    const x1 = Math.min(img.width, view.x + view.width + marginX);
    const y1 = Math.min(img.height, view.y + view.height + marginY);
    const rect: Rect = { x: x0, y: y0, width: Math.max(1 / s, x1 - x0), height: Math.max(1 / s, y1 - y0) };
    const canvas = l?.canvas ?? document.createElement('canvas');
    canvas.width = Math.max(1, Math.ceil(rect.width * s * dpr));
    canvas.height = Math.max(1, Math.ceil(rect.height * s * dpr));
    const ctx = canvas.getContext('2d')!;
    ctx.setTransform(s * dpr, 0, 0, s * dpr, -rect.x * s * dpr, -rect.y * s * dpr);
    draw(ctx, rect);
    this.layer = { canvas, rect, scale: s, version };
    return this.layer;
  }

  private sharpenLater(): void {
    clearTimeout(this.sharpenTimer);
    this.sharpenTimer = window.setTimeout(() => {
      this.layer = null;
      this.requestPaint();
    }, 150);
  }
}

/** The image and the shapes inside `view`; shapes of one class go into one path, stroked once. */
export function drawScene(ctx: CanvasRenderingContext2D, view: Rect, s: number, scene: Scene, moving: Moving | null): void {
  const img = scene.image;
  ctx.imageSmoothingEnabled = s < 2;
  if (img.preview && img.preview.width >= img.width * s) ctx.drawImage(img.preview, 0, 0, img.width, img.height);
  else {
    // Only the part in view: a 48-megapixel source is never resampled whole for a zoomed-in frame.
    const x = Math.max(0, Math.floor(view.x)), y = Math.max(0, Math.floor(view.y));
    const w = Math.min(img.width, Math.ceil(view.x + view.width)) - x, h = Math.min(img.height, Math.ceil(view.y + view.height)) - y;
    if (w > 0 && h > 0) ctx.drawImage(img.source, x, y, w, h, x, y, w, h);
  }

  const visible = scene.visible;
  visible.length = 0;
  scene.index.query(view, visible);
  const paths = new Map<number, Path2D>();
  const polygonFills = new Map<number, Path2D>();
  ctx.globalAlpha = 0.55;
  for (const key of visible) {
    if (scene.hidden.has(key)) continue;
    const shape = scene.shapes.get(key)!;
    const ann = shape.ann;
    if (ann.annotation_type === 'mask') {
      const c = scene.maskCanvasOf(shape);
      if (c && scene.maskEdit?.key !== key) ctx.drawImage(c, shape.bounds.x, shape.bounds.y);
      continue;
    }
    let path = paths.get(ann.class_id);
    if (!path) paths.set(ann.class_id, (path = new Path2D()));
    const dx = moving?.key === key ? moving.dx : 0, dy = moving?.key === key ? moving.dy : 0;
    if (ann.annotation_type === 'bbox') {
      const b = shape.bounds;
      path.rect(b.x + dx, b.y + dy, b.width, b.height);
    } else {
      const pts = (ann.geometry as { points: Point[] }).points;
      path.moveTo(pts[0][0] + dx, pts[0][1] + dy);
      for (let i = 1; i < pts.length; i++) path.lineTo(pts[i][0] + dx, pts[i][1] + dy);
      path.closePath();
      let fill = polygonFills.get(ann.class_id);
      if (!fill) polygonFills.set(ann.class_id, (fill = new Path2D()));
      fill.moveTo(pts[0][0] + dx, pts[0][1] + dy);
      for (let i = 1; i < pts.length; i++) fill.lineTo(pts[i][0] + dx, pts[i][1] + dy);
      fill.closePath();
    }
  }
  if (scene.maskEdit) ctx.drawImage(scene.maskEdit.canvas, 0, 0);
  // Polygons are filled, semi-transparent, so a segmentation reads as regions, not outlines.
  ctx.globalAlpha = 0.25;
  for (const [classId, path] of polygonFills) {
    ctx.fillStyle = scene.colorOf(classId);
    ctx.fill(path);
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 1.5 / s;
  for (const [classId, path] of paths) {
    ctx.strokeStyle = scene.colorOf(classId);
    ctx.stroke(path);
  }
  drawLabels(ctx, s, scene);
}

/**
 * The class name (with the confidence of model output) on each visible shape large enough on screen to carry it,
 * in the class's colour on a dark backing; suggestions not yet accepted are marked with "?".
 */
function drawLabels(ctx: CanvasRenderingContext2D, s: number, scene: Scene): void {
  const size = 12 / s;
  ctx.font = `${size}px sans-serif`;
  ctx.textBaseline = 'bottom';
  for (const key of scene.visible) {
    const shape = scene.shapes.get(key)!;
    const ann = shape.ann;
    if (scene.hidden.has(key) || ann.annotation_type === 'classification' || shape.bounds.width * s < 24) continue;
    const conf = ann.confidence != null && ann.source !== 'manual' ? ` ${Math.round(ann.confidence * 100)}%` : '';
    const text = `${scene.className(ann.class_id)}${conf}${ann.status === 'suggested' ? ' ?' : ''}`;
    const x = shape.bounds.x, y = Math.max(size, shape.bounds.y);
    const w = ctx.measureText(text).width + 4 / s;
    ctx.fillStyle = 'rgba(0,0,0,0.6)';
    ctx.fillRect(x, y - size - 2 / s, w, size + 2 / s);
    ctx.fillStyle = scene.colorOf(ann.class_id);
    ctx.fillText(text, x + 2 / s, y);
  }
}

/** The selected shape: a tinted fill, a dashed outline and its handles. */
export function paintSelection(ctx: CanvasRenderingContext2D, s: number, sel: Shape, color: string, moving: Moving | null): void {
  if (sel.ann.annotation_type === 'classification') return;
  const dx = moving ? moving.dx : 0, dy = moving ? moving.dy : 0;
  const b = sel.bounds;
  ctx.fillStyle = color;
  ctx.globalAlpha = 0.2;
  if (sel.ann.annotation_type === 'polygon') {
    const pts = (sel.ann.geometry as { points: Point[] }).points;
    ctx.beginPath();
    pts.forEach(([x, y], i) => (i ? ctx.lineTo(x + dx, y + dy) : ctx.moveTo(x + dx, y + dy)));
    ctx.closePath();
    ctx.fill();
  } else ctx.fillRect(b.x + dx, b.y + dy, b.width, b.height);
  ctx.globalAlpha = 1;
  ctx.setLineDash([4 / s, 3 / s]);
  ctx.strokeStyle = '#ffffff';
  ctx.lineWidth = 1 / s;
  ctx.strokeRect(b.x + dx, b.y + dy, b.width, b.height);
  ctx.setLineDash([]);
  const r = HANDLE_PX / s;
  ctx.fillStyle = '#ffffff';
  ctx.strokeStyle = '#000000';
  for (const [x, y] of handlePoints(sel.ann, sel.bounds)) {
    ctx.fillRect(x + dx - r, y + dy - r, r * 2, r * 2);
    ctx.strokeRect(x + dx - r, y + dy - r, r * 2, r * 2);
  }
}

/** The minimap's picture of the whole image (at most 180 px a side); returns the base to draw each frame on. */
export function drawMinimapBase(minimap: HTMLCanvasElement, image: { width: number; height: number; source: CanvasImageSource; preview: CanvasImageSource | null }): HTMLCanvasElement {
  const k = 180 / Math.max(image.width, image.height);
  minimap.width = Math.max(1, Math.round(image.width * k));
  minimap.height = Math.max(1, Math.round(image.height * k));
  const base = document.createElement('canvas');
  base.width = minimap.width;
  base.height = minimap.height;
  base.getContext('2d')!.drawImage(image.preview ?? image.source, 0, 0, minimap.width, minimap.height);
  return base;
}

/** The minimap with the part of the image in view outlined. */
export function paintMinimapView(minimap: HTMLCanvasElement, base: HTMLCanvasElement, imageWidth: number, view: Rect): void {
  const ctx = minimap.getContext('2d')!;
  ctx.drawImage(base, 0, 0);
  const k = minimap.width / imageWidth;
  ctx.strokeStyle = '#ffcc00';
  ctx.lineWidth = 2;
  ctx.strokeRect(view.x * k, view.y * k, view.width * k, view.height * k);
}
