/**
 * A track's shape on any frame, from its keyframes (sorted by frame, unique), as CVAT does it: linear between two
 * keyframes of the same type; held from the earlier keyframe where the two cannot be matched point for point (other
 * types, other point counts, masks, multi-part polygons) and after the last keyframe; hidden from an `outside`
 * keyframe until the next keyframe that is not outside. Pure: geometry in, geometry out.
 */
import { normalizeDegrees } from '../../imaging/geometry.js';

export interface Keyframe {
  frame: number;
  annotation_type: string;
  geometry: Record<string, unknown>;
  outside: boolean;
  occluded: boolean;
}

export interface FrameShape {
  annotation_type: string;
  geometry: Record<string, unknown>;
  occluded: boolean;
  /** False on a keyframe, true on a frame computed from keyframes. */
  interpolated: boolean;
}

const lerp = (a: number, b: number, t: number) => a + (b - a) * t;

/** From angle a to angle b (degrees) the short way round, in [0, 360): 350° → 10° passes 0°, not 180°. */
export function lerpDegrees(a: number, b: number, t: number): number {
  const delta = ((((b - a) % 360) + 540) % 360) - 180;
  return normalizeDegrees(a + delta * t);
}

type Geometry = Record<string, unknown>;
type Points = number[][];

const numbers = (a: Geometry, b: Geometry, keys: readonly string[], t: number): Geometry =>
  Object.fromEntries(keys.map((k) => [k, lerp(a[k] as number, b[k] as number, t)]));

const angle = (g: Geometry) => (typeof g.rotation === 'number' ? g.rotation : 0);

/** Points matched by index; null when the counts differ. Keypoints keep the earlier keyframe's visibility, and move only when labelled in both. */
function lerpPoints(a: unknown, b: unknown, t: number): Points | null {
  const pa = a as Points;
  const pb = b as Points;
  if (!Array.isArray(pa) || !Array.isArray(pb) || pa.length !== pb.length) return null;
  return pa.map((p, i) => {
    const q = pb[i];
    if (p.length === 3 && (p[2] === 0 || q[2] === 0)) return p;
    return p.length === 3 ? [lerp(p[0], q[0], t), lerp(p[1], q[1], t), p[2]] : [lerp(p[0], q[0], t), lerp(p[1], q[1], t)];
  });
}

/** The geometry a fraction t of the way from a to b (both of `type`), or null when they cannot be matched. */
export function interpolateGeometry(type: string, a: Geometry, b: Geometry, t: number): Geometry | null {
  switch (type) {
    case 'bbox': {
      const box = numbers(a, b, ['x', 'y', 'width', 'height'], t);
      const rotation = a.rotation === undefined && b.rotation === undefined ? 0 : lerpDegrees(angle(a), angle(b), t);
      return rotation === 0 ? box : { ...box, rotation };
    }
    case 'ellipse':
      return { ...numbers(a, b, ['cx', 'cy', 'rx', 'ry'], t), rotation: lerpDegrees(angle(a), angle(b), t) };
    case 'polygon':
      if (a.parts !== undefined || a.holes !== undefined || b.parts !== undefined || b.holes !== undefined) return null;
    // falls through: a one-part polygon moves like a polyline
    case 'polyline':
    case 'points': {
      const points = lerpPoints(a.points, b.points, t);
      return points && { points };
    }
    case 'keypoints': {
      const points = lerpPoints(a.points, b.points, t);
      if (!points) return null;
      const box = a.bbox && b.bbox ? numbers(a.bbox as Geometry, b.bbox as Geometry, ['x', 'y', 'width', 'height'], t) : undefined;
      return box ? { points, bbox: box } : { points };
    }
    default:
      return null;
  }
}

/** The index of the last keyframe at or before `frame`, or -1 (binary search: tracks may have thousands). */
function lastAtOrBefore(keyframes: readonly Keyframe[], frame: number): number {
  let lo = 0;
  let hi = keyframes.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (keyframes[mid].frame <= frame) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The track's shape on `frame`, or null where it is not visible (before its first keyframe, or outside). */
export function shapeAt(keyframes: readonly Keyframe[], frame: number): FrameShape | null {
  const i = lastAtOrBefore(keyframes, frame);
  if (i < 0) return null;
  const prev = keyframes[i];
  if (prev.outside) return null;
  const held = { annotation_type: prev.annotation_type, geometry: prev.geometry, occluded: prev.occluded };
  if (prev.frame === frame) return { ...held, interpolated: false };
  const next = keyframes[i + 1];
  if (!next || next.outside || next.annotation_type !== prev.annotation_type) return { ...held, interpolated: true };
  const t = (frame - prev.frame) / (next.frame - prev.frame);
  const geometry = interpolateGeometry(prev.annotation_type, prev.geometry, next.geometry, t);
  return { ...held, geometry: geometry ?? prev.geometry, interpolated: true };
}
