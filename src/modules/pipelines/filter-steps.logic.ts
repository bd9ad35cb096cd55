import type { Detection } from '../../plugins/plugin-registry.js';
import { FilterParams, RuleParams } from './builtin-step-params.schemas.js';
import { classIssues, insideFraction, type StepSpec } from './step-kit.logic.js';
import { classKey } from '../classes/class-key.logic.js';

/** filter_detections: keeps detections by class, confidence and box size. */
export function filterDetectionsStep(): StepSpec {
  return {
    name: 'filter_detections',
    title: 'Filter detections',
    description: 'Keeps detections by class, confidence and box size',
    schema: FilterParams,
    impl: {
      inputs: ['detections'],
      outputs: ['detections'],
      writes: false,
      check: (params, ctx) => classIssues(params.classes as string[] | undefined, ['classes'], ctx),
      producesClasses(params, ctx) {
        const keep = params.classes as string[] | undefined;
        if (!keep) return undefined;
        return new Set(keep.map(classKey).filter((c) => !ctx.upstreamClasses || ctx.upstreamClasses.has(c)));
      },
      async execute(_ctx, params, input) {
        const p = params as { classes?: string[]; min_confidence?: number; max_confidence?: number; min_width?: number; min_height?: number; min_area?: number; max_area?: number };
        const keep = p.classes ? new Set(p.classes.map(classKey)) : null;
        const out = new Map<number, Detection[]>();
        let kept = 0;
        let dropped = 0;
        for (const [imageId, list] of input.detections ?? []) {
          const passing = list.filter((d) => {
            const area = d.box.width * d.box.height;
            return (!keep || keep.has(classKey(d.class_name)))
              && d.confidence >= (p.min_confidence ?? 0) && d.confidence <= (p.max_confidence ?? 1)
              && d.box.width >= (p.min_width ?? 0) && d.box.height >= (p.min_height ?? 0)
              && area >= (p.min_area ?? 0) && area <= (p.max_area ?? Infinity);
          });
          kept += passing.length;
          dropped += list.length - passing.length;
          out.set(imageId, passing);
        }
        return { data: { detections: out }, outputs: { kept, dropped } };
      },
    },
  };
}

/** rule: every detection of `subject` needs a detection of each required class over it; images that break it are violations. */
export function ruleStep(): StepSpec {
  return {
    name: 'rule',
    title: 'Rule: each A needs a B',
    description: "Every detection of `subject` must contain or overlap a detection of each required class by `min_overlap` of the required box (e.g. every person needs a helmet and a vest); images that break it are violations",
    schema: RuleParams,
    impl: {
      inputs: ['detections'],
      outputs: ['violations'],
      writes: false,
      check(params, ctx) {
        const p = params as { subject: string; requires: { class: string }[] };
        return [
          ...classIssues([p.subject], ['subject'], ctx).map((i) => ({ ...i, path: ['subject'] })),
          ...(p.requires ?? []).flatMap((r, i) => classIssues([r.class], ['requires', i, 'class'], ctx).map((x) => ({ ...x, path: ['requires', i, 'class'] }))),
        ];
      },
      async execute(_ctx, params, input) {
        const p = params as { subject: string; requires: { class: string; min_overlap?: number }[]; min_confidence?: number };
        const violations = new Map<number, { subject: Detection; missing: string[] }[]>();
        let subjects = 0;
        let broken = 0;
        for (const [imageId, list] of input.detections ?? []) {
          const scored = list.filter((d) => d.confidence >= (p.min_confidence ?? 0));
          const found: { subject: Detection; missing: string[] }[] = [];
          for (const subject of scored.filter((d) => classKey(d.class_name) === classKey(p.subject))) {
            subjects++;
            const missing = p.requires
              .filter((r) => !scored.some((b) => classKey(b.class_name) === classKey(r.class) && insideFraction(b.box, subject.box) >= (r.min_overlap ?? 0.5) - 1e-9))
              .map((r) => r.class);
            if (missing.length > 0) found.push({ subject, missing });
          }
          if (found.length > 0) {
            violations.set(imageId, found);
            broken += found.length;
          }
        }
        return { data: { violations }, outputs: { subjects_checked: subjects, violations: broken, violating_images: violations.size } };
      },
    },
  };
}
