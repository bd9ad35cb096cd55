import { join } from 'node:path';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { apply, invert, type Affine } from '../../imaging/recipe/affine.js';
import { composeGeometry, type Step } from '../../imaging/recipe/index.js';
import { readEvaluationFile, type EvaluationFile, type ImageErrors } from '../../training/evaluation-file.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ExperimentRow, ExperimentsRepository } from './experiments.repository.js';
import type {
  ExperimentDetailOut,
  ExperimentErrorsOut,
  ExperimentErrorsQuery,
  ExperimentListQuery,
  ExperimentOut,
  ExperimentPatch,
  ImageErrorsOut,
  SplitEvaluationOut,
} from './experiments.schemas.js';

/** Experiments: list, detail, rename/tag/notes, compare. Visible to whoever can read the project. */
export class ExperimentsService {
  constructor(
    private readonly repository: ExperimentsRepository,
    private readonly access: ProjectAccess,
    private readonly scope: AssignmentScope,
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

  /**
   * `GET /api/experiments/{id}/errors`: the split's images ranked by the run's errors of one kind (all kinds when none),
   * each as the project image it was made from, with the run's kept detections mapped into that image's pixels.
   * Images whose source is gone, and for an annotator kept to their assignments the unassigned ones, are left out.
   */
  async errors(caller: Caller, id: number, query: ExperimentErrorsQuery): Promise<ExperimentErrorsOut> {
    const row = await this.visible(caller, id, 'project.read');
    const evaluation = await this.evaluationOf(row);
    const none = { experiment_id: id, split: query.split, kind: query.kind ?? null, total: 0, images: [] };
    const split = evaluation.splits[query.split];
    if (!split || row.version_id === null) return none;
    const project = await this.access.project(caller, row.project_id, 'project.read');
    const assignedTo = await this.scope.listingUser(caller, project, (await this.access.roleOf(caller, project))!);
    const allowed = assignedTo === null ? null : await this.repository.assignedImageIds(row.project_id, assignedTo);
    const sources = new Map((await this.repository.versionImageSources(row.version_id, row.project_id)).map((v) => [`images/${v.split}/${v.filename}`, v]));
    const count = (e: ImageErrors) => (query.kind === 'false_positive' ? e.false_positives : query.kind === 'false_negative' ? e.false_negatives
      : query.kind === 'confusion' ? e.confusions : e.false_positives + e.false_negatives + e.confusions);
    const ranked = split.images
      .flatMap((errors) => {
        const source = sources.get(errors.file);
        if (!source || source.image_id === null || count(errors) === 0 || (allowed && !allowed.has(source.image_id))) return [];
        return [{ errors, source: { ...source, image_id: source.image_id } }];
      })
      .sort((a, b) => count(b.errors) - count(a.errors) || a.source.id - b.source.id);
    const classIds = await this.repository.projectClassIds(row.project_id);
    return {
      ...none,
      total: ranked.length,
      images: ranked.slice(0, query.limit).map(({ errors, source }) => imageErrorsOut(errors, source, evaluation.class_names, classIds)),
    };
  }

  /** A trained model's per-class serving thresholds: its run's F1-maximising confidences (valid split, else test). */
  async f1Thresholds(experimentId: number): Promise<Record<string, number> | null> {
    const row = await this.repository.find(experimentId);
    const analysis = row ? (JSON.parse(row.extra) as { analysis?: Record<string, SplitEvaluationOut> | null }).analysis : null;
    const split = analysis?.valid ?? analysis?.test;
    if (!split) return null;
    const thresholds = Object.fromEntries(split.per_class.flatMap((c) => (c.conf_threshold === null ? [] : [[c.name, c.conf_threshold]])));
    return Object.keys(thresholds).length ? thresholds : null;
  }

  private async evaluationOf(row: ExperimentRow): Promise<EvaluationFile> {
    const file = (JSON.parse(row.extra) as { artifacts?: Record<string, string> }).artifacts?.evaluation;
    const evaluation = row.status === 'succeeded' && file && row.run_dir ? await readEvaluationFile(join(row.run_dir, file)) : null;
    if (!evaluation) throw new ConflictError(`Experiment ${row.id} has no per-image evaluation: finished versa-detect runs record one`);
    return evaluation;
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
  const extra = JSON.parse(row.extra) as {
    confusion?: number[][] | null; environment?: Record<string, unknown>; artifacts?: Record<string, string>; recipe?: Record<string, unknown>;
    analysis?: Record<string, SplitEvaluationOut> | null;
  };
  return {
    ...toExperimentOut(row),
    history: JSON.parse(row.history) as Record<string, unknown>[],
    per_class: JSON.parse(row.per_class) as Record<string, unknown>[],
    confusion: extra.confusion ?? null,
    environment: extra.environment ?? {},
    artifacts: extra.artifacts ?? {},
    recipe: extra.recipe ?? {},
    analysis: extra.analysis ?? null,
  };
}

/** What the run's evaluation file says of every split but the images, under the names the API uses, for the experiment. */
export function evaluationSummary(evaluation: EvaluationFile): Record<string, SplitEvaluationOut> {
  return Object.fromEntries(Object.entries(evaluation.splits).map(([name, split]) => [name, {
    per_class: split.per_class.map(({ class_index, ...rest }) => ({ class_id: class_index, ...rest })),
    confusion: split.confusion,
  }]));
}

function imageErrorsOut(
  errors: ImageErrors,
  source: { id: number; image_id: number; lineage: string; source_width: number | null; source_height: number | null },
  names: string[],
  classIds: Map<string, number>,
): ImageErrorsOut {
  const size = { width: source.source_width ?? 0, height: source.source_height ?? 0 };
  const toSource = versionToSource(JSON.parse(source.lineage) as Step[], size);
  return {
    image_id: source.image_id,
    version_image_id: source.id,
    false_positives: errors.false_positives,
    false_negatives: errors.false_negatives,
    confusions: errors.confusions,
    predictions: errors.predictions.map(([c, x, y, w, h, score]) => {
      const corners = [[x, y], [x + w, y + h], [x + w, y], [x, y + h]].map((p) => apply(toSource, p as [number, number]));
      const x1 = Math.max(0, Math.min(...corners.map((p) => p[0])));
      const y1 = Math.max(0, Math.min(...corners.map((p) => p[1])));
      const x2 = Math.min(size.width, Math.max(...corners.map((p) => p[0])));
      const y2 = Math.min(size.height, Math.max(...corners.map((p) => p[1])));
      const round = (v: number) => Math.round(v * 100) / 100;
      return {
        class_id: classIds.get(names[c]) ?? null,
        class_name: names[c] ?? String(c),
        confidence: score,
        bbox: { x: round(x1), y: round(y1), width: round(Math.max(0, x2 - x1)), height: round(Math.max(0, y2 - y1)) },
      };
    }),
  };
}

/** The map from a version image's pixels back to its source's (the inverse of the steps that made it). */
function versionToSource(steps: Step[], size: { width: number; height: number }): Affine {
  try {
    return invert(composeGeometry(steps, size).map);
  } catch {
    return { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
  }
}
