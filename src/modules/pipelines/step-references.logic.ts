import type { PipelineStep } from './pipelines.schemas.js';

export const REFERENCE_KINDS = ['model', 'version', 'class'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

/** A project record a built-in step names by id, with where in the definition it is named. */
export interface StepReference {
  kind: ReferenceKind;
  id: number;
  path: (string | number)[];
}

/**
 * Where the built-in steps name records by id: these must be records of the pipeline's own project (or of its
 * organization's projects) when it is saved, so that a pipeline cannot carry another project's model or version to
 * fail only when it runs. Names (a model's name, class names) are looked up in the project a run is on.
 */
const BY_STEP_TYPE: Record<string, (params: Record<string, unknown>) => { kind: ReferenceKind; value: unknown; path: (string | number)[] }[]> = {
  select_images: (p) => [
    { kind: 'version', value: p.version_id, path: ['version_id'] },
    ...(Array.isArray(p.class_ids) ? p.class_ids.map((value, i) => ({ kind: 'class' as const, value, path: ['class_ids', i] })) : []),
  ],
  detect: (p) => [{ kind: 'model', value: p.model, path: ['model'] }],
  export: (p) => [{ kind: 'version', value: p.version_id, path: ['version_id'] }],
  train: (p) => [{ kind: 'version', value: p.version_id, path: ['version_id'] }],
};

/** The references of a definition, however malformed the rest of it is (validation names those problems). */
export function stepReferences(definition: unknown): StepReference[] {
  const steps = (definition as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return [];
  return steps.flatMap((step: Partial<PipelineStep> | null, index) => {
    const params = step?.params;
    if (typeof step?.type !== 'string' || !Object.hasOwn(BY_STEP_TYPE, step.type) || !params || typeof params !== 'object') return [];
    return BY_STEP_TYPE[step.type](params).flatMap(({ kind, value, path }) =>
      Number.isSafeInteger(value) ? [{ kind, id: value as number, path: ['steps', index, 'params', ...path] }] : []);
  });
}
