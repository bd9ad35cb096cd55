/** How far two coordinates (pixels, or degrees for angles) may be apart for two annotations to be the same. */
export const MATCH_TOLERANCE = 0.5;

/** An annotation as the conflict check compares it: its class, type and stored geometry (JSON text). */
export interface ComparableAnnotation {
  id: number;
  image_id: number;
  class_id: number;
  annotation_type: string;
  geometry: string;
}

/**
 * Whether two stored geometries are the same shape: the same structure, every number within `MATCH_TOLERANCE` (a
 * re-exported dataset rounds coordinates), everything else equal. A rotation of 359.8° and one of 0.1° are the same.
 */
export function sameGeometry(a: unknown, b: unknown, key = ''): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    const d = Math.abs(a - b);
    return d <= MATCH_TOLERANCE || (key === 'rotation' && Math.abs(d - 360) <= MATCH_TOLERANCE);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameGeometry(v, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).filter((k) => !isAbsent(k, (a as Record<string, unknown>)[k]));
    const kb = Object.keys(b).filter((k) => !isAbsent(k, (b as Record<string, unknown>)[k]));
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in b && sameGeometry((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], k));
  }
  return a === b;
}

/** A member whose absence means the same as its value (a box without `rotation` is a box at 0°). */
function isAbsent(key: string, value: unknown): boolean {
  return value === undefined || value === null || (key === 'rotation' && value === 0);
}

/**
 * The new annotations of an image that match one of its existing annotations (same class, type and geometry), each
 * existing one matched at most once (a dataset that holds a box twice, imported onto an image holding it once, adds
 * the second).
 */
export function matchedAnnotations(incoming: ComparableAnnotation[], existing: ComparableAnnotation[]): Set<number> {
  const matched = new Set<number>();
  const free = existing.map((e) => ({ ...e, parsed: JSON.parse(e.geometry) as unknown }));
  for (const a of incoming) {
    const geometry = JSON.parse(a.geometry) as unknown;
    const at = free.findIndex((e) => e.class_id === a.class_id && e.annotation_type === a.annotation_type && sameGeometry(geometry, e.parsed));
    if (at < 0) continue;
    matched.add(a.id);
    free.splice(at, 1);
  }
  return matched;
}
