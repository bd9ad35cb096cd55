/**
 * Predictions of a registered detector for the model-assisted checks, through the same runtime and batch pool as
 * batch auto-annotate: the same detector session, `batchInFlight` images at a time, each image's file decoded once.
 * So the checks cost one auto-annotate pass over the images, and nothing is written.
 */
import type { BlobStore } from '../../storage/blob-store.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { ModelRow } from '../models/models.schemas.js';
import { mapConcurrently } from '../../lib/batches.js';

export interface Prediction {
  className: string;
  confidence: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PredictionSource {
  /** The detector to use: the given model of the project, else its default detect model; null when it has none. */
  detector(projectId: number, modelId?: number): Promise<ModelRow | null>;
  /** Predictions for each image, in the order given. */
  predict(model: ModelRow, images: readonly { blob_key: string }[], confidence: number): Promise<Prediction[][]>;
}

export class DetectorPredictions implements PredictionSource {
  constructor(
    private readonly models: ModelsRepository,
    private readonly runtime: ModelRuntime,
    private readonly blobs: BlobStore,
  ) {}

  async detector(projectId: number, modelId?: number): Promise<ModelRow | null> {
    if (modelId !== undefined) {
      const model = await this.models.find(modelId);
      return model && model.project_id === projectId && (model.task === 'detect' || model.task === 'segment') ? model : null;
    }
    return (await this.models.findDefault(projectId, 'detect')) ?? (await this.models.findDefault(projectId, 'segment')) ?? null;
  }

  async predict(model: ModelRow, images: readonly { blob_key: string }[], confidence: number): Promise<Prediction[][]> {
    const detector = await this.runtime.detector(model, true);
    return mapConcurrently(images, this.runtime.batchInFlight, async (image) => {
      const result = await detector.detect(await this.blobs.get(image.blob_key), { confidence, iou: 0.45 });
      return result.detections.map((d) => ({
        className: d.className ?? `class_${d.classId}`,
        confidence: d.confidence,
        x: d.box.x,
        y: d.box.y,
        w: d.box.width,
        h: d.box.height,
      }));
    });
  }
}
