import type { Detection, SchemaIssue, StepCheckContext } from '../../plugins/plugin-registry.js';
import type { ModelRow } from '../models/models.schemas.js';
import { DetectParams, SamParams } from './builtin-step-params.schemas.js';
import type { PipelinePorts } from './pipelines.ports.js';
import { forEachConcurrently } from '../../lib/batches.js';
import { abortError, countByClass, IMAGE_CHUNK, toDetection, type StepEnvironment, type StepSpec } from './step-kit.logic.js';
import { classKey } from '../classes/class-key.logic.js';

/** detect: a registered detect or segment model of the project run on the images. */
export function detectStep({ repository, ports }: StepEnvironment): StepSpec {
  return {
    name: 'detect',
    title: 'Run a detector',
    description: "Runs a registered detect or segment model of the project on the images (the auto-annotate batch inference pool)",
    schema: DetectParams,
    impl: {
      inputs: ['images'],
      outputs: ['detections'],
      writes: false,
      check: checkDetector,
      producesClasses(params, ctx) {
        const model = ctx.project ? findModelFact(ctx, params.model as number | string | undefined, params.classes as string[] | undefined) : undefined;
        if (!model || model.class_names.length === 0) return null;
        const keep = params.classes as string[] | undefined;
        return new Set(model.class_names.map(classKey).filter((n) => !keep || keep.map(classKey).includes(n)));
      },
      async execute(ctx, params, input) {
        const p = params as { model?: number | string; confidence?: number; iou?: number; classes?: string[] };
        const model = await resolveModel(ports, ctx.projectId, p.model, p.classes);
        const keep = p.classes ? new Set(p.classes.map(classKey)) : null;
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
              const found = planned.map((a) => toDetection(a, `model:${model.id}`)).filter((d) => !keep || keep.has(classKey(d.class_name)));
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
  };
}

/** sam: each detection's box prompts the project's SAM models; the detection gets the mask's polygon. */
export function samStep({ repository, ports }: StepEnvironment): StepSpec {
  return {
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
        const only = (params.classes as string[] | undefined)?.map(classKey);
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
            const targets = list.filter((d) => !only || only.includes(classKey(d.class_name)));
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
  };
}

/** detect's check: the model exists in the project, detects or segments, and has the classes asked for. */
function checkDetector(params: Record<string, unknown>, ctx: StepCheckContext): SchemaIssue[] {
  if (!ctx.project) return [];
  const model = findModelFact(ctx, params.model as number | string | undefined, params.classes as string[] | undefined);
  if (!model) {
    return [params.model === undefined
      ? { path: ['model'], message: `no detect or segment model of the project has the classes ${((params.classes as string[] | undefined) ?? []).join(', ') || '(any)'}` }
      : { path: ['model'], message: `no model ${JSON.stringify(params.model)} in the project` }];
  }
  if (model.task !== 'detect' && model.task !== 'segment') return [{ path: ['model'], message: `model '${model.name}' is a ${model.task} model; detect needs a detect or segment model` }];
  const names = new Set(model.class_names.map(classKey));
  const issues: SchemaIssue[] = [];
  (params.classes as string[] | undefined)?.forEach((c, i) => {
    if (names.size > 0 && !names.has(classKey(c))) issues.push({ path: ['classes', i], message: `model '${model.name}' has no class '${c}' (it has ${model.class_names.join(', ')})` });
  });
  return issues;
}

function findModelFact(ctx: StepCheckContext, ref: number | string | undefined, classes: string[] | undefined) {
  const models = ctx.project?.models ?? [];
  if (ref === undefined) return defaultDetector(models, classes);
  return typeof ref === 'number' ? models.find((m) => m.id === ref) : models.find((m) => m.name === String(ref).trim());
}

/** The production (else newest) detect or segment model whose classes include all of `classes`. */
function defaultDetector<M extends { id: number; task: string; class_names: string[]; lifecycle?: string }>(models: M[], classes: string[] | undefined): M | undefined {
  const wanted = (classes ?? []).map(classKey);
  const fitting = models
    .filter((m) => (m.task === 'detect' || m.task === 'segment') && wanted.every((c) => m.class_names.map(classKey).includes(c)))
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
