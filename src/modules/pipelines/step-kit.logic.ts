import type { TSchema } from 'typebox';
import { pointsBox } from '../../imaging/geometry.js';
import type { Caller } from '../../access/caller.js';
import type { Detection, SchemaIssue, StepCheckContext, StepImplementation } from '../../plugins/plugin-registry.js';
import type { PlannedAnnotation } from '../auto-annotate/auto-annotate.service.js';
import type { PipelinePorts } from './pipelines.ports.js';
import type { PipelinesRepository } from './pipelines.repository.js';
import { classKey } from '../classes/class-key.logic.js';

/** What the built-in steps need besides the ports: the repository, the caller a run acts as, the allowlist. */
export interface StepEnvironment {
  readonly repository: PipelinesRepository;
  readonly ports: PipelinePorts;
  callerOf(userId: number | null): Promise<Caller>;
  readonly webhookAllowlist: readonly string[];
}

/** One built-in step type, before it is wrapped as a `pipeline_step` plugin. */
export interface StepSpec {
  name: string;
  title: string;
  description: string;
  schema: TSchema;
  impl: StepImplementation;
}

/** How many images a step reads (or writes) at a time. */
export const IMAGE_CHUNK = 200;

/** Fraction of `inner`'s area that lies inside `outer`. */
export function insideFraction(inner: Detection['box'], outer: Detection['box']): number {
  const w = Math.min(inner.x + inner.width, outer.x + outer.width) - Math.max(inner.x, outer.x);
  const h = Math.min(inner.y + inner.height, outer.y + outer.height) - Math.max(inner.y, outer.y);
  const area = inner.width * inner.height;
  return w > 0 && h > 0 && area > 0 ? (w * h) / area : 0;
}

/** The named classes that no detector upstream produces (nothing when upstream classes are unknown). */
export function classIssues(names: string[] | undefined, path: (string | number)[], ctx: StepCheckContext): SchemaIssue[] {
  const known = ctx.upstreamClasses;
  if (!names || !known || known.size === 0) return [];
  return names.flatMap((name, i) =>
    known.has(classKey(name)) ? [] : [{ path: [...path, i], message: `class '${name}' is not produced by the detector upstream (it gives ${[...known].join(', ')})` }]);
}

export function toDetection(a: PlannedAnnotation, source: string): Detection {
  const g = a.geometry as { x?: number; y?: number; width?: number; height?: number; points?: [number, number][] };
  if (a.annotation_type === 'polygon' && g.points) {
    return { class_name: a.className, confidence: a.confidence, box: pointsBox(g.points), polygon: g.points, source };
  }
  return { class_name: a.className, confidence: a.confidence, box: { x: g.x!, y: g.y!, width: g.width!, height: g.height! }, source };
}

export function toPlanned(d: Detection): PlannedAnnotation {
  return d.polygon
    ? { className: d.class_name, annotation_type: 'polygon', geometry: { points: d.polygon }, confidence: d.confidence }
    : { className: d.class_name, annotation_type: 'bbox', geometry: d.box, confidence: d.confidence };
}

export function countByClass(detections: Map<number, Detection[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const list of detections.values()) for (const d of list) out[d.class_name] = (out[d.class_name] ?? 0) + 1;
  return out;
}

export function abortError(): Error {
  const err = new Error('The run was cancelled');
  err.name = 'AbortError';
  return err;
}
