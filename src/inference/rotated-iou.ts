import { polygonArea, rotatedCorners, signedPolygonArea, type Point, type RotatedBox } from '../imaging/geometry.js';

/**
 * IoU of two rotated boxes (CVAT convention: the box before rotation, turned clockwise about its centre): the
 * intersection of the two convex quadrilaterals by Sutherland–Hodgman clipping. A local copy until the shape
 * metrics module (issue 25, imaging/shape-metrics.ts) lands; then this should use its rotated IoU.
 */
export function rotatedIou(a: RotatedBox, b: RotatedBox): number {
  const areaA = a.width * a.height;
  const areaB = b.width * b.height;
  if (!(areaA > 0) || !(areaB > 0)) return 0;
  const inter = polygonArea(clipConvex(rotatedCorners(a), rotatedCorners(b)));
  return inter > 0 ? inter / (areaA + areaB - inter) : 0;
}

/** `subject` clipped by the convex `clip` polygon (both listed in the same winding). */
function clipConvex(subject: Point[], clip: Point[]): Point[] {
  let output = subject;
  const winding = Math.sign(signedPolygonArea(clip)) || 1;
  for (let i = 0; i < clip.length && output.length > 0; i++) {
    const [ax, ay] = clip[i];
    const [bx, by] = clip[(i + 1) % clip.length];
    const side = ([x, y]: Point) => winding * ((bx - ax) * (y - ay) - (by - ay) * (x - ax));
    const input = output;
    output = [];
    for (let j = 0; j < input.length; j++) {
      const p = input[j];
      const q = input[(j + 1) % input.length];
      const sp = side(p);
      const sq = side(q);
      if (sp >= 0) output.push(p);
      if ((sp >= 0) !== (sq >= 0)) {
        const t = sp / (sp - sq);
        output.push([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])]);
      }
    }
  }
  return output;
}
