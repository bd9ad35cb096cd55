/**
 * What a class may declare about its annotations besides its name: a keypoint skeleton (named points, the edges
 * drawn between them, the left/right pairs a horizontal flip swaps) and attribute specs (CVAT's `<attribute>`,
 * Label Studio's per-region choices). Pure functions: they validate what a client or a dataset sent and return
 * what to store, or throw a ClassSpecError that says where the problem is.
 */
import { MAX_SKELETON_POINTS } from './geometry.js';

export interface Skeleton {
  points: string[];
  edges: [number, number][];
  flip_pairs: [number, number][];
}

export const ATTRIBUTE_TYPES = ['checkbox', 'select', 'number', 'text'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export type AttributeValue = boolean | number | string;

/**
 * One attribute of a class's annotations. `select`: `values` lists the choices. `number`: `values`, when given, is
 * `[min, max]` or `[min, max, step]`. `default` is what an annotation that does not say holds.
 */
export interface AttributeSpec {
  name: string;
  type: AttributeType;
  values?: (string | number)[];
  default?: AttributeValue;
}

/** Most attributes a class may declare, most choices one may list, longest text value. */
export const MAX_ATTRIBUTES = 100;
export const MAX_ATTRIBUTE_VALUES = 1000;
export const MAX_TEXT_ATTRIBUTE = 2000;

export class ClassSpecError extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

const isIndexPair = (pair: unknown, n: number): pair is [number, number] =>
  Array.isArray(pair) && pair.length === 2 && pair.every((i) => Number.isInteger(i) && i >= 0 && i < n) && pair[0] !== pair[1];

/** A skeleton: 1 to MAX_SKELETON_POINTS distinct names; edges and flip pairs index them. */
export function parseSkeleton(raw: unknown): Skeleton {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ClassSpecError([], 'must be an object {points, edges, flip_pairs}');
  const { points, edges = [], flip_pairs = [] } = raw as Record<string, unknown>;
  if (!Array.isArray(points) || points.length === 0) throw new ClassSpecError(['points'], 'must list the skeleton\'s point names, at least one');
  if (points.length > MAX_SKELETON_POINTS) throw new ClassSpecError(['points'], `at most ${MAX_SKELETON_POINTS} points`);
  const names = new Set<string>();
  points.forEach((name, i) => {
    if (typeof name !== 'string' || !name.trim() || name.length > 100) throw new ClassSpecError(['points', i], 'must be a name of 1 to 100 characters');
    if (names.has(name)) throw new ClassSpecError(['points', i], `"${name}" is named twice`);
    names.add(name);
  });
  const pairs = (list: unknown, key: string): [number, number][] => {
    if (!Array.isArray(list)) throw new ClassSpecError([key], 'must be an array of [i, j] point index pairs');
    if (list.length > MAX_SKELETON_POINTS * 4) throw new ClassSpecError([key], 'too many pairs');
    return list.map((pair, i) => {
      if (!isIndexPair(pair, points.length)) throw new ClassSpecError([key, i], `must be [i, j], two different indices below ${points.length}`);
      return [pair[0], pair[1]];
    });
  };
  const flips = pairs(flip_pairs, 'flip_pairs');
  const seen = new Set<number>();
  flips.forEach((pair, i) => {
    for (const index of pair) {
      if (seen.has(index)) throw new ClassSpecError(['flip_pairs', i], `point ${index} is in two flip pairs`);
      seen.add(index);
    }
  });
  return { points: points as string[], edges: pairs(edges, 'edges'), flip_pairs: flips };
}

/** How many points a stored skeleton (JSON text, as a class row holds it) names; null when there is none. */
export function skeletonSize(stored: string | null): number | null {
  return stored === null ? null : (JSON.parse(stored) as Skeleton).points.length;
}

/** The index each point goes to under a horizontal flip (itself when it is in no pair). */
export function flipPermutation(skeleton: Pick<Skeleton, 'flip_pairs'> | null | undefined, n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (const [a, b] of skeleton?.flip_pairs ?? []) {
    if (a < n && b < n) {
      order[a] = b;
      order[b] = a;
    }
  }
  return order;
}

/** A list of attribute specs with distinct names; each default must be a value its spec accepts. */
export function parseAttributeSpecs(raw: unknown): AttributeSpec[] {
  if (!Array.isArray(raw)) throw new ClassSpecError([], 'must be an array of {name, type, values?, default?}');
  if (raw.length > MAX_ATTRIBUTES) throw new ClassSpecError([], `at most ${MAX_ATTRIBUTES} attributes`);
  const names = new Set<string>();
  return raw.map((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ClassSpecError([i], 'must be an object {name, type, values?, default?}');
    const { name, type, values, default: fallback } = item as Record<string, unknown>;
    if (typeof name !== 'string' || !name.trim() || name.length > 100) throw new ClassSpecError([i, 'name'], 'must be a name of 1 to 100 characters');
    if (names.has(name)) throw new ClassSpecError([i, 'name'], `"${name}" is declared twice`);
    names.add(name);
    if (!ATTRIBUTE_TYPES.includes(type as AttributeType)) throw new ClassSpecError([i, 'type'], `must be one of ${ATTRIBUTE_TYPES.join(', ')}`);
    const spec: AttributeSpec = { name, type: type as AttributeType };
    if (type === 'select') {
      if (!Array.isArray(values) || values.length === 0 || values.length > MAX_ATTRIBUTE_VALUES || !values.every((v) => typeof v === 'string' && v.length <= 200)) {
        throw new ClassSpecError([i, 'values'], `a select lists its choices: 1 to ${MAX_ATTRIBUTE_VALUES} strings`);
      }
      spec.values = [...new Set(values as string[])];
    } else if (type === 'number' && values !== undefined) {
      if (!Array.isArray(values) || values.length < 2 || values.length > 3 || !values.every((v) => typeof v === 'number' && Number.isFinite(v)) || values[0] > values[1]) {
        throw new ClassSpecError([i, 'values'], 'a number\'s values are [min, max] or [min, max, step]');
      }
      spec.values = values as number[];
    } else if (values !== undefined) {
      throw new ClassSpecError([i, 'values'], `a ${type} attribute has no values`);
    }
    if (fallback !== undefined) {
      const problem = attributeProblem(spec, fallback);
      if (problem) throw new ClassSpecError([i, 'default'], problem);
      spec.default = fallback as AttributeValue;
    }
    return spec;
  });
}

/** Why `value` is not a value of the attribute, or null when it is. */
export function attributeProblem(spec: AttributeSpec, value: unknown): string | null {
  switch (spec.type) {
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'select':
      return typeof value === 'string' && spec.values!.includes(value) ? null : `must be one of ${spec.values!.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a finite number';
      const [min, max] = (spec.values ?? []) as number[];
      return min !== undefined && (value < min || value > max) ? `must be between ${min} and ${max}` : null;
    }
    case 'text':
      return typeof value === 'string' && value.length <= MAX_TEXT_ATTRIBUTE ? null : `must be a text of at most ${MAX_TEXT_ATTRIBUTE} characters`;
  }
}

/**
 * An annotation's attribute values checked against its class's specs: every name must be declared and every value
 * valid; attributes not given are left out (their default applies when read). A class with no specs takes none.
 */
export function parseAttributes(raw: unknown, specs: readonly AttributeSpec[]): Record<string, AttributeValue> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ClassSpecError([], 'must be an object {name: value}');
  const out: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(raw)) {
    const spec = specs.find((s) => s.name === name);
    if (!spec) {
      throw new ClassSpecError([name], specs.length === 0 ? 'the class declares no attributes' : `not an attribute of the class (it declares ${specs.map((s) => s.name).join(', ')})`);
    }
    const problem = attributeProblem(spec, value);
    if (problem) throw new ClassSpecError([name], problem);
    out[name] = value as AttributeValue;
  }
  return out;
}

/**
 * Attribute specs that admit every value seen in a dataset (readers that find values without declarations, e.g.
 * Label Studio's per-region choices or LabelMe flags): booleans make a checkbox, numbers a number, strings a select
 * of the values seen (a text when there are more than MAX_ATTRIBUTE_VALUES of them).
 */
export function specsFromValues(seen: Map<string, Set<AttributeValue>>): AttributeSpec[] {
  return [...seen].slice(0, MAX_ATTRIBUTES).map(([name, values]) => {
    const list = [...values];
    if (list.every((v) => typeof v === 'boolean')) return { name, type: 'checkbox' as const };
    if (list.every((v) => typeof v === 'number')) return { name, type: 'number' as const };
    const strings = list.map(String);
    return strings.length <= MAX_ATTRIBUTE_VALUES && strings.every((v) => v.length <= 200)
      ? { name, type: 'select' as const, values: strings }
      : { name, type: 'text' as const };
  });
}
