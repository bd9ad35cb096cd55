import type { TSchema } from 'typebox';
import type { Caller } from '../../access/caller.js';
import type { StepData, StepRunContext } from '../../plugins/plugin-registry.js';
import type { ExportRequest } from '../exports/exports.schemas.js';
import { CleaningParams, ExportParams, QualityParams, TrainParams, VersionParams } from './builtin-step-params.schemas.js';
import type { StepEnvironment, StepSpec } from './step-kit.logic.js';

/** create_version: the project frozen as a new dataset version. */
export function createVersionStep(env: StepEnvironment): StepSpec {
  return {
    name: 'create_version',
    title: 'Create a dataset version',
    description: 'Freezes the project as a new dataset version (generated in the background, as POST /api/projects/{id}/versions)',
    schema: VersionParams,
    impl: {
      inputs: [],
      outputs: ['version'],
      writes: true,
      async execute(ctx, params) {
        const version = await env.ports.versions.create(await env.callerOf(ctx.userId), ctx.projectId, params as never);
        await env.repository.recordWrites(ctx.runId, ctx.stepId, 'version', [version.id]);
        return { data: { version: version.id }, outputs: { version_id: version.id, number: version.number, status: version.status, job_id: version.job_id } };
      },
    },
  };
}

/** export: the project (or a ready version) written in a dataset format. */
export function exportStep(env: StepEnvironment): StepSpec {
  return {
    name: 'export',
    title: 'Export',
    description: 'Writes the project (or a ready version) in a dataset format, as POST /api/projects/{id}/export; after a step that selects images, only those images',
    schema: ExportParams,
    impl: {
      inputs: [],
      outputs: ['export'],
      writes: false,
      check(params, ctx) {
        const id = params.version_id as number | null | undefined;
        return ctx.project && id != null && !ctx.project.versionIds.includes(id) ? [{ path: ['version_id'], message: `version ${id} is not a version of the project` }] : [];
      },
      async execute(ctx, params, input) {
        const p = params as Omit<ExportRequest, 'include_unannotated'> & { include_unannotated?: boolean };
        const out = await env.ports.exports.export(await env.callerOf(ctx.userId), ctx.projectId, {
          ...p,
          include_unannotated: p.include_unannotated ?? true,
          version_id: p.version_id ?? ctx.versionId ?? null,
        }, { imageIds: input.images });
        return { data: { export: out.filename }, outputs: { ...out } };
      },
    },
  };
}

/** quality: quality_check plugins run over the project. */
export function qualityStep(env: StepEnvironment): StepSpec {
  const { ports } = env;
  return portStep(env, 'quality', 'Quality checks', 'Runs quality_check plugins over the project (after a step that selects images, over those images) and reports their results', QualityParams, false, () => ports.quality, async (ctx, params, caller, input) =>
    ports.quality!.run(caller, ctx.projectId, { ...(params as { checks?: string[]; config?: Record<string, unknown> }), image_ids: input.images }, ctx.signal));
}

/** cleaning: a cleaning_action plugin applied to the project, what it changed recorded with the run. */
export function cleaningStep(env: StepEnvironment): StepSpec {
  const { ports, repository } = env;
  return portStep(env, 'cleaning', 'Apply cleaning', 'Applies a cleaning_action plugin to the project (what it changes is recorded with the run)', CleaningParams, true, () => ports.cleaning, async (ctx, params, caller) => {
    const out = await ports.cleaning!.apply(caller, ctx.projectId, params as never, ctx.signal);
    const ids = Array.isArray(out.ids) ? (out.ids as unknown[]).filter((i): i is number => Number.isInteger(i)) : [];
    await repository.recordWrites(ctx.runId, ctx.stepId, 'cleaning', ids);
    return out;
  });
}

/** train: a training job started on a dataset version (the run's, or one an earlier step created). */
export function trainStep(env: StepEnvironment): StepSpec {
  const { ports } = env;
  return portStep(env, 'train', 'Train', 'Starts a training job with a training_adapter plugin on a dataset version', TrainParams, true, () => ports.training, async (ctx, params, caller, input) => {
    const p = params as { adapter: string; version_id?: number; params?: Record<string, unknown> };
    const versionId = p.version_id ?? (typeof input.version === 'number' ? input.version : null) ?? ctx.versionId;
    return ports.training!.start(caller, ctx.projectId, { adapter: p.adapter, version_id: versionId, params: p.params }, ctx.signal);
  });
}

/** A step that calls an optional port (installed or not in this build) and reports what it answers. */
function portStep(
  env: StepEnvironment,
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
