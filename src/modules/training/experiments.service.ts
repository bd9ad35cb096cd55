import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import type { ExperimentRow, TrainingRepository } from './training.repository.js';
import type { ExperimentDetailOut, ExperimentListQuery, ExperimentOut, ExperimentPatch } from './training.schemas.js';

/** Experiments: list, detail, rename/tag/notes, compare. Visible to whoever can read the project. */
export class ExperimentsService {
  constructor(
    private readonly repository: TrainingRepository,
    private readonly access: ProjectAccess,
  ) {}

  async list(caller: Caller, projectId: number, query: ExperimentListQuery): Promise<ExperimentOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    const rows = await this.repository.list(projectId, { status: query.status, adapter: query.adapter, versionId: query.version_id, tag: query.tag, limit: query.limit, offset: query.offset });
    return rows.filter((r) => !query.tag || (JSON.parse(r.tags) as string[]).includes(query.tag)).map(toExperimentOut);
  }

  async get(caller: Caller, id: number): Promise<ExperimentDetailOut> {
    return toExperimentDetail(await this.visible(caller, id, 'project.read'));
  }

  async update(caller: Caller, id: number, patch: ExperimentPatch): Promise<ExperimentOut> {
    await this.visible(caller, id, 'models.write');
    const values = {
      ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
      ...(patch.tags !== undefined ? { tags: JSON.stringify([...new Set(patch.tags.map((t) => t.trim()))]) } : {}),
      ...(patch.notes !== undefined ? { notes: patch.notes } : {}),
    };
    // Unknown fields are dropped after the schema counted them, so a body of only those arrives empty.
    if (Object.keys(values).length === 0) throw ValidationError.at(['body'], 'Give at least one of name, tags or notes', 'missing');
    await this.repository.update(id, values);
    return toExperimentOut((await this.repository.find(id))!);
  }

  /** Side by side, in the order given: params and metrics as name → value per experiment (null where one lacks it). */
  async compare(caller: Caller, ids: number[]): Promise<{ experiments: ExperimentDetailOut[]; params: Record<string, unknown[]>; metrics: Record<string, (number | null)[]> }> {
    const experiments: ExperimentDetailOut[] = [];
    for (const id of ids) experiments.push(toExperimentDetail(await this.visible(caller, id, 'project.read')));
    const params: Record<string, unknown[]> = {};
    const metrics: Record<string, (number | null)[]> = {};
    const paramNames = [...new Set(experiments.flatMap((e) => Object.keys(e.params)))].sort();
    const metricNames = [...new Set(experiments.flatMap((e) => Object.keys(e.metrics)))].sort();
    for (const name of paramNames) params[name] = experiments.map((e) => e.params[name] ?? null);
    for (const name of metricNames) metrics[name] = experiments.map((e) => e.metrics[name] ?? null);
    return { experiments, params, metrics };
  }

  private async visible(caller: Caller, id: number, permission: 'project.read' | 'models.write'): Promise<ExperimentRow> {
    const row = await this.repository.find(id);
    const message = `Experiment ${id} not found`;
    if (!row) throw new NotFoundError(message);
    const project = await this.access.project(caller, row.project_id, 'project.read').catch(() => {
      throw new NotFoundError(message);
    });
    if (permission !== 'project.read') await this.access.check(caller, project, permission, message);
    return row;
  }
}

export function toExperimentOut(row: ExperimentRow): ExperimentOut {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    tags: JSON.parse(row.tags) as string[],
    notes: row.notes,
    status: row.status,
    adapter: row.adapter,
    version_id: row.version_id,
    job_id: row.job_id,
    model_id: row.model_id,
    params: JSON.parse(row.params) as Record<string, unknown>,
    metrics: JSON.parse(row.metrics) as Record<string, number | null>,
    best_epoch: row.best_epoch,
    epoch: row.epoch,
    error: row.error,
    created_at: row.created_at,
    finished_at: row.finished_at,
    duration_s: row.duration_s,
  };
}

export function toExperimentDetail(row: ExperimentRow): ExperimentDetailOut {
  const extra = JSON.parse(row.extra) as { confusion?: number[][] | null; environment?: Record<string, unknown>; artifacts?: Record<string, string>; recipe?: Record<string, unknown> };
  return {
    ...toExperimentOut(row),
    history: JSON.parse(row.history) as Record<string, unknown>[],
    per_class: JSON.parse(row.per_class) as Record<string, unknown>[],
    confusion: extra.confusion ?? null,
    environment: extra.environment ?? {},
    artifacts: extra.artifacts ?? {},
    recipe: extra.recipe ?? {},
  };
}
