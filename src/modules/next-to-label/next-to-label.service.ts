import { randomInt } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { UnreadableImageError } from '../../inference/errors.js';
import { ConflictError, ValidationError } from '../../http/errors.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import { toImageOut, untouchedImageOut } from '../images/images.schemas.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import { IMAGE_MODEL_TASKS, type ModelRow } from '../models/models.schemas.js';
import { kCentreGreedy } from './k-centre.logic.js';
import type { NextToLabelOut, NextToLabelQuery, Strategy } from './next-to-label.schemas.js';
import type { NextToLabelRepository, PoolImage } from './next-to-label.repository.js';
import type { PredictionCache } from './prediction-cache.logic.js';
import { classifierPrediction, classWeights, detectorPrediction, imageUncertainty, type ImagePrediction } from './uncertainty.logic.js';
import { classKey } from '../classes/class-key.logic.js';
import { forEachConcurrently } from '../../lib/batches.js';

/** Detections down to this confidence count towards an image's uncertainty (see uncertainty.logic.ts). */
const CANDIDATE_CONFIDENCE = 0.05;
const CANDIDATE_IOU = 0.5;

/** The unlabelled images most worth labelling next, by the model's uncertainty, by diversity, or at random. */
export class NextToLabelService {
  constructor(
    private readonly repository: NextToLabelRepository,
    private readonly models: ModelsRepository,
    private readonly runtime: ModelRuntime,
    private readonly blobs: BlobStore,
    private readonly access: ProjectAccess,
    private readonly scope: AssignmentScope,
    private readonly cache: PredictionCache,
  ) {}

  async rank(caller: Caller, projectId: number, query: NextToLabelQuery): Promise<NextToLabelOut> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const role = (await this.access.roleOf(caller, project))!;
    const assignedTo = await this.scope.listingUser(caller, project, role);
    const strategy = query.strategy;
    // Model rankings sample their pool with seed 0 when none is given, so their pages agree without one.
    const seed = query.seed ?? (strategy === 'random' ? randomInt(2_147_483_647) : 0);
    const model = strategy === 'random' ? null : await this.model(caller, projectId, query.model_id);
    const hideGroundTruth = await this.scope.hidesGroundTruth(caller, project, role);
    const unlabelled = await this.repository.images(projectId, false, assignedTo, hideGroundTruth);
    const end = query.offset + query.limit;

    let ranked: { image: PoolImage; score: number }[];
    let candidates = unlabelled.length;
    let predicted = 0;
    let weights: Record<string, number> | null = null;
    if (!model) {
      ranked = unlabelled.map((image) => ({ image, score: draw(seed, image.id) })).sort(byScore);
    } else {
      const pool = sample(unlabelled, query.pool, seed);
      candidates = pool.length;
      const run = await this.predict(model, pool);
      predicted = run.predicted;
      const scored = pool.flatMap((image) => (run.predictions.has(image.id) ? [{ image, prediction: run.predictions.get(image.id)! }] : []));
      const labelledCentres = async () => {
        const labelled = sample(await this.repository.images(projectId, true, assignedTo, hideGroundTruth), query.pool, seed);
        const centres = await this.predict(model, labelled);
        predicted += centres.predicted;
        return [...centres.predictions.values()].map((p) => p.embedding);
      };
      if (strategy === 'diversity') {
        const picks = kCentreGreedy(scored.map((s) => s.prediction.embedding), await labelledCentres(), end);
        ranked = picks.map((p) => ({ image: scored[p.index].image, score: p.distance }));
      } else {
        const measure = strategy as Exclude<Strategy, 'diversity' | 'random'>;
        let byClass: number[] | undefined;
        if (query.balance === 'classes') {
          const counts = await this.repository.classCounts(projectId, assignedTo, hideGroundTruth);
          const byKey = new Map([...counts].map(([name, n]) => [classKey(name), n]));
          const names = modelClasses(model);
          byClass = classWeights(names.map((name) => byKey.get(classKey(name)) ?? 0));
          weights = Object.fromEntries(names.map((name, k) => [name, byClass![k]]));
        }
        // Ties (e.g. images with nothing found) keep id order, so pages never overlap.
        const unsure = scored.map((s) => ({ ...s, score: imageUncertainty(s.prediction, measure, query.aggregate, byClass) })).sort(byScore);
        ranked = query.spread
          ? kCentreGreedy(unsure.map((s) => s.prediction.embedding), await labelledCentres(), end, unsure.map((s) => s.score)).map((p) => unsure[p.index])
          : unsure;
      }
    }

    const page = ranked.slice(query.offset, end);
    const rows = await this.repository.imageRows(page.map((r) => r.image.id));
    const hidden = await this.scope.hiddenAmong(caller, project, role, [...rows.keys()]);
    return {
      strategy,
      aggregate: query.aggregate,
      balance: query.balance,
      spread: query.spread && model !== null && strategy !== 'diversity',
      class_weights: weights,
      model: model && { id: model.id, name: model.name, lifecycle: model.lifecycle },
      seed,
      unlabelled: unlabelled.length,
      candidates,
      predicted,
      items: page.flatMap((r, i) => {
        const row = rows.get(r.image.id);
        return row ? [{ rank: query.offset + i + 1, score: r.score, image: hidden.has(row.id) ? untouchedImageOut(row) : toImageOut(row) }] : [];
      }),
    };
  }

  /** The model named by `model_id` (any the caller may read), else the project's production model. */
  private async model(caller: Caller, projectId: number, modelId: number | undefined): Promise<ModelRow> {
    if (modelId === undefined) {
      const production = await this.models.imageModelInProduction(projectId);
      if (!production) {
        throw new ConflictError(`Project ${projectId} has no production model to rank images with: promote one (PATCH /api/models/{id}/lifecycle), name one in model_id, or use strategy=random`);
      }
      return production;
    }
    const notFound = () => ValidationError.at(['query', 'model_id'], `Model ${modelId} not found`);
    const model = await this.models.find(modelId);
    if (!model) throw notFound();
    await this.access.check(caller, { id: model.project_id, owner_id: model.owner_id }, 'project.read', '').catch(() => {
      throw notFound();
    });
    if (!(IMAGE_MODEL_TASKS as readonly string[]).includes(model.task)) {
      throw ValidationError.at(['query', 'model_id'], `Model '${model.name}' is a ${model.task} model; ranking needs a detect, segment or classify model`);
    }
    return model;
  }

  /** The model's view of each image, from the cache or by running it (images that cannot be decoded are left out). */
  private async predict(model: ModelRow, images: PoolImage[]): Promise<{ predictions: Map<number, ImagePrediction>; predicted: number }> {
    const predictions = new Map<number, ImagePrediction>();
    const missing: PoolImage[] = [];
    for (const image of images) {
      const hit = this.cache.get(model.sha256, image.sha256);
      if (hit) predictions.set(image.id, hit);
      else missing.push(image);
    }
    if (missing.length === 0) return { predictions, predicted: 0 };
    const names = modelClasses(model);
    const view = model.task === 'classify'
      ? await this.runtime.classifier(model, true).then((classifier) => async (bytes: Uint8Array) => classifierPrediction(await classifier.distribution(bytes)))
      : await this.runtime.detector(model, true).then((detector) => async (bytes: Uint8Array) => {
        const result = await detector.detect(bytes, { confidence: CANDIDATE_CONFIDENCE, iou: CANDIDATE_IOU, classScores: true });
        return detectorPrediction(result.detections, result, detector.shape.names?.length ?? names.length);
      });
    await forEachConcurrently(missing, this.runtime.batchInFlight, async (image) => {
      try {
        const prediction = await view(await this.blobs.get(image.blob_key));
        this.cache.set(model.sha256, image.sha256, prediction);
        predictions.set(image.id, prediction);
      } catch (error) {
        if (!(error instanceof UnreadableImageError)) throw error;
      }
    });
    return { predictions, predicted: missing.length };
  }
}

const modelClasses = (model: ModelRow) => JSON.parse(model.class_names) as string[];

const byScore = (a: { image: PoolImage; score: number }, b: { image: PoolImage; score: number }) => b.score - a.score || a.image.id - b.image.id;

/** At most `size` images, those with the highest draws for the seed: the same sample for the same seed and images. */
function sample(images: PoolImage[], size: number, seed: number): PoolImage[] {
  if (images.length <= size) return images;
  return images.map((image) => ({ image, score: draw(seed, image.id) })).sort(byScore).slice(0, size).map((s) => s.image).sort((a, b) => a.id - b.id);
}

/** A uniform number in [0, 1) that depends only on the seed and the image id (mulberry32 of the two mixed). */
export function draw(seed: number, imageId: number): number {
  let t = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(imageId, 0xc2b2ae35)) >>> 0;
  t = (t + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
