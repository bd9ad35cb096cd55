/**
 * The profile's sections on what annotations carry besides their class (issue 25): attribute values per class and
 * keypoint visibility per skeleton point, summed over the image parts' tallies (shape-tallies.repository.ts).
 */
import type { AttributeSpec, AttributeType, Skeleton } from '../../imaging/class-specs.js';
import type { ImagesPart } from './profile.repository.js';
import type { AttributeProfile, KeypointProfile } from './profile.schemas.js';

/** A class as the project part keeps it: skeleton and attribute specs as the JSON text the row stores. */
export interface ProfiledClass {
  id: number;
  name: string;
  skeleton: string | null;
  attributes: string | null;
}

/** Most frequent values listed of a text attribute. */
const TOP_VALUES = 10;

/** The type of values no spec (any more) declares: what they are. */
function typeOfValues(values: unknown[]): AttributeType {
  if (values.every((v) => typeof v === 'boolean')) return 'checkbox';
  if (values.every((v) => typeof v === 'number')) return 'number';
  return 'text';
}

/**
 * Per class and attribute: checkbox and select values with their annotations; numbers summarised (range, mean,
 * distinct values); text by distinct values and the most frequent. `distinct_capped`: a part held more values than it
 * keeps (VALUES_PER_PART), so `distinct` is a lower bound and the mean is over the values kept.
 */
export function attributeProfile(classes: ProfiledClass[], parts: ImagesPart[]): AttributeProfile[] {
  const byKey = new Map<string, { classId: number; name: string; counts: Map<string, number>; rest: number }>();
  for (const part of parts) {
    for (const [classId, name, value, n] of part.attributes) {
      const key = `${classId}\u0000${name}`;
      const entry = byKey.get(key) ?? byKey.set(key, { classId, name, counts: new Map(), rest: 0 }).get(key)!;
      if (value === null) entry.rest += n;
      else entry.counts.set(value, (entry.counts.get(value) ?? 0) + n);
    }
  }
  const classOf = new Map(classes.map((c) => [c.id, c]));
  const order = (e: { classId: number; name: string }) => {
    const specs: AttributeSpec[] = JSON.parse(classOf.get(e.classId)?.attributes ?? '[]');
    const at = specs.findIndex((s) => s.name === e.name);
    return { spec: specs[at], at: at < 0 ? specs.length : at };
  };
  return [...byKey.values()]
    .filter((e) => classOf.has(e.classId))
    .sort((a, b) => a.classId - b.classId || order(a).at - order(b).at || a.name.localeCompare(b.name))
    .map((e) => {
      const values = [...e.counts].map(([json, n]) => ({ value: JSON.parse(json) as unknown, n }));
      const type = order(e).spec?.type ?? typeOfValues(values.map((v) => v.value));
      const kept = values.reduce((sum, v) => sum + v.n, 0);
      const out: AttributeProfile = {
        class_id: e.classId,
        class: classOf.get(e.classId)!.name,
        name: e.name,
        type,
        annotations: kept + e.rest,
        distinct: values.length,
        distinct_capped: e.rest > 0,
      };
      if (type === 'checkbox' || type === 'select') {
        out.values = Object.fromEntries(values.sort((a, b) => b.n - a.n).map((v) => [String(v.value), v.n]));
      } else if (type === 'number') {
        const numbers = values.filter((v) => typeof v.value === 'number') as { value: number; n: number }[];
        if (numbers.length > 0) {
          out.min = Math.min(...numbers.map((v) => v.value));
          out.max = Math.max(...numbers.map((v) => v.value));
          out.mean = numbers.reduce((sum, v) => sum + v.value * v.n, 0) / numbers.reduce((sum, v) => sum + v.n, 0);
        }
      } else {
        out.top_values = values.sort((a, b) => b.n - a.n).slice(0, TOP_VALUES).map((v) => ({ value: String(v.value), annotations: v.n }));
      }
      return out;
    });
}

/** Per class with keypoint instances: how often each skeleton point is not labelled, occluded or visible. */
export function keypointProfile(classes: ProfiledClass[], parts: ImagesPart[]): KeypointProfile[] {
  const byClass = new Map<number, number[][]>();
  for (const part of parts) {
    for (const [classId, point, v, n] of part.keypoints) {
      const points = byClass.get(classId) ?? byClass.set(classId, []).get(classId)!;
      while (points.length <= point) points.push([0, 0, 0]);
      if (v >= 0 && v <= 2) points[point][v] += n;
    }
  }
  return classes
    .filter((c) => byClass.has(c.id))
    .map((c) => {
      const names = c.skeleton === null ? [] : (JSON.parse(c.skeleton) as Skeleton).points;
      const points = byClass.get(c.id)!;
      return {
        class_id: c.id,
        class: c.name,
        instances: Math.max(0, ...points.map((p) => p[0] + p[1] + p[2])),
        points: points.map(([notLabelled, occluded, visible], i) => ({ point: names[i] ?? `#${i}`, not_labelled: notLabelled, occluded, visible })),
      };
    });
}
