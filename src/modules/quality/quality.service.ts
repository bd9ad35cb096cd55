import type { Caller } from '../../access/caller.js';
import type { ProjectAccess, ProjectRecord } from '../../access/project-access.js';
import type { SampleModality } from '../../db/schema.js';
import { SAMPLE_MODALITIES, type Modality } from '../profile/profile.schemas.js';
import type { SampleDataRepository } from '../profile/sample-data.repository.js';
import { assertKnownIds, checksOf, Findings, resolveParams, type CheckDefinition, type ParamValues } from './check-catalog.logic.js';
import './catalog.logic.js';
import { AnnotationColumns, DatasetSnapshot } from './dataset-snapshot.logic.js';
import type { ImageFeaturesRepository } from './image-features.repository.js';
import type { ImageFeatureRecorder } from './image-features.service.js';
import type { PredictionSource } from './model-predictions.adapter.js';
import type { QualityRepository } from './quality.repository.js';
import type { CheckResultOut, QualityBody, QualityReportOut } from './quality.schemas.js';
import { SampleSnapshotBuilder, type SampleSnapshot } from './sample-snapshot.logic.js';

/** Annotations read per query while a snapshot loads. */
const ANNOTATION_CHUNK = 50_000;
/** Samples read per query while a sample snapshot loads. */
const SAMPLE_CHUNK = 5000;

/** What a project holds: its image count and its samples per modality. */
interface ProjectContent {
  images: number;
  samples: Map<SampleModality, number>;
}

/**
 * The modalities whose checks apply: the images' when the project has images (or nothing at all, as before samples
 * existed), and each sample modality it holds.
 */
function applicableModalities(content: ProjectContent): Modality[] {
  const out: Modality[] = content.images > 0 || content.samples.size === 0 ? ['image'] : [];
  for (const m of SAMPLE_MODALITIES) if ((content.samples.get(m) ?? 0) > 0) out.push(m);
  return out;
}

export class QualityService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly repository: QualityRepository,
    private readonly features: ImageFeaturesRepository,
    private readonly recorder: ImageFeatureRecorder,
    private readonly samples: SampleDataRepository,
    /** The detector behind the model-assisted checks (absent: they are skipped). */
    private readonly predictions?: PredictionSource,
  ) {}

  /** The project's counters say whether it holds images and samples; the samples' modalities take one aggregate. */
  private async content(project: ProjectRecord): Promise<ProjectContent> {
    const samples = project.sample_count > 0 ? await this.samples.modalityCounts(project.id) : new Map<SampleModality, number>();
    return { images: project.image_count, samples };
  }

  /**
   * The report describes every image and sample: an annotator kept to their assignments gets 403. `scope.imageIds`
   * (a pipeline's selection) keeps it to those images: the image checks read only them, and no sample is checked.
   */
  async report(caller: Caller, projectId: number, body: QualityBody = {}, scope: { imageIds?: readonly number[] } = {}): Promise<QualityReportOut> {
    const project = await this.access.wholeProject(caller, projectId, 'project.read');
    const content = await this.content(project);
    const available = applicableModalities(content).flatMap((m) => checksOf(m));
    const ids = available.map((c) => c.id);
    if (body.checks) assertKnownIds(body.checks, ids, ['body', 'checks'], 'check');
    assertKnownIds(Object.keys(body.params ?? {}), ids, ['body', 'params'], 'check');
    const chosen = body.checks ? available.filter((c) => body.checks!.includes(c.id)) : available;
    const params = new Map(chosen.map((c) => [c.id, resolveParams(c.params, body.params?.[c.id] as Record<string, unknown> | undefined, ['body', 'params', c.id])]));

    const checks: CheckResultOut[] = [];
    const affectedImages = new Set<number>();
    const affectedSamples = new Set<number>();
    const record = (check: CheckDefinition<unknown>, result: CheckResultOut) => {
      checks.push(result);
      if (check.severity === 'info') return;
      for (const id of result.image_ids ?? []) affectedImages.add(id);
      for (const id of result.sample_ids ?? []) affectedSamples.add(id);
    };

    let images = scope.imageIds ? scope.imageIds.length : content.images;
    let computed = 0;
    const imageChecks = chosen.filter((c) => c.modality === 'image');
    if (imageChecks.length > 0) {
      const loaded = await this.snapshot(projectId, scope.imageIds);
      const snapshot = loaded.snapshot;
      computed = loaded.computed;
      images = snapshot.images.length;
      // Model-assisted checks run a detector over every image: only when asked for by id.
      const assisted = imageChecks.filter((c) => c.requires === 'detector' && body.checks?.includes(c.id));
      let skipped: string | undefined = 'Runs only when requested by id (it runs a detector over every image)';
      if (assisted.length > 0) skipped = await this.predict(projectId, snapshot, assisted.map((c) => params.get(c.id)!));
      for (const check of imageChecks) {
        if (check.requires === 'detector' && skipped !== undefined) {
          checks.push({ id: check.id, title: check.title, modality: check.modality, severity: check.severity, count: 0, message: skipped, items: [], image_ids: [], sample_ids: [], skipped });
          continue;
        }
        record(check, await this.runCheck(check, snapshot, params.get(check.id)!));
      }
    }
    for (const modality of scope.imageIds ? [] : SAMPLE_MODALITIES) {
      const modalityChecks = chosen.filter((c) => c.modality === modality);
      if (modalityChecks.length === 0) continue;
      const snapshot = await this.sampleSnapshot(projectId, modality);
      for (const check of modalityChecks) record(check, await this.runCheck(check, snapshot, params.get(check.id)!));
    }
    const total = images + (scope.imageIds ? 0 : [...content.samples.values()].reduce((a, b) => a + b, 0));
    return {
      project_id: projectId,
      generated_at: new Date().toISOString(),
      score: total === 0 ? 0 : Math.round(100 * (1 - (affectedImages.size + affectedSamples.size) / total)),
      features: { computed },
      checks,
    };
  }

  /** One modality's samples reduced to what its checks read, loaded in keyset chunks. */
  async sampleSnapshot(projectId: number, modality: SampleModality): Promise<SampleSnapshot> {
    const builder = new SampleSnapshotBuilder(projectId, modality, modality === 'tabular' ? await this.samples.tabularLayout(projectId) : undefined);
    for (let after = 0; ; ) {
      const rows = await this.samples.chunk(projectId, modality, after, SAMPLE_CHUNK);
      for (const row of rows) builder.add(row);
      if (rows.length < SAMPLE_CHUNK) break;
      after = rows[rows.length - 1].id;
    }
    return builder.finish();
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
  async snapshot(projectId: number, imageIds?: readonly number[]): Promise<{ snapshot: DatasetSnapshot; computed: number }> {
    const computed = await this.recorder.fillMissing(projectId);
    const [measured, classes] = await Promise.all([this.features.measured(projectId), this.repository.classes(projectId)]);
    const kept = imageIds && new Set(imageIds);
    const images = kept ? measured.filter((image) => kept.has(image.id)) : measured;
    const index = new Map<number, number>();
    images.forEach((image, i) => index.set(image.id, i));
    const annotations = new AnnotationColumns(images.reduce((sum, i) => sum + Number(i.annotation_count), 0));
    for (let after = 0; ; ) {
      const rows = await this.repository.annotationChunk(projectId, after, ANNOTATION_CHUNK);
      for (const row of rows) {
        const i = index.get(row[1]);
        if (i !== undefined) annotations.push(row, i);
      }
      if (rows.length < ANNOTATION_CHUNK) break;
      after = rows[rows.length - 1][0];
    }
    return { snapshot: new DatasetSnapshot(projectId, images, annotations, classes.names, classes.skeletons), computed };
  }

  private async runCheck<Context>(check: CheckDefinition<Context>, context: Context, params: ParamValues): Promise<CheckResultOut> {
    const findings = new Findings();
    await check.run(context, params, findings);
    return {
      id: check.id,
      title: check.title,
      modality: check.modality,
      severity: check.severity,
      count: findings.count,
      message: check.message(findings.count, params),
      items: findings.items(),
      image_ids: [...findings.imageIds],
      sample_ids: [...findings.sampleIds],
    };
  }
}
