import type { AttributeSpec, Skeleton } from '../types.js';

// A class's skeleton and attribute specs as short text a person writes in the classes panel, and back:
//   points:      nose, left_eye, right_eye            (names, in order; commas or new lines)
//   edges:       nose-left_eye, nose-right_eye         (pairs of point names)
//   flip pairs:  left_eye-right_eye
//   attributes:  one per line, `name: type`, then for select `a | b | c`, for number `min..max` (or `min..max step`),
//                and optionally `= default`, e.g. `pose: select standing | sitting = standing`, `occluded: checkbox`.

const list = (text: string) => text.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);

export function skeletonToText(s: Skeleton | null): { points: string; edges: string; flips: string } {
  if (!s) return { points: '', edges: '', flips: '' };
  const pair = ([a, b]: number[]) => `${s.points[a]}-${s.points[b]}`;
  return { points: s.points.join(', '), edges: (s.edges ?? []).map(pair).join(', '), flips: (s.flip_pairs ?? []).map(pair).join(', ') };
}

/** The skeleton the text describes (null: no points, no skeleton); throws with a message a person can act on. */
export function skeletonFromText(points: string, edges: string, flips: string): Skeleton | null {
  const names = list(points);
  if (names.length === 0) {
    if (list(edges).length || list(flips).length) throw new Error('Edges and flip pairs need points');
    return null;
  }
  const pairs = (text: string, what: string): [number, number][] =>
    list(text).map((p) => {
      const [a, b, extra] = p.split('-').map((x) => x.trim());
      const ia = names.indexOf(a), ib = names.indexOf(b);
      if (extra !== undefined || ia < 0 || ib < 0) throw new Error(`${what} "${p}": write two point names joined by "-"`);
      return [ia, ib];
    });
  return { points: names, edges: pairs(edges, 'Edge'), flip_pairs: pairs(flips, 'Flip pair') };
}

export function attributesToText(specs: AttributeSpec[]): string {
  return specs
    .map((s) => {
      const values = s.type === 'select' ? ` ${(s.values ?? []).join(' | ')}` : s.type === 'number' && s.values ? ` ${s.values[0]}..${s.values[1]}${s.values[2] !== undefined ? ` ${s.values[2]}` : ''}` : '';
      return `${s.name}: ${s.type}${values}${s.default !== undefined ? ` = ${s.default}` : ''}`;
    })
    .join('\n');
}

const TYPES = ['checkbox', 'select', 'number', 'text'] as const;

export function attributesFromText(text: string): AttributeSpec[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const m = /^([^:]+):\s*(\w+)\s*([^=]*?)\s*(?:=\s*(.*))?$/.exec(line);
      const type = m?.[2] as AttributeSpec['type'];
      if (!m || !TYPES.includes(type)) throw new Error(`Attribute "${line}": write "name: checkbox|select|number|text ..."`);
      const spec: AttributeSpec = { name: m[1].trim(), type };
      const rest = m[3].trim(), def = m[4]?.trim();
      if (type === 'select') spec.values = rest.split('|').map((v) => v.trim()).filter(Boolean);
      if (type === 'number' && rest) {
        const n = /^(-?[\d.]+)\s*\.\.\s*(-?[\d.]+)(?:\s+([\d.]+))?$/.exec(rest);
        if (!n) throw new Error(`Attribute "${line}": a number's range is "min..max" or "min..max step"`);
        spec.values = n.slice(1).filter((v) => v !== undefined).map(Number);
      }
      if (def !== undefined && def !== '') spec.default = type === 'checkbox' ? def === 'true' : type === 'number' ? Number(def) : def;
      return spec;
    });
}
