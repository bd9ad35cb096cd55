import type { SchemaIssue } from '../../plugins/plugin-registry.js';
import { SelectParams } from './builtin-step-params.schemas.js';
import type { ReviewState } from '../../lib/vocabulary.js';
import type { StepEnvironment, StepSpec } from './step-kit.logic.js';

/** select_images: where a pipeline's images come from. */
export function selectImagesStep({ repository }: StepEnvironment): StepSpec {
  return {
    name: 'select_images',
    title: 'Select images',
    description: "The project's images (or a version's source images), filtered by split, class, review state and annotation",
    schema: SelectParams,
    impl: {
      inputs: [],
      outputs: ['images'],
      writes: false,
      check(params, ctx) {
        const issues: SchemaIssue[] = [];
        const p = params as { class_ids?: number[]; version_id?: number; source?: string };
        if (ctx.project) {
          const known = new Set(ctx.project.classes.map((c) => c.id));
          p.class_ids?.forEach((id, i) => {
            if (!known.has(id)) issues.push({ path: ['class_ids', i], message: `class ${id} is not a class of the project` });
          });
          if (p.version_id !== undefined && !ctx.project.versionIds.includes(p.version_id)) {
            issues.push({ path: ['version_id'], message: `version ${p.version_id} is not a version of the project` });
          }
        }
        return issues;
      },
      async execute(ctx, params) {
        const p = params as { source?: string; version_id?: number; splits?: string[]; class_ids?: number[]; review_states?: ReviewState[]; annotated?: boolean; limit?: number };
        const versionId = p.source === 'version' ? (p.version_id ?? ctx.versionId) : null;
        if (p.source === 'version' && !versionId) throw new Error("select_images with source 'version' needs version_id (in its params or the run's)");
        const images = await repository.selectImages({
          projectId: ctx.projectId,
          versionId,
          splits: p.splits?.map((s) => (s === 'none' ? null : s)),
          classIds: p.class_ids,
          reviewStates: p.review_states,
          annotated: p.annotated,
          limit: p.limit,
        });
        return { data: { images }, outputs: { images: images.length } };
      },
    },
  };
}
