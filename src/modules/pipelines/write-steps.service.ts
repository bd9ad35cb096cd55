import type { Detection } from '../../plugins/plugin-registry.js';
import type { PlannedAnnotation } from '../auto-annotate/auto-annotate.service.js';
import { FlagParams, WriteParams } from './builtin-step-params.schemas.js';
import { abortError, classIssues, IMAGE_CHUNK, toPlanned, type StepEnvironment, type StepSpec } from './step-kit.logic.js';
import { classKey } from '../classes/class-key.logic.js';

/** write_annotations: the detections saved as annotations, each recorded with the run. */
export function writeAnnotationsStep({ repository, ports }: StepEnvironment): StepSpec {
  return {
    name: 'write_annotations',
    title: 'Write detections as annotations',
    description: "Saves the detections as annotations (with `source` and a revision naming who ran the pipeline); the run records every annotation it wrote, so they can be reviewed or undone",
    schema: WriteParams,
    impl: {
      inputs: ['detections'],
      outputs: ['annotations'],
      writes: true,
      check: (params, ctx) => classIssues(params.classes as string[] | undefined, ['classes'], ctx),
      async execute(ctx, params, input) {
        const p = params as { source?: string; create_missing_classes?: boolean; classes?: string[] };
        const keep = p.classes ? new Set(p.classes.map(classKey)) : null;
        const entries = [...(input.detections ?? new Map<number, Detection[]>())];
        let written = 0;
        let skipped = 0;
        const locked: number[] = [];
        const classesCreated: string[] = [];
        for (let i = 0; i < entries.length; i += IMAGE_CHUNK) {
          if (ctx.signal.aborted) throw abortError();
          for (const [source, items] of bySource(entries.slice(i, i + IMAGE_CHUNK), keep, p.source)) {
            const saved = await ports.detector.saveForPipeline(ctx.projectId, ctx.userId, items, { source, createMissingClasses: p.create_missing_classes ?? true });
            await repository.recordWrites(ctx.runId, ctx.stepId, 'annotation', saved.ids);
            written += saved.ids.length;
            skipped += saved.skipped;
            locked.push(...saved.locked);
            classesCreated.push(...saved.classes_created);
          }
          ctx.progress(Math.min(1, (i + IMAGE_CHUNK) / Math.max(1, entries.length)));
        }
        return { outputs: { annotations: written, skipped, locked_images: locked.slice(0, 100), locked_count: locked.length, classes_created: classesCreated } };
      },
    },
  };
}

/** flag_for_review: the images (by default those that broke a rule) put in the review queue. */
export function flagForReviewStep(env: StepEnvironment): StepSpec {
  const { repository, ports } = env;
  return {
    name: 'flag_for_review',
    title: 'Flag images for review',
    description: "Puts the images (by default only those that broke a rule) in the project's review queue with a comment naming the run",
    schema: FlagParams,
    impl: {
      inputs: ['images'],
      outputs: ['reviews'],
      writes: true,
      async execute(ctx, params, input) {
        const p = params as { comment?: string; only_violations?: boolean };
        const candidates = input.violations && (p.only_violations ?? true) ? [...input.violations.keys()] : (input.images ?? []);
        const pending = await repository.pendingReview(ctx.projectId, candidates);
        const ids = candidates.filter((id) => !pending.has(id));
        const caller = await env.callerOf(ctx.userId);
        const comment = `${p.comment ?? 'Flagged by a pipeline'} (pipeline run ${ctx.runId})`;
        const reviewIds: number[] = [];
        for (let i = 0; i < ids.length; i += IMAGE_CHUNK) {
          if (ctx.signal.aborted) throw abortError();
          const rows = await ports.reviews.submit(caller, ctx.projectId, ids.slice(i, i + IMAGE_CHUNK), comment);
          await repository.recordWrites(ctx.runId, ctx.stepId, 'review', rows.map((r) => r.id));
          reviewIds.push(...rows.map((r) => r.id));
          ctx.progress((i + IMAGE_CHUNK) / ids.length);
        }
        return { data: { reviews: reviewIds }, outputs: { flagged: ids.length, already_pending: pending.size, image_ids: ids.slice(0, 1000) } };
      },
    },
  };
}

/** A chunk's detections as annotations to save, grouped by the source they are saved under, image by image. */
function bySource(entries: [number, Detection[]][], keep: Set<string> | null, fixedSource: string | undefined): Map<string, { image_id: number; planned: PlannedAnnotation[] }[]> {
  const grouped = new Map<string, { image_id: number; planned: PlannedAnnotation[] }[]>();
  for (const [imageId, list] of entries) {
    for (const d of list) {
      if (keep && !keep.has(classKey(d.class_name))) continue;
      const source = fixedSource ?? d.source ?? 'pipeline';
      const items = grouped.get(source) ?? [];
      if (items.at(-1)?.image_id !== imageId) items.push({ image_id: imageId, planned: [] });
      items.at(-1)!.planned.push(toPlanned(d));
      grouped.set(source, items);
    }
  }
  return grouped;
}
