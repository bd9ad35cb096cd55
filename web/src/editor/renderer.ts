import type { Annotation, BboxGeometry, EllipseGeometry, KeypointsGeometry, PathGeometry, PolygonGeometry, Skeleton } from '../types.js';
import { BOX_ROTATE_HANDLE, ELLIPSE_HANDLES, handlePoints, polygonParts, rotatedCorners, shifted, type Point } from './geometry.js';
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
  /** The class's keypoint skeleton (its edges are drawn between a skeleton's points). */
  skeletonOf(classId: number): Skeleton | null;
  /**
   * Written by the last draw: how many classes' shapes were stroked solid and dashed (interpolated track shapes), and
   * how many suggestions (not yet accepted) were drawn apart, dotted and faint.
   */
  drawn?: { solid: number; dashed: number; suggested: number };
}

/** What outlines are traced into: a canvas Path2D here, an SVG path's `d` in the review overlay (svg-path.ts). */
export interface PathSink {
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
  rect(x: number, y: number, w: number, h: number): void;
  /** A whole ellipse (start 0, end 2π), begun at the current point (its end of the x radius). */
  ellipse(x: number, y: number, rx: number, ry: number, rotation: number, startAngle: number, endAngle: number): void;
}

/** Per class, what one frame strokes and fills: a few paths per class, whatever the number of shapes. */
export interface ClassPaths<P extends PathSink = Path2D> {
  stroke: P;
  /** Polygon regions, filled even-odd so holes stay open. */
  fill: P | null;
  /** Points and visible keypoints: filled squares. */
  dots: P | null;
  /** Occluded keypoints (v = 1): hollow squares. */
  hollow: P | null;
  newPath(): P;
}

/** Empty paths for one class (or one shape). */
export function classPaths<P extends PathSink>(newPath: () => P): ClassPaths<P> {
  return { stroke: newPath(), fill: null, dots: null, hollow: null, newPath };
}

const canvasPaths = () => classPaths(() => new Path2D());

const RAD = Math.PI / 180;

/** A skeleton smaller than this on screen (both sides, pixels) is drawn as its edges only: its dots would be a blot. */
export const SKELETON_DOTS_PX = 24;

/** Adds one shape's outline (and fill, dots) to its class's paths; `small`: the shape is tiny on screen. */
export function traceShape<P extends PathSink>(p: ClassPaths<P>, ann: Annotation, s: number, skeleton: Skeleton | null, small = false): void {
  const path = p.stroke;
  const g = ann.geometry;
  switch (ann.annotation_type) {
    case 'bbox': {
      const b = g as BboxGeometry;
      if (!b.rotation) path.rect(b.x, b.y, b.width, b.height);
      else {
        const c = rotatedCorners(b);
        path.moveTo(c[0][0], c[0][1]);
        for (let i = 1; i < 4; i++) path.lineTo(c[i][0], c[i][1]);
        path.closePath();
      }
      return;
    }
    case 'polygon': {
      const poly = g as PolygonGeometry;
      const fill = (p.fill ??= p.newPath());
      for (const ring of [...polygonParts(poly), ...(poly.holes ?? [])]) {
        if (ring.length === 0) continue;
        for (const target of [path, fill]) {
          target.moveTo(ring[0][0], ring[0][1]);
          for (let i = 1; i < ring.length; i++) target.lineTo(ring[i][0], ring[i][1]);
          target.closePath();
        }
      }
      return;
    }
    case 'polyline': {
      const pts = (g as PathGeometry).points;
      path.moveTo(pts[0][0], pts[0][1]);
      for (let i = 1; i < pts.length; i++) path.lineTo(pts[i][0], pts[i][1]);
      return;
    }
    case 'points': {
      const r = 3 / s, dots = (p.dots ??= p.newPath());
      for (const [x, y] of (g as PathGeometry).points) dots.rect(x - r, y - r, r * 2, r * 2);
      return;
    }
    case 'ellipse': {
      const e = g as EllipseGeometry;
      const rot = e.rotation * RAD;
      path.moveTo(e.cx + e.rx * Math.cos(rot), e.cy + e.rx * Math.sin(rot));
      path.ellipse(e.cx, e.cy, e.rx, e.ry, rot, 0, Math.PI * 2);
      return;
    }
    case 'keypoints': {
      const pts = (g as KeypointsGeometry).points;
      for (const [a, b] of skeleton?.edges ?? []) {
        const pa = pts[a], pb = pts[b];
        if (!pa || !pb || pa[2] === 0 || pb[2] === 0) continue;
        path.moveTo(pa[0], pa[1]);
        path.lineTo(pb[0], pb[1]);
      }
      if (small && skeleton?.edges?.length) return;
      const r = 3 / s;
      for (const [x, y, v] of pts) {
        if (v === 2) (p.dots ??= p.newPath()).rect(x - r, y - r, r * 2, r * 2);
        else if (v === 1) (p.hollow ??= p.newPath()).rect(x - r, y - r, r * 2, r * 2);
      }
      return;
    }
  }
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
  const paths = new Map<number, ClassPaths>();
  // A track's shapes between keyframes are stroked dashed: they are computed, not drawn by anyone.
  const dashed = new Map<number, ClassPaths>();
  // A model's suggestions, not accepted yet, are stroked dotted and faint and never filled: they read as proposals.
  const suggested = new Map<number, ClassPaths>();
  let suggestions = 0;
  for (const key of visible) {
    if (scene.hidden.has(key)) continue;
    const shape = scene.shapes.get(key)!;
    let ann = shape.ann;
    const proposal = ann.status === 'suggested';
    if (proposal && ann.annotation_type !== 'classification') suggestions++;
    if (ann.annotation_type === 'mask') {
      const c = scene.maskCanvasOf(shape);
      ctx.globalAlpha = proposal ? 0.3 : 0.55;
      if (c && scene.maskEdit?.key !== key) ctx.drawImage(c, shape.bounds.x, shape.bounds.y);
      continue;
    }
    if (ann.annotation_type === 'classification') continue;
    const into = proposal ? suggested : ann.interpolated ? dashed : paths;
    let p = into.get(ann.class_id);
    if (!p) into.set(ann.class_id, (p = canvasPaths()));
    if (moving?.key === key) ann = { ...ann, geometry: shifted(ann, moving.dx, moving.dy) };
    const keypoints = ann.annotation_type === 'keypoints';
    const small = keypoints && shape.bounds.width * s < SKELETON_DOTS_PX && shape.bounds.height * s < SKELETON_DOTS_PX;
    traceShape(p, ann, s, keypoints ? scene.skeletonOf(ann.class_id) : null, small);
  }
  if (scene.maskEdit) ctx.drawImage(scene.maskEdit.canvas, 0, 0);
  // Polygons are filled, semi-transparent, so a segmentation reads as regions, not outlines.
  ctx.globalAlpha = 0.25;
  for (const [classId, p] of [...paths, ...dashed]) {
    if (!p.fill) continue;
    ctx.fillStyle = scene.colorOf(classId);
    ctx.fill(p.fill, 'evenodd');
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 1.5 / s;
  for (const [set, dash] of [[paths, []], [dashed, [6 / s, 4 / s]], [suggested, [2 / s, 3 / s]]] as const) {
    ctx.setLineDash(dash);
    ctx.globalAlpha = set === suggested ? 0.7 : 1;
    for (const [classId, p] of set) {
      const color = scene.colorOf(classId);
      ctx.strokeStyle = color;
      ctx.stroke(p.stroke);
      if (p.dots) {
        ctx.fillStyle = color;
        ctx.fill(p.dots);
      }
      if (p.hollow) ctx.stroke(p.hollow);
    }
  }
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
  scene.drawn = { solid: paths.size, dashed: dashed.size, suggested: suggestions };
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
    const track = ann.track_id != null ? ` #${ann.track_id}${ann.interpolated ? '' : ' ◆'}` : '';
    const text = `${scene.className(ann.class_id)}${track}${conf}${ann.status === 'suggested' ? ' ?' : ''}`;
    const x = shape.bounds.x, y = Math.max(size, shape.bounds.y);
    const w = ctx.measureText(text).width + 4 / s;
    ctx.fillStyle = 'rgba(0,0,0,0.6)';
    ctx.fillRect(x, y - size - 2 / s, w, size + 2 / s);
    ctx.fillStyle = scene.colorOf(ann.class_id);
    ctx.fillText(text, x + 2 / s, y);
  }
}

/**
 * The selected shape: a tinted fill, a dashed outline and its handles; a rotation handle (a circle on a stem) on boxes
 * and ellipses; a skeleton's point names (the active point's in bold, with its visibility).
 */
export function paintSelection(ctx: CanvasRenderingContext2D, s: number, sel: Shape, color: string, moving: Moving | null, opts: { skeleton?: Skeleton | null; activePoint?: number | null } = {}): void {
  if (sel.ann.annotation_type === 'classification') return;
  const dx = moving ? moving.dx : 0, dy = moving ? moving.dy : 0;
  const ann = dx || dy ? { ...sel.ann, geometry: shifted(sel.ann, dx, dy) } : sel.ann;
  const b = { ...sel.bounds, x: sel.bounds.x + dx, y: sel.bounds.y + dy };
  ctx.fillStyle = color;
  ctx.globalAlpha = 0.2;
  const type = ann.annotation_type;
  if (type === 'polygon' || type === 'ellipse' || (type === 'bbox' && (ann.geometry as BboxGeometry).rotation)) {
    const p = canvasPaths();
    traceShape(p, ann, s, null);
    if (type === 'polygon') ctx.fill(p.fill!, 'evenodd');
    else ctx.fill(p.stroke);
  } else if (type === 'bbox' || type === 'mask') ctx.fillRect(b.x, b.y, b.width, b.height);
  ctx.globalAlpha = 1;
  ctx.setLineDash([4 / s, 3 / s]);
  ctx.strokeStyle = '#ffffff';
  ctx.lineWidth = 1 / s;
  ctx.strokeRect(b.x, b.y, b.width, b.height);
  ctx.setLineDash([]);
  const r = HANDLE_PX / s;
  const handles = handlePoints(ann, b, s);
  const rotate = type === 'bbox' ? BOX_ROTATE_HANDLE : type === 'ellipse' ? ELLIPSE_HANDLES.rotate : -1;
  if (rotate >= 0) {
    // The stem from the shape's top to its rotation handle.
    const [hx, hy] = handles[rotate];
    const from = type === 'bbox' ? handles[1] : ([(ann.geometry as EllipseGeometry).cx, (ann.geometry as EllipseGeometry).cy] as Point);
    ctx.beginPath();
    ctx.moveTo(from[0], from[1]);
    ctx.lineTo(hx, hy);
    ctx.strokeStyle = '#ffffff';
    ctx.stroke();
  }
  ctx.fillStyle = '#ffffff';
  ctx.strokeStyle = '#000000';
  handles.forEach(([x, y], i) => {
    if (Number.isNaN(x)) return;
    if (i === rotate) {
      ctx.beginPath();
      ctx.arc(x, y, r * 1.2, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
    } else {
      ctx.fillRect(x - r, y - r, r * 2, r * 2);
      ctx.strokeRect(x - r, y - r, r * 2, r * 2);
    }
  });
  if (type === 'keypoints') paintPointNames(ctx, s, ann.geometry as KeypointsGeometry, opts.skeleton ?? null, opts.activePoint ?? null);
}

const VISIBILITY = ['not labelled', 'occluded', 'visible'];

/** Each labelled point's name beside it; the active point's with its visibility. */
export function paintPointNames(ctx: CanvasRenderingContext2D, s: number, g: KeypointsGeometry, skeleton: Skeleton | null, active: number | null): void {
  const size = 11 / s;
  ctx.textBaseline = 'middle';
  g.points.forEach(([x, y, v], i) => {
    if (v === 0 && i !== active) return;
    const name = skeleton?.points[i] ?? `point ${i + 1}`;
    const text = i === active ? `${name} (${VISIBILITY[v]})` : name;
    ctx.font = `${i === active ? 'bold ' : ''}${size}px sans-serif`;
    const w = ctx.measureText(text).width;
    ctx.fillStyle = 'rgba(0,0,0,0.65)';
    ctx.fillRect(x + 6 / s, y - size / 2 - 1 / s, w + 4 / s, size + 2 / s);
    ctx.fillStyle = '#ffffff';
    ctx.fillText(text, x + 8 / s, y);
  });
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
