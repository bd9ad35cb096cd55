import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { assertKnownIds, checksOf, Findings, resolveParams, type CheckDefinition, type ParamValues } from './check-catalog.js';
import './catalog.js';
import { AnnotationColumns, DatasetSnapshot } from './dataset-snapshot.js';
import type { ImageFeaturesRepository } from './image-features.repository.js';
import type { ImageFeatureRecorder } from './image-features.service.js';
import type { PredictionSource } from './model-predictions.js';
import type { ProfileService } from './profile.service.js';
import type { QualityRepository } from './quality.repository.js';
import type { CheckResultOut, Modality, ProfileOut, QualityBody, QualityReportOut } from './quality.schemas.js';

/** Annotations read per query while a snapshot loads. */
const ANNOTATION_CHUNK = 50_000;

/** The modality of a project's records; image projects are all there is until samples land. */
export const projectModality = (_projectType: string): Modality => 'image';

export class QualityService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly repository: QualityRepository,
    private readonly features: ImageFeaturesRepository,
    private readonly recorder: ImageFeatureRecorder,
    private readonly profiles: ProfileService,
    /** The detector behind the model-assisted checks (absent: they are skipped). */
    private readonly predictions?: PredictionSource,
  ) {}

  async profile(caller: Caller, projectId: number): Promise<ProfileOut> {
    const project = await this.access.project(caller, projectId, 'project.read');
    return this.profiles.profile(projectId, projectModality(project.project_type));
  }

  async report(caller: Caller, projectId: number, body: QualityBody = {}): Promise<QualityReportOut> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const available = checksOf(projectModality(project.project_type));
    const ids = available.map((c) => c.id);
    if (body.checks) assertKnownIds(body.checks, ids, ['body', 'checks'], 'check');
    assertKnownIds(Object.keys(body.params ?? {}), ids, ['body', 'params'], 'check');
    const chosen = body.checks ? available.filter((c) => body.checks!.includes(c.id)) : available;
    const params = new Map(chosen.map((c) => [c.id, resolveParams(c.params, body.params?.[c.id] as Record<string, unknown> | undefined, ['body', 'params', c.id])]));

    const { snapshot, computed } = await this.snapshot(projectId);
    // Model-assisted checks run a detector over every image: only when asked for by id.
    const assisted = chosen.filter((c) => c.requires === 'detector' && body.checks?.includes(c.id));
    let skipped: string | undefined = 'Runs only when requested by id (it runs a detector over every image)';
    if (assisted.length > 0) skipped = await this.predict(projectId, snapshot, assisted.map((c) => params.get(c.id)!));
    const checks: CheckResultOut[] = [];
    const affected = new Set<number>();
    for (const check of chosen) {
      if (check.requires === 'detector' && skipped !== undefined) {
        checks.push({ id: check.id, title: check.title, severity: check.severity, count: 0, message: skipped, items: [], image_ids: [], skipped });
        continue;
      }
      const result = await this.runCheck(check, snapshot, params.get(check.id)!);
      checks.push(result);
      if (check.severity !== 'info') for (const id of result.image_ids ?? []) affected.add(id);
    }
    const total = snapshot.images.length;
    return {
      project_id: projectId,
      generated_at: new Date().toISOString(),
      score: total === 0 ? 0 : Math.round(100 * (1 - affected.size / total)),
      features: { computed },
      checks,
    };
  }

  /** Sets the snapshot's predictions; returns why the model-assisted checks are skipped, or undefined. */
  private async predict(projectId: number, snapshot: DatasetSnapshot, params: ParamValues[]): Promise<string | undefined> {
    if (!this.predictions) return 'No detector runtime in this process';
    const modelId = params.map((p) => p.model_id as number).find((id) => id > 0);
    const model = await this.predictions.detector(projectId, modelId);
    if (!model) return modelId ? `Model ${modelId} is not a detector of this project` : 'The project has no registered detector';
    const confidence = Math.min(...params.map((p) => p.min_confidence as number));
    const readable = snapshot.images.map((image, i) => ({ image, i })).filter(({ image }) => image.readable !== 0);
    const predicted = await this.predictions.predict(model, readable.map(({ image }) => image), confidence);
    const byImage = snapshot.images.map(() => [] as (typeof predicted)[number]);
    readable.forEach(({ i }, k) => (byImage[i] = predicted[k]));
    snapshot.predictions = { model: model.name, byImage };
    return undefined;
  }

  /** Loads what the checks and the cleaning planner read, measuring images the feature cache lacks first. */
  async snapshot(projectId: number): Promise<{ snapshot: DatasetSnapshot; computed: number }> {
    const computed = await this.recorder.fillMissing(projectId);
    const [images, classes] = await Promise.all([this.features.measured(projectId), this.repository.classNames(projectId)]);
    const index = new Map<number, number>();
    images.forEach((image, i) => index.set(image.id, i));
    const annotations = new AnnotationColumns(images.reduce((sum, i) => sum + Number(i.annotation_count), 0));
    for (let after = 0; ; ) {
      const rows = await this.repository.annotationChunk(projectId, after, ANNOTATION_CHUNK);
      for (const row of rows) {
        const i = index.get(row.image_id);
        if (i !== undefined) annotations.push(row, i);
      }
      if (rows.length < ANNOTATION_CHUNK) break;
      after = rows[rows.length - 1].id;
    }
    return { snapshot: new DatasetSnapshot(projectId, images, annotations, classes), computed };
  }

  private async runCheck(check: CheckDefinition<DatasetSnapshot>, snapshot: DatasetSnapshot, params: ParamValues): Promise<CheckResultOut> {
    const findings = new Findings();
    await check.run(snapshot, params, findings);
    return {
      id: check.id,
      title: check.title,
      severity: check.severity,
      count: findings.count,
      message: check.message(findings.count, params),
      items: findings.items(),
      image_ids: [...findings.imageIds],
    };
  }
}
