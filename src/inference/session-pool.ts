import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InferenceOverloadedError, UnsupportedModelError } from './errors.js';
import { resizeForInput, type LetterboxOptions, type LetterboxTransform } from './letterbox.js';
import type { SamMask, SamMaskSpec } from './sam-mask.js';
import { RESIDENT_FEEDS, type ImageTensorSpec, type WorkerRequest, type WorkerResponse, type WorkerSettings } from './session-protocol.js';
import type { ModelInfo, TensorData } from './tensor-data.js';
import type { YoloDecodeOptions, YoloDetection } from './yolo-decode.js';

export interface SessionPoolOptions {
  /**
   * Worker threads, each with its own session of every loaded model, running one request at a time: the pool hands
   * each request to the lane with the fewest outstanding. One lane with every core is quickest for a single image;
   * a lane per core is quickest for many (see `batchPoolShape`).
   */
  lanes?: number;
  /** Threads onnxruntime uses inside one run, per lane; defaults to every core. */
  intraOpThreads?: number;
  /** Runs accepted at once (the one running plus those waiting); one more is refused as overload. */
  maxPending?: number;
  /** The Retry-After given with an overload refusal. */
  retryAfterSeconds?: number;
}

export interface RunOptions {
  /** Output names to compute; all outputs when absent. */
  outputNames?: string[];
  /**
   * Hand the feeds' buffers to the worker instead of copying them (fast, but the caller's arrays become empty).
   * Leave it off for tensors the caller keeps, such as a cached embedding.
   */
  transfer?: boolean;
}

/** How an encoded image becomes a model's input of `width × height` pixels (see ImageTensorSpec for the layouts). */
export interface ImageInput extends ImageTensorSpec, LetterboxOptions {
  width: number;
  height: number;
}

/**
 * The shape of a pool for throughput (many images of a job): a lane per core, up to four lanes with the cores
 * shared out between them. Each lane then decodes its next image on its own core while the others run, instead of
 * one two-threaded run stalling at every layer's barrier while a decode holds a core. On this 2-core machine the
 * YOLOv8n-sized bench model runs at the same images/s bare either way (1 × 2 threads or 2 × 1), but end to end two
 * single-threaded lanes lose far less to pre- and post-processing (bench/inference.ts).
 */
export function batchPoolShape(cores = availableParallelism()): Required<Pick<SessionPoolOptions, 'lanes' | 'intraOpThreads' | 'maxPending'>> {
  const lanes = Math.min(4, cores);
  // Room for a job's two images per lane in flight, and as many again from other callers.
  return { lanes, intraOpThreads: Math.max(1, Math.floor(cores / lanes)), maxPending: 4 * lanes };
}

/** An error the worker reported for one request, as opposed to the worker itself failing. */
class WorkerReportedError extends Error {}

interface Waiter {
  resolve: (response: WorkerResponse) => void;
  reject: (error: Error) => void;
}

/**
 * Loads each ONNX model once per lane and runs it on the lanes' worker threads, so the event loop never waits on a
 * model. Runs are accepted up to `maxPending`; beyond that `run` throws InferenceOverloadedError (503 +
 * Retry-After) at once rather than letting latency grow without bound.
 */
export class SessionPool {
  readonly intraOpThreads: number;
  private readonly maxPending: number;
  private readonly retryAfterSeconds: number;
  private readonly lanes: Lane[];
  private readonly models = new Map<string, Promise<ModelInfo>>();
  private runs = 0;

  constructor(options: SessionPoolOptions = {}) {
    this.intraOpThreads = options.intraOpThreads ?? availableParallelism();
    this.maxPending = options.maxPending ?? 8;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 2;
    this.lanes = Array.from({ length: Math.max(1, options.lanes ?? 1) }, () => new Lane({ intraOpThreads: this.intraOpThreads }, () => this.laneLost()));
  }

  get laneCount(): number {
    return this.lanes.length;
  }

  /** Runs accepted and not yet answered. */
  get pending(): number {
    return this.runs;
  }

  /** Requests each lane has outstanding (loads included), for monitoring and tests. */
  laneLoad(): number[] {
    return this.lanes.map((lane) => lane.outstanding);
  }

  isLoaded(modelId: string): boolean {
    return this.models.has(modelId);
  }

  /** Loads a model from a file path or its bytes, once per id; later calls return the same description. */
  load(modelId: string, source: string | Uint8Array): Promise<ModelInfo> {
    const existing = this.models.get(modelId);
    if (existing) return existing;
    // A path is read by each lane; bytes are copied to each (the caller's array stays intact).
    const loading = Promise.all(this.lanes.map((lane) => lane.request({ kind: 'load', id: 0, modelId, source }, []))).then(
      ([response]) => (response.ok && response.info) || Promise.reject(new Error('the inference worker sent no model description')),
      (error: Error) => {
        this.models.delete(modelId);
        // The worker's own refusal (unreadable file, not ONNX, unsupported ops) is the model's fault; a dead worker is not.
        throw error instanceof WorkerReportedError ? new UnsupportedModelError(`Model ${modelId} could not be loaded: ${error.message}`) : error;
      },
    );
    this.models.set(modelId, loading);
    return loading;
  }

  async run(modelId: string, feeds: Record<string, TensorData>, options: RunOptions = {}): Promise<Record<string, TensorData>> {
    return this.admit(modelId, async () => {
      const transfer = options.transfer ? [...new Set(Object.values(feeds).map((t) => t.data.buffer as ArrayBuffer))] : [];
      const response = await this.idleLane().request({ kind: 'run', id: 0, modelId, feeds, outputNames: options.outputNames }, transfer);
      return (response.ok && response.outputs) || {};
    });
  }

  /**
   * Runs a SAM decoder and answers the best mask, made on the worker. `embedding` is a large feed that repeats
   * between calls (one image, many clicks): the worker keeps it under `embedding.key`, so it crosses once, not per click.
   */
  async samMask(
    modelId: string,
    feeds: Record<string, TensorData>,
    embedding: { name: string; key: string; data: TensorData },
    spec: SamMaskSpec,
  ): Promise<SamMask> {
    return this.admit(modelId, async () => {
      // The lane that already holds the embedding, if any; else the least busy one.
      const lane = this.lanes.find((l) => l.resident.has(embedding.key)) ?? this.idleLane();
      const sent: Record<string, TensorData | { resident: string }> = { ...feeds };
      let keep: Record<string, string> | undefined;
      if (lane.resident.has(embedding.key)) {
        sent[embedding.name] = { resident: embedding.key };
        lane.resident.delete(embedding.key);
      } else {
        sent[embedding.name] = embedding.data;
        keep = { [embedding.name]: embedding.key };
      }
      lane.resident.add(embedding.key);
      if (lane.resident.size > RESIDENT_FEEDS) lane.resident.delete(lane.resident.values().next().value!);
      try {
        const response = await lane.request({ kind: 'run', id: 0, modelId, feeds: sent, keep, samMask: spec }, []);
        return (response.ok && response.mask) || Promise.reject(new Error('the inference worker sent no mask'));
      } catch (error) {
        // Whatever went wrong, the next call sends the embedding again rather than trusting the worker still has it.
        lane.resident.delete(embedding.key);
        throw error;
      }
    });
  }

  /**
   * Runs a model on an encoded image: decoded, EXIF-oriented and resized by sharp in libuv's thread pool (so it
   * overlaps the run in progress), then made into the float input, run and answered on the worker.
   */
  async runImage(
    modelId: string,
    image: Uint8Array,
    input: ImageInput,
    outputNames?: string[],
  ): Promise<{ outputs: Record<string, TensorData>; transform: LetterboxTransform }> {
    return this.admit(modelId, async () => {
      const { rgb, transform } = await resizeForInput(image, input.width, input.height, input);
      const response = await this.imageRequest(modelId, rgb, transform, input, { kind: 'outputs', outputNames });
      return { outputs: (response.ok && response.outputs) || {}, transform };
    });
  }

  /** A YOLO detector on an encoded image: like `runImage`, with the outputs decoded (NMS included) on the worker. */
  async detect(
    modelId: string,
    image: Uint8Array,
    input: ImageInput,
    decode: YoloDecodeOptions,
  ): Promise<{ detections: YoloDetection[]; transform: LetterboxTransform }> {
    return this.admit(modelId, async () => {
      const { rgb, transform } = await resizeForInput(image, input.width, input.height, input);
      const response = await this.imageRequest(modelId, rgb, transform, input, { kind: 'yolo', options: decode });
      return { detections: (response.ok && response.detections) || [], transform };
    });
  }

  /** Counts the call against the queue bound (refusing it when full) while it decodes, waits and runs. */
  private async admit<T>(modelId: string, body: () => Promise<T>): Promise<T> {
    if (this.runs >= this.maxPending) throw new InferenceOverloadedError(this.retryAfterSeconds);
    const model = this.models.get(modelId);
    if (!model) throw new Error(`model ${modelId} is not loaded`);
    this.runs++;
    try {
      await model;
      return await body();
    } finally {
      this.runs--;
    }
  }

  private async imageRequest(
    modelId: string,
    rgb: Uint8Array,
    transform: LetterboxTransform,
    input: ImageInput,
    post: Extract<WorkerRequest, { kind: 'image' }>['post'],
  ): Promise<WorkerResponse> {
    const tensor: ImageTensorSpec = { inputName: input.inputName, normalise: input.normalise, padValue: input.padValue, hwc: input.hwc };
    // The resized pixels are copied to the worker (a fraction of the float tensor's size): sharp's buffers may share memory.
    return this.idleLane().request({ kind: 'image', id: 0, modelId, rgb, transform, tensor, post }, []);
  }

  /** The lane with the fewest requests outstanding (the first of equals). */
  private idleLane(): Lane {
    return this.lanes.reduce((best, lane) => (lane.outstanding < best.outstanding ? lane : best));
  }

  /** A lane's worker died and took its sessions with it: the next load of a model loads it again (in every lane). */
  private laneLost(): void {
    this.models.clear();
  }

  async unload(modelId: string): Promise<void> {
    const model = this.models.get(modelId);
    if (!model) return;
    this.models.delete(modelId);
    await model.catch(() => undefined);
    await Promise.all(this.lanes.map((lane) => lane.started && lane.request({ kind: 'unload', id: 0, modelId }, [])));
  }

  async close(): Promise<void> {
    this.models.clear();
    await Promise.all(this.lanes.map((lane) => lane.close(new Error('the session pool was closed'))));
  }
}

/** One inference worker thread: its requests in flight, and the kept feeds it holds (mirrored from the requests). */
class Lane {
  private worker: Worker | null = null;
  private readonly waiters = new Map<number, Waiter>();
  /** Keys of the feeds the worker keeps, least recently used first: the worker's list, from the same requests. */
  readonly resident = new Set<string>();
  private nextId = 1;

  constructor(
    private readonly settings: WorkerSettings,
    private readonly lost: () => void,
  ) {}

  get outstanding(): number {
    return this.waiters.size;
  }

  get started(): boolean {
    return this.worker !== null;
  }

  request(message: WorkerRequest, transfer: ArrayBuffer[]): Promise<WorkerResponse> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<WorkerResponse>((resolve, reject) => {
      this.waiters.set(id, {
        resolve: (response) =>
          response.ok
            ? resolve(response)
            : reject(response.unsupported ? new UnsupportedModelError(response.message) : new WorkerReportedError(response.message)),
        reject,
      });
      worker.ref();
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  async close(error: Error): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.resident.clear();
    this.failAll(error);
    await worker?.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    // Run from source (tsx) the worker is a .ts file beside this one; built, a .js file.
    const extension = extname(fileURLToPath(import.meta.url));
    const url = new URL(`./session-worker${extension}`, import.meta.url);
    // From source, the worker thread needs tsx's loader registered before it can import TypeScript.
    const worker = extension === '.ts'
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData: this.settings })
      : new Worker(url, { workerData: this.settings });
    worker.on('message', (response: WorkerResponse) => {
      const waiter = this.waiters.get(response.id);
      this.waiters.delete(response.id);
      if (this.waiters.size === 0) worker.unref();
      waiter?.resolve(response);
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      // A dead worker took its sessions and kept feeds with it: forget them so the next load starts a fresh worker.
      this.worker = null;
      this.resident.clear();
      this.failAll(error);
      this.lost();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the inference worker stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    const waiters = [...this.waiters.values()];
    this.waiters.clear();
    for (const waiter of waiters) waiter.reject(error);
  }
}
