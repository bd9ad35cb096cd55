import type { TSchema } from 'typebox';
import type { Caller } from '../../access/caller.js';
import type { Detection, JsonSchema, Plugin, SchemaIssue, StepCheckContext, StepData, StepImplementation, StepRunContext } from '../../plugins/plugin-registry.js';
import { VERSION } from '../../version.js';
import type { PlannedAnnotation } from '../auto-annotate/auto-annotate.service.js';
import type { ExportRequest } from '../exports/exports.schemas.js';
import type { ModelRow } from '../models/models.schemas.js';
import {
  CleaningParams,
  DetectParams,
  ExportParams,
  FilterParams,
  FlagParams,
  QualityParams,
  ReportParams,
  RuleParams,
  SamParams,
  SelectParams,
  TrainParams,
  VersionParams,
  WebhookParams,
  WriteParams,
} from './builtin-step-params.js';
import type { PipelinePorts } from './pipeline-ports.js';
import type { PipelineImage, PipelinesRepository } from './pipelines.repository.js';
import { webhookAllowed } from './webhook-sender.js';
import { forEachConcurrently } from '../../lib/batches.js';
import { type ReviewState } from '../../lib/vocabulary.js';
import { pointsBox } from '../../imaging/geometry.js';

/** What the built-in steps need besides the ports: the repository, the caller a run acts as, the allowlist. */
export interface StepEnvironment {
  readonly repository: PipelinesRepository;
  readonly ports: PipelinePorts;
  callerOf(userId: number | null): Promise<Caller>;
  readonly webhookAllowlist: readonly string[];
}

const IMAGE_CHUNK = 200;

interface StepSpec {
  name: string;
  title: string;
  description: string;
  schema: TSchema;
  impl: StepImplementation;
}

/** The built-in pipeline step types, as `pipeline_step` plugins. */
export function builtinSteps(env: StepEnvironment): Plugin[] {
  const { repository, ports } = env;
  const specs: StepSpec[] = [
    {
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
    },
    {
      name: 'detect',
      title: 'Run a detector',
      description: "Runs a registered detect or segment model of the project on the images (the auto-annotate batch inference pool)",
      schema: DetectParams,
      impl: {
        inputs: ['images'],
        outputs: ['detections'],
        writes: false,
        check(params, ctx) {
          if (!ctx.project) return [];
          const model = findModelFact(ctx, params.model as number | string | undefined, params.classes as string[] | undefined);
          if (!model) {
            return [params.model === undefined
              ? { path: ['model'], message: `no detect or segment model of the project has the classes ${((params.classes as string[] | undefined) ?? []).join(', ') || '(any)'}` }
              : { path: ['model'], message: `no model ${JSON.stringify(params.model)} in the project` }];
          }
          if (model.task !== 'detect' && model.task !== 'segment') return [{ path: ['model'], message: `model '${model.name}' is a ${model.task} model; detect needs a detect or segment model` }];
          const names = new Set(model.class_names.map(key));
          const issues: SchemaIssue[] = [];
          (params.classes as string[] | undefined)?.forEach((c, i) => {
            if (names.size > 0 && !names.has(key(c))) issues.push({ path: ['classes', i], message: `model '${model.name}' has no class '${c}' (it has ${model.class_names.join(', ')})` });
          });
          return issues;
        },
        producesClasses(params, ctx) {
          const model = ctx.project ? findModelFact(ctx, params.model as number | string | undefined, params.classes as string[] | undefined) : undefined;
          if (!model || model.class_names.length === 0) return null;
          const keep = params.classes as string[] | undefined;
          return new Set(model.class_names.map(key).filter((n) => !keep || keep.map(key).includes(n)));
        },
        async execute(ctx, params, input) {
          const p = params as { model?: number | string; confidence?: number; iou?: number; classes?: string[] };
          const model = await resolveModel(ports, ctx.projectId, p.model, p.classes);
          const keep = p.classes ? new Set(p.classes.map(key)) : null;
          const ids = input.images ?? [];
          const detections = new Map<number, Detection[]>();
          let done = 0;
          let count = 0;
          const failed: { image_id: number; error: string }[] = [];
          for (let i = 0; i < ids.length; i += IMAGE_CHUNK) {
            const images = await repository.images(ctx.projectId, ids.slice(i, i + IMAGE_CHUNK));
            await forEachConcurrently(images, ports.detector.batchInFlight, async (image) => {
              if (ctx.signal.aborted) throw abortError();
              try {
                const planned = await ports.detector.detectForPipeline(model, image, { confidence: p.confidence ?? 0.25, iou: p.iou ?? 0.45 });
                const found = planned.map((a) => toDetection(a, `model:${model.id}`)).filter((d) => !keep || keep.has(key(d.class_name)));
                detections.set(image.id, found);
                count += found.length;
              } catch (err) {
                if (failed.length < 100) failed.push({ image_id: image.id, error: err instanceof Error ? err.message : String(err) });
              }
              ctx.progress(++done / ids.length);
            });
          }
          if (failed.length > 0 && failed.length === ids.length) throw new Error(`The detector failed on every image: ${failed[0].error}`);
          return { data: { detections }, outputs: { images: ids.length, detections: count, by_class: countByClass(detections), model_id: model.id, failed } };
        },
      },
    },
    {
      name: 'sam',
      title: 'Segment with SAM (boxes as prompts)',
      description: "Each detection's box prompts the project's SAM encoder/decoder; the detection gets the mask's polygon",
      schema: SamParams,
      impl: {
        inputs: ['images', 'detections'],
        outputs: ['detections'],
        writes: false,
        check(_params, ctx) {
          if (!ctx.project) return [];
          const tasks = new Set(ctx.project.models.map((m) => m.task));
          return tasks.has('sam-encoder') && tasks.has('sam-decoder') ? [] : [{ path: [], message: 'the project has no sam-encoder and sam-decoder models' }];
        },
        async execute(ctx, params, input) {
          const only = (params.classes as string[] | undefined)?.map(key);
          const source = input.detections ?? new Map<number, Detection[]>();
          const out = new Map<number, Detection[]>();
          const ids = [...source.keys()];
          let done = 0;
          let segmented = 0;
          for (let i = 0; i < ids.length; i += IMAGE_CHUNK) {
            const images = await repository.images(ctx.projectId, ids.slice(i, i + IMAGE_CHUNK));
            for (const image of images) {
              if (ctx.signal.aborted) throw abortError();
              const list = source.get(image.id) ?? [];
              const targets = list.filter((d) => !only || only.includes(key(d.class_name)));
              const masks = targets.length ? await ports.detector.segmentBoxesForPipeline(ctx.projectId, image, targets.map((d) => d.box)) : [];
              out.set(image.id, list.map((d) => {
                const at = targets.indexOf(d);
                const mask = at === -1 ? null : masks[at];
                if (!mask) return d;
                segmented++;
                return { ...d, polygon: mask.polygon, source: 'sam' };
              }));
              ctx.progress(++done / ids.length);
            }
          }
          return { data: { detections: out }, outputs: { images: ids.length, segmented } };
        },
      },
    },
    {
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
          return new Set(keep.map(key).filter((c) => !ctx.upstreamClasses || ctx.upstreamClasses.has(c)));
        },
        async execute(_ctx, params, input) {
          const p = params as { classes?: string[]; min_confidence?: number; max_confidence?: number; min_width?: number; min_height?: number; min_area?: number; max_area?: number };
          const keep = p.classes ? new Set(p.classes.map(key)) : null;
          const out = new Map<number, Detection[]>();
          let kept = 0;
          let dropped = 0;
          for (const [imageId, list] of input.detections ?? []) {
            const passing = list.filter((d) => {
              const area = d.box.width * d.box.height;
              return (!keep || keep.has(key(d.class_name)))
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
    },
    {
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
            for (const subject of scored.filter((d) => key(d.class_name) === key(p.subject))) {
              subjects++;
              const missing = p.requires
                .filter((r) => !scored.some((b) => key(b.class_name) === key(r.class) && insideFraction(b.box, subject.box) >= (r.min_overlap ?? 0.5) - 1e-9))
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
    },
    {
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
          const keep = p.classes ? new Set(p.classes.map(key)) : null;
          const entries = [...(input.detections ?? new Map<number, Detection[]>())];
          let written = 0;
          let skipped = 0;
          const locked: number[] = [];
          const classesCreated: string[] = [];
          for (let i = 0; i < entries.length; i += IMAGE_CHUNK) {
            if (ctx.signal.aborted) throw abortError();
            const bySource = new Map<string, { image_id: number; planned: PlannedAnnotation[] }[]>();
            for (const [imageId, list] of entries.slice(i, i + IMAGE_CHUNK)) {
              for (const d of list) {
                if (keep && !keep.has(key(d.class_name))) continue;
                const source = p.source ?? d.source ?? 'pipeline';
                const items = bySource.get(source) ?? [];
                if (items.at(-1)?.image_id !== imageId) items.push({ image_id: imageId, planned: [] });
                items.at(-1)!.planned.push(toPlanned(d));
                bySource.set(source, items);
              }
            }
            for (const [source, items] of bySource) {
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
    },
    {
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
    },
    {
      name: 'report',
      title: 'Report',
      description: 'A summary of what earlier steps found: images, detections per class and rule violations per image',
      schema: ReportParams,
      impl: {
        inputs: [],
        outputs: ['report'],
        writes: false,
        async execute(_ctx, params, input) {
          const max = (params.max_images as number | undefined) ?? 1000;
          const violations: NonNullable<StepData['violations']> = input.violations ?? new Map();
          const perImage = [...violations].slice(0, max).map(([image_id, list]) => ({
            image_id,
            violations: list.map((v) => ({ subject: v.subject.class_name, box: v.subject.box, confidence: v.subject.confidence, missing: v.missing })),
          }));
          const report = {
            images: input.images?.length ?? input.detections?.size ?? 0,
            detections: input.detections ? [...input.detections.values()].reduce((n, l) => n + l.length, 0) : 0,
            by_class: input.detections ? countByClass(input.detections) : {},
            violating_images: violations.size,
            violations: [...violations.values()].reduce((n, l) => n + l.length, 0),
            per_image: perImage,
          };
          return { data: { report }, outputs: { report } };
        },
      },
    },
    {
      name: 'create_version',
      title: 'Create a dataset version',
      description: 'Freezes the project as a new dataset version (generated in the background, as POST /api/projects/{id}/versions)',
      schema: VersionParams,
      impl: {
        inputs: [],
        outputs: ['version'],
        writes: true,
        async execute(ctx, params) {
          const version = await ports.versions.create(await env.callerOf(ctx.userId), ctx.projectId, params as never);
          await repository.recordWrites(ctx.runId, ctx.stepId, 'version', [version.id]);
          return { data: { version: version.id }, outputs: { version_id: version.id, number: version.number, status: version.status, job_id: version.job_id } };
        },
      },
    },
    {
      name: 'export',
      title: 'Export',
      description: 'Writes the project (or a ready version) in a dataset format, as POST /api/projects/{id}/export',
      schema: ExportParams,
      impl: {
        inputs: [],
        outputs: ['export'],
        writes: false,
        check(params, ctx) {
          const id = params.version_id as number | null | undefined;
          return ctx.project && id != null && !ctx.project.versionIds.includes(id) ? [{ path: ['version_id'], message: `version ${id} is not a version of the project` }] : [];
        },
        async execute(ctx, params) {
          const p = params as Omit<ExportRequest, 'include_unannotated'> & { include_unannotated?: boolean };
          const out = await ports.exports.export(await env.callerOf(ctx.userId), ctx.projectId, {
            ...p,
            include_unannotated: p.include_unannotated ?? true,
            version_id: p.version_id ?? ctx.versionId ?? null,
          });
          return { data: { export: out.filename }, outputs: { ...out } };
        },
      },
    },
    {
      name: 'webhook',
      title: 'Webhook',
      description: "POSTs the run summary (and the report) to a URL on the operator's WEBHOOK_ALLOWLIST; the only outbound request Versa makes",
      schema: WebhookParams,
      impl: {
        inputs: [],
        outputs: [],
        writes: false,
        check(params) {
          const url = params.url as string;
          return webhookAllowed(url, env.webhookAllowlist) ? [] : [{ path: ['url'], message: env.webhookAllowlist.length ? `${url} is not on the webhook allowlist` : 'webhooks are disabled (WEBHOOK_ALLOWLIST is empty)' }];
        },
        async execute(ctx, params, input) {
          const p = params as { url: string; include_report?: boolean };
          const body = { run_id: ctx.runId, project_id: ctx.projectId, step: ctx.stepId, report: p.include_report === false ? undefined : (input.report ?? null), summary: input.summary ?? null };
          const answer = await ports.webhook.post(p.url, body, ctx.signal);
          return { outputs: { status: answer.status } };
        },
      },
    },
    portStep('quality', 'Quality checks', 'Runs quality_check plugins over the project and reports their results', QualityParams, false, () => ports.quality, async (ctx, params, caller) =>
      ports.quality!.run(caller, ctx.projectId, params as never, ctx.signal)),
    portStep('cleaning', 'Apply cleaning', 'Applies a cleaning_action plugin to the project (what it changes is recorded with the run)', CleaningParams, true, () => ports.cleaning, async (ctx, params, caller) => {
      const out = await ports.cleaning!.apply(caller, ctx.projectId, params as never, ctx.signal);
      const ids = Array.isArray(out.ids) ? (out.ids as unknown[]).filter((i): i is number => Number.isInteger(i)) : [];
      await repository.recordWrites(ctx.runId, ctx.stepId, 'cleaning', ids);
      return out;
    }),
    portStep('train', 'Train', 'Starts a training job with a training_adapter plugin on a dataset version', TrainParams, true, () => ports.training, async (ctx, params, caller, input) => {
      const p = params as { adapter: string; version_id?: number; params?: Record<string, unknown> };
      const versionId = p.version_id ?? (typeof input.version === 'number' ? input.version : null) ?? ctx.versionId;
      return ports.training!.start(caller, ctx.projectId, { adapter: p.adapter, version_id: versionId, params: p.params }, ctx.signal);
    }),
  ];
  return specs.map((s) => ({
    type: 'pipeline_step' as const,
    name: s.name,
    title: s.title,
    description: s.description,
    version: VERSION,
    builtin: true,
    config_schema: structuredClone(s.schema) as unknown as JsonSchema,
    step: s.impl,
  }));

  function portStep(
    name: string,
    title: string,
    description: string,
    schema: TSchema,
    writes: boolean,
    port: () => unknown,
    run: (ctx: StepRunContext, params: Record<string, unknown>, caller: Caller, input: StepData) => Promise<Record<string, unknown>>,
  ): StepSpec {
    return {
      name,
      title,
      description,
      schema,
      impl: {
        inputs: [],
        outputs: ['report'],
        writes,
        unavailable: () => (port() ? null : `no ${name} service is installed in this build`),
        async execute(ctx, params, input) {
          if (!port()) throw new Error(`Step type '${name}' is unavailable: no ${name} service is installed`);
          const outputs = await run(ctx, params, await env.callerOf(ctx.userId), input);
          return { data: { [name]: outputs }, outputs };
        },
      },
    };
  }
}

/** Fraction of `inner`'s area that lies inside `outer`. */
export function insideFraction(inner: Detection['box'], outer: Detection['box']): number {
  const w = Math.min(inner.x + inner.width, outer.x + outer.width) - Math.max(inner.x, outer.x);
  const h = Math.min(inner.y + inner.height, outer.y + outer.height) - Math.max(inner.y, outer.y);
  const area = inner.width * inner.height;
  return w > 0 && h > 0 && area > 0 ? (w * h) / area : 0;
}

function classIssues(names: string[] | undefined, path: (string | number)[], ctx: StepCheckContext): SchemaIssue[] {
  const known = ctx.upstreamClasses;
  if (!names || !known || known.size === 0) return [];
  return names.flatMap((name, i) =>
    known.has(key(name)) ? [] : [{ path: [...path, i], message: `class '${name}' is not produced by the detector upstream (it gives ${[...known].join(', ')})` }]);
}

function findModelFact(ctx: StepCheckContext, ref: number | string | undefined, classes: string[] | undefined) {
  const models = ctx.project?.models ?? [];
  if (ref === undefined) return defaultDetector(models, classes);
  return typeof ref === 'number' ? models.find((m) => m.id === ref) : models.find((m) => m.name === String(ref).trim());
}

/** The production (else newest) detect or segment model whose classes include all of `classes`. */
function defaultDetector<M extends { id: number; task: string; class_names: string[]; lifecycle?: string }>(models: M[], classes: string[] | undefined): M | undefined {
  const wanted = (classes ?? []).map(key);
  const fitting = models
    .filter((m) => (m.task === 'detect' || m.task === 'segment') && wanted.every((c) => m.class_names.map(key).includes(c)))
    .sort((a, b) => Number(b.lifecycle === 'production') - Number(a.lifecycle === 'production') || b.id - a.id);
  return fitting[0];
}

async function resolveModel(ports: PipelinePorts, projectId: number, ref: number | string | undefined, classes: string[] | undefined): Promise<ModelRow> {
  const model = ref === undefined
    ? defaultDetector((await ports.models.list({ projectId, viewerId: null })).map((m) => ({ ...m, class_names: JSON.parse(m.class_names) as string[], row: m })), classes)?.row
    : typeof ref === 'number' ? await ports.models.find(ref) : await ports.models.findByName(projectId, ref.trim());
  if (!model && ref === undefined) throw new Error(`No detect or segment model of project ${projectId} has the classes ${(classes ?? []).join(', ')}`);
  if (!model || model.project_id !== projectId) throw new Error(`Model ${JSON.stringify(ref)} is not a model of project ${projectId}`);
  if (model.task !== 'detect' && model.task !== 'segment') throw new Error(`Model '${model.name}' is a ${model.task} model`);
  return model;
}

function toDetection(a: PlannedAnnotation, source: string): Detection {
  const g = a.geometry as { x?: number; y?: number; width?: number; height?: number; points?: [number, number][] };
  if (a.annotation_type === 'polygon' && g.points) {
    return { class_name: a.className, confidence: a.confidence, box: pointsBox(g.points), polygon: g.points, source };
  }
  return { class_name: a.className, confidence: a.confidence, box: { x: g.x!, y: g.y!, width: g.width!, height: g.height! }, source };
}

function toPlanned(d: Detection): PlannedAnnotation {
  return d.polygon
    ? { className: d.class_name, annotation_type: 'polygon', geometry: { points: d.polygon }, confidence: d.confidence }
    : { className: d.class_name, annotation_type: 'bbox', geometry: d.box, confidence: d.confidence };
}

function countByClass(detections: Map<number, Detection[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const list of detections.values()) for (const d of list) out[d.class_name] = (out[d.class_name] ?? 0) + 1;
  return out;
}

const key = (name: string) => name.trim().toLowerCase();

export function abortError(): Error {
  const err = new Error('The run was cancelled');
  err.name = 'AbortError';
  return err;
}

export type { PipelineImage };
