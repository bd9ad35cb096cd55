/**
 * What changed between two versions, by source image id: images added, removed, or changed (content hash, split,
 * annotations compared as multisets of canonical class/type/geometry/attribute strings), the recipe members that differ, and
 * how many output files are byte-identical.
 */
import type { VersionDiffOut, VersionRow } from './versions.schemas.js';

export interface DiffSource {
  source_image_id: number;
  split: string;
  sha256: string;
  /** JSON text: the frozen annotations. */
  annotations: string;
}

export function diffVersions(
  a: VersionRow,
  b: VersionRow,
  sourcesA: DiffSource[],
  sourcesB: DiffSource[],
  outputsA: { filename: string; sha256: string }[],
  outputsB: { filename: string; sha256: string }[],
): VersionDiffOut {
  const byIdA = new Map(sourcesA.map((s) => [s.source_image_id, s]));
  const byIdB = new Map(sourcesB.map((s) => [s.source_image_id, s]));
  const added = sourcesB.filter((s) => !byIdA.has(s.source_image_id)).map((s) => s.source_image_id);
  const removed = sourcesA.filter((s) => !byIdB.has(s.source_image_id)).map((s) => s.source_image_id);
  const changed: VersionDiffOut['images']['changed'] = [];
  let unchanged = 0;
  let annotationsAdded = 0;
  let annotationsRemoved = 0;
  for (const id of added) annotationsAdded += annotationKeys(byIdB.get(id)!.annotations).length;
  for (const id of removed) annotationsRemoved += annotationKeys(byIdA.get(id)!.annotations).length;
  for (const before of sourcesA) {
    const after = byIdB.get(before.source_image_id);
    if (!after) continue;
    const { plus, minus } = multisetDifference(annotationKeys(before.annotations), annotationKeys(after.annotations));
    annotationsAdded += plus;
    annotationsRemoved += minus;
    const contentChanged = before.sha256 !== after.sha256;
    const split = before.split !== after.split ? { from: before.split, to: after.split } : null;
    if (!contentChanged && !split && plus === 0 && minus === 0) {
      unchanged++;
      continue;
    }
    changed.push({ source_image_id: before.source_image_id, content_changed: contentChanged, split, annotations_added: plus, annotations_removed: minus });
  }
  const hashesA = new Map(outputsA.map((o) => [o.filename, o.sha256]));
  const identical = outputsB.filter((o) => hashesA.get(o.filename) === o.sha256).length;
  return {
    a: { id: a.id, number: a.number },
    b: { id: b.id, number: b.number },
    config_changes: configChanges(a, b),
    images: { added, removed, changed, unchanged },
    annotations: { added: annotationsAdded, removed: annotationsRemoved },
    outputs: { a: outputsA.length, b: outputsB.length, identical },
  };
}

/**
 * An annotation's identity for the diff: class, type, geometry, and its attribute values and group id when it has
 * some (a changed attribute value is a removed and an added annotation, as a moved box is; snapshots of plain shapes
 * made before attributes existed compare equal to new ones).
 */
function annotationKeys(json: string): string[] {
  type Frozen = { class_name: string; annotation_type: string; geometry: unknown; attributes?: Record<string, unknown>; group_id?: number | null };
  return (JSON.parse(json) as Frozen[]).map((a) => {
    const key: unknown[] = [a.class_name, a.annotation_type, a.geometry];
    if (a.attributes && Object.keys(a.attributes).length > 0) key.push({ attributes: a.attributes });
    if (a.group_id != null) key.push({ group_id: a.group_id });
    return canonical(key);
  });
}

function multisetDifference(before: string[], after: string[]): { plus: number; minus: number } {
  const counts = new Map<string, number>();
  for (const key of before) counts.set(key, (counts.get(key) ?? 0) + 1);
  let plus = 0;
  for (const key of after) {
    const left = counts.get(key) ?? 0;
    if (left > 0) counts.set(key, left - 1);
    else plus++;
  }
  let minus = 0;
  for (const left of counts.values()) minus += left;
  return { plus, minus };
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function configChanges(a: VersionRow, b: VersionRow): string[] {
  const out: string[] = [];
  if (a.seed !== b.seed) out.push('seed');
  if (canonical(JSON.parse(a.split_config)) !== canonical(JSON.parse(b.split_config))) out.push('split_config');
  for (const key of ['preprocessing_config', 'augmentation_config'] as const) {
    const before = JSON.parse(a[key]) as Record<string, unknown>;
    const after = JSON.parse(b[key]) as Record<string, unknown>;
    for (const option of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      if (canonical(before[option]) !== canonical(after[option])) out.push(`${key}.${option}`);
    }
  }
  return out;
}
