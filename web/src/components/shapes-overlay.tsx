import { useEffect, useState } from 'react';
import { boundsOf } from '../editor/geometry.js';
import { decodeRle } from '../editor/mask.js';
import { classPaths, traceShape } from '../editor/renderer.js';
import { SvgPath } from '../editor/svg-path.js';
import type { Annotation, MaskGeometry, Rle, Skeleton } from '../types.js';

/** One shape to draw over an image, in image pixels. */
export interface OverlayShape {
  key: string | number;
  type: string;
  geometry: unknown;
  color: string;
  label: string;
  /** Dashed outline: a model prediction (accepted or not). */
  dashed?: boolean;
  /** The class's keypoint skeleton: its edges are drawn between a skeleton's points. */
  skeleton?: Skeleton | null;
}

/**
 * Every shape drawn exactly as stored, as SVG in image pixels over an image kept at its aspect ratio (the frame is as
 * wide as it can be without exceeding the height limit, so nothing is stretched): the outlines are traced by the
 * editor's own traceShape (rotated boxes, ellipses, skeletons with their edges, polylines, points, polygons of several
 * parts with holes), masks pixel for pixel.
 */
export function ShapesOverlay({ src, alt, width, height, shapes, maxHeight = 'calc(100vh - 200px)' }: { src: string; alt: string; width: number; height: number; shapes: OverlayShape[]; maxHeight?: string }) {
  const stroke = Math.max(1.5, Math.max(width, height) / 400);
  const font = Math.max(10, Math.max(width, height) / 50);
  return (
    <div
      className="annotated-frame"
      data-testid="shapes-frame"
      style={{ aspectRatio: `${width} / ${height}`, width: `min(100%, calc(${maxHeight} * ${width / height}))` }}
    >
      <img src={src} alt={alt} />
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" aria-label="Annotations" data-testid="review-annotations">
        {shapes.map((s) => {
          const ann = { annotation_type: s.type, geometry: s.geometry } as Annotation;
          // A classification has no place on the image; a mask's computed box may be missing.
          const at = boundsOf(ann) ?? (s.type === 'mask' ? { x: 0, y: 0 } : null);
          if (!at) return null;
          return (
            <g key={s.key} data-label={s.label}>
              {s.type === 'mask' ? <MaskImage rle={(s.geometry as MaskGeometry).rle} color={s.color} /> : <TracedShape ann={ann} shape={s} stroke={stroke} />}
              <text x={at.x + stroke} y={Math.max(font, at.y - stroke)} fontSize={font} fill={s.color} stroke="#fff" strokeWidth={font / 8} paintOrder="stroke">
                {s.label}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/** One shape as the editor traces it: its outline, its filled regions (even-odd: holes stay open), its points. */
function TracedShape({ ann, shape, stroke }: { ann: Annotation; shape: OverlayShape; stroke: number }) {
  const p = classPaths(() => new SvgPath());
  // Points are squares of 2 × 1.5 strokes a side, as on the editor's canvas at its line width.
  traceShape(p, ann, 2 / stroke, shape.skeleton ?? null);
  const line = { stroke: shape.color, strokeWidth: stroke, strokeDasharray: shape.dashed ? `${stroke * 4} ${stroke * 2}` : undefined };
  const area = ann.annotation_type === 'bbox' || ann.annotation_type === 'ellipse';
  return (
    <>
      {p.fill && <path d={p.fill.d} fill={shape.color} fillOpacity={0.3} fillRule="evenodd" />}
      <path d={p.stroke.d} fill={area ? shape.color : 'none'} fillOpacity={0.08} {...line} data-shape={ann.annotation_type} />
      {p.dots && <path d={p.dots.d} fill={shape.color} />}
      {p.hollow && <path d={p.hollow.d} fill="none" {...line} strokeDasharray={undefined} />}
    </>
  );
}

/** A mask as an image of its exact pixels (decoded from the RLE), coloured and semi-transparent. */
function MaskImage({ rle, color }: { rle: Rle; color: string }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const bitmap = decodeRle(rle);
    const canvas = document.createElement('canvas');
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    const ctx = canvas.getContext('2d')!;
    const pixels = ctx.createImageData(bitmap.width, bitmap.height);
    const [r, g, b] = hexRgb(color);
    for (let i = 0; i < bitmap.data.length; i++) {
      if (!bitmap.data[i]) continue;
      pixels.data[i * 4] = r;
      pixels.data[i * 4 + 1] = g;
      pixels.data[i * 4 + 2] = b;
      pixels.data[i * 4 + 3] = 128;
    }
    ctx.putImageData(pixels, 0, 0);
    setUrl(canvas.toDataURL());
  }, [rle, color]);
  if (!url) return null;
  return <image href={url} x={0} y={0} width={rle.size[1]} height={rle.size[0]} style={{ imageRendering: 'pixelated' }} data-shape="mask" />;
}

function hexRgb(color: string): [number, number, number] {
  const m = /^#?([0-9a-f]{6})$/i.exec(color.trim());
  if (!m) return [255, 0, 255];
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A lineage step in words: "Resized to 640×640 (letterbox)", "Flipped horizontally". */
export function describeStep(step: unknown): string {
  const s = (step ?? {}) as Record<string, unknown> & { op?: string };
  const n = (v: unknown) => (typeof v === 'number' ? Math.round(v * 100) / 100 : String(v));
  switch (s.op) {
    case 'auto_orient':
      return `Turned upright (EXIF orientation ${n(s.orientation)})`;
    case 'strip_orientation':
      return `Removed the EXIF orientation (${n(s.orientation)})`;
    case 'resize':
      return `Resized to ${n(s.width)}×${n(s.height)} (${String(s.mode)}; image scaled to ${n(s.scaled_width)}×${n(s.scaled_height)})`;
    case 'static_crop':
    case 'crop_zoom':
      return `${s.op === 'crop_zoom' ? `Zoomed ${n(s.zoom_percent)}%: cropped` : 'Cropped'} to ${n(s.width)}×${n(s.height)} at (${n(s.left ?? s.x)}, ${n(s.top ?? s.y)})`;
    case 'tile':
      return `Tile row ${n(Number(s.row) + 1)} of ${n(s.rows)}, column ${n(Number(s.column) + 1)} of ${n(s.columns)}`;
    case 'flip':
      return `Flipped ${String(s.axis)}`;
    case 'rotate_90':
      return `Rotated by a quarter turn (${String(s.turn)})`;
    case 'rotate':
      return `Rotated ${n(s.degrees)}°`;
    case 'shear':
      return `Sheared ${n(s.horizontal_degrees)}° horizontally, ${n(s.vertical_degrees)}° vertically`;
    case 'mosaic':
      return `Mosaic of 4 images around (${n(s.center_x)}, ${n(s.center_y)})`;
    case 'grayscale':
      return 'Converted to grayscale';
    case 'contrast':
      return `Contrast: ${String(s.method)}`;
    case 'blur':
      return `Blurred (σ ${n(s.sigma)})`;
    case 'hue':
      return `Hue shifted ${n(s.degrees)}°`;
    case 'saturation':
    case 'brightness':
    case 'exposure':
    case 'contrast_adjust':
      return `${s.op === 'contrast_adjust' ? 'Contrast' : s.op[0].toUpperCase() + s.op.slice(1)} ${Number(s.percent) >= 0 ? '+' : ''}${n(s.percent)}%`;
    case 'noise':
      return `Noise ${n(s.percent)}%`;
    case 'cutout':
      return `Cut out ${(s.rects as unknown[] | undefined)?.length ?? 0} rectangle(s)`;
    case 'classes':
      return `Classes remapped (${Object.keys((s.remap as object) ?? {}).length}) and dropped (${(s.drop as unknown[] | undefined)?.length ?? 0})`;
    default: {
      const { op, ...rest } = s;
      return `${op ?? 'step'} ${Object.entries(rest).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : n(v)}`).join(', ')}`;
    }
  }
}
