import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ImageClassifier } from '../../inference/classifier.js';
import { EmbeddingCache } from '../../inference/embedding-cache.js';
import { UnsupportedModelError } from '../../inference/errors.js';
import { onnxRuntimeInfo } from '../../inference/runtime-info.js';
import { SamPredictor } from '../../inference/sam.js';
import { batchPoolShape, SessionPool } from '../../inference/session-pool.js';
import type { ModelInfo } from '../../inference/tensor-data.js';
import { YoloDetector } from '../../inference/yolo-detector.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { ModelRow } from './models.schemas.js';

/** Memory for SAM embeddings held in process: 64 SAM ViT embeddings (4 MiB each). */
const EMBEDDING_MEMORY_BYTES = 256 * 1024 * 1024;

/**
 * The process's inference machinery: two session pools and the SAM embedding cache (memory + DATA_DIR/embeddings).
 * `pool` runs one request at a time with every core (quickest answer: SAM clicks, a detector on the image in the
 * editor); `batchPool` runs a lane per core (most images per second: auto-annotate over many images). Its workers
 * and sessions are made only once a batch runs. Sessions are keyed by the weights' hash, so the same file
 * registered in two projects loads once per pool.
 */
export class ModelRuntime {
  readonly pool = new SessionPool({ intraOpThreads: availableParallelism() });
  readonly batchPool = new SessionPool(batchPoolShape());
  readonly embeddings: EmbeddingCache;
  private readonly detectors = new Map<string, Promise<YoloDetector>>();
  private readonly predictors = new Map<string, Promise<SamPredictor>>();
  private readonly classifiers = new Map<string, Promise<ImageClassifier>>();

  constructor(
    private readonly blobs: BlobStore,
    dataDir: string,
  ) {
    this.embeddings = new EmbeddingCache({ maxBytes: EMBEDDING_MEMORY_BYTES, directory: join(dataDir, 'embeddings') });
  }

  /** Loads a weights file once to check it is a usable ONNX model and read its inputs, outputs and metadata. */
  async inspect(path: string, sha256: string): Promise<ModelInfo> {
    const id = `inspect-${sha256}`;
    try {
      return await this.pool.load(id, path);
    } finally {
      await this.pool.unload(id).catch(() => undefined);
    }
  }

  /** Images a batch keeps in flight: two per lane, so each lane has its next image decoded when a run ends. */
  get batchInFlight(): number {
    return 2 * this.batchPool.laneCount;
  }

  /** A loaded detector, in the pool for single images or (`batch`) the one for many. */
  detector(model: ModelRow, batch = false): Promise<YoloDetector> {
    assertRunnable(model);
    const key = `${sessionId(model)}:${batch ? 'batch' : 'single'}:${model.task}:${model.class_names}`;
    let detector = this.detectors.get(key);
    if (!detector) {
      const names = JSON.parse(model.class_names) as string[];
      const pool = batch ? this.batchPool : this.pool;
      detector = this.source(model).then((source) => YoloDetector.load(pool, sessionId(model), source, names.length > 0 ? names : undefined, model.task));
      detector.catch(() => this.detectors.delete(key));
      this.detectors.set(key, detector);
    }
    return detector;
  }

  /** A loaded image classifier (task `classify`), in the pool for single images or (`batch`) the one for many. */
  classifier(model: ModelRow, batch = false): Promise<ImageClassifier> {
    assertRunnable(model);
    const key = `${sessionId(model)}:${batch ? 'batch' : 'single'}:${model.class_names}`;
    let classifier = this.classifiers.get(key);
    if (!classifier) {
      const names = JSON.parse(model.class_names) as string[];
      const pool = batch ? this.batchPool : this.pool;
      classifier = this.source(model).then((source) => ImageClassifier.load(pool, sessionId(model), source, names.length > 0 ? names : undefined));
      classifier.catch(() => this.classifiers.delete(key));
      this.classifiers.set(key, classifier);
    }
    return classifier;
  }

  sam(encoder: ModelRow, decoder: ModelRow): Promise<SamPredictor> {
    assertRunnable(encoder);
    assertRunnable(decoder);
    const key = `${encoder.sha256}:${decoder.sha256}`;
    let predictor = this.predictors.get(key);
    if (!predictor) {
      predictor = Promise.all([this.source(encoder), this.source(decoder)]).then(([encoderSource, decoderSource]) =>
        SamPredictor.load(this.pool, this.embeddings, {
          encoderId: sessionId(encoder),
          encoderSource,
          decoderId: sessionId(decoder),
          decoderSource,
        }),
      );
      predictor.catch(() => this.predictors.delete(key));
      this.predictors.set(key, predictor);
    }
    return predictor;
  }

  /** Drops a deleted model's session and embeddings (when no other registration shares its weights). */
  async forget(model: ModelRow): Promise<void> {
    const id = sessionId(model);
    for (const key of [...this.detectors.keys()]) if (key.startsWith(`${id}:`)) this.detectors.delete(key);
    for (const key of [...this.classifiers.keys()]) if (key.startsWith(`${id}:`)) this.classifiers.delete(key);
    for (const key of [...this.predictors.keys()]) if (key.includes(model.sha256)) this.predictors.delete(key);
    await Promise.all([this.pool.unload(id), this.batchPool.unload(id)]);
    await this.embeddings.forgetModel(id);
  }

  device() {
    const runtime = onnxRuntimeInfo();
    return {
      // The inference worker creates CPU sessions; a CUDA build of onnxruntime is not what this package ships.
      default_device: 'cpu' as const,
      cuda_available: runtime.providers.some((b) => b.name === 'cuda' && b.bundled),
      execution_providers: runtime.providers,
      inference_threads: this.pool.intraOpThreads,
      batch_lanes: this.batchPool.laneCount,
      cpu_count: availableParallelism(),
      onnxruntime_version: runtime.version,
    };
  }

  close(): Promise<void> {
    this.detectors.clear();
    this.predictors.clear();
    return Promise.all([this.pool.close(), this.batchPool.close()]).then(() => undefined);
  }

  private async source(model: ModelRow): Promise<string | Uint8Array> {
    if (model.path) return model.path;
    return new Uint8Array(await this.blobs.get(model.blob_key!));
  }
}

/** The session (and embedding cache) key of a model: its weights' hash, so identical files share one session. */
export function sessionId(model: Pick<ModelRow, 'sha256'>): string {
  return `m-${model.sha256.slice(0, 40)}`;
}

/** Only ONNX files are ever loaded: pickled PyTorch weights could run code, so they are never opened. */
export function assertRunnable(model: ModelRow): void {
  if (model.format !== 'onnx') {
    throw new UnsupportedModelError(
      `Model '${model.name}' is a ${model.format === 'pt' ? 'PyTorch .pt' : model.format} file, which Versa never loads; export it to ONNX (e.g. \`yolo export model=${model.format === 'pt' ? 'best.pt' : 'weights'} format=onnx\`) and register the .onnx file`,
    );
  }
}
