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
  /** Threads onnxruntime uses inside one run; defaults to every core. */
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

/** An error the worker reported for one request, as opposed to the worker itself failing. */
class WorkerReportedError extends Error {}

interface Waiter {
  resolve: (response: WorkerResponse) => void;
  reject: (error: Error) => void;
}

/**
 * Loads each ONNX model once and runs it on one inference worker thread, so the event loop never waits on a
 * model. Runs are queued in arrival order up to `maxPending`; beyond that `run` throws InferenceOverloadedError
 * (503 + Retry-After) at once rather than letting latency grow without bound.
 */
export class SessionPool {
  readonly intraOpThreads: number;
  private readonly maxPending: number;
  private readonly retryAfterSeconds: number;
  private worker: Worker | null = null;
  private readonly models = new Map<string, Promise<ModelInfo>>();
  private readonly waiters = new Map<number, Waiter>();
  /** Keys of the feeds the worker keeps, least recently used first: the worker's list, from the same requests. */
  private readonly resident = new Set<string>();
  private nextId = 1;
  private runs = 0;

  constructor(options: SessionPoolOptions = {}) {
    this.intraOpThreads = options.intraOpThreads ?? availableParallelism();
    this.maxPending = options.maxPending ?? 8;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 2;
  }

  /** Runs accepted and not yet answered. */
  get pending(): number {
    return this.runs;
  }

  isLoaded(modelId: string): boolean {
    return this.models.has(modelId);
  }

  /** Loads a model from a file path or its bytes, once per id; later calls return the same description. */
  load(modelId: string, source: string | Uint8Array): Promise<ModelInfo> {
    const existing = this.models.get(modelId);
    if (existing) return existing;
    const loading = this.request({ kind: 'load', id: 0, modelId, source }, []).then(
      (response) => (response.ok && response.info) || Promise.reject(new Error('the inference worker sent no model description')),
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
      const response = await this.request({ kind: 'run', id: 0, modelId, feeds, outputNames: options.outputNames }, transfer);
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
      const sent: Record<string, TensorData | { resident: string }> = { ...feeds };
      let keep: Record<string, string> | undefined;
      if (this.resident.has(embedding.key)) {
        sent[embedding.name] = { resident: embedding.key };
        this.resident.delete(embedding.key);
      } else {
        sent[embedding.name] = embedding.data;
        keep = { [embedding.name]: embedding.key };
      }
      this.resident.add(embedding.key);
      if (this.resident.size > RESIDENT_FEEDS) this.resident.delete(this.resident.values().next().value!);
      try {
        const response = await this.request({ kind: 'run', id: 0, modelId, feeds: sent, keep, samMask: spec }, []);
        return (response.ok && response.mask) || Promise.reject(new Error('the inference worker sent no mask'));
      } catch (error) {
        // Whatever went wrong, the next call sends the embedding again rather than trusting the worker still has it.
        this.resident.delete(embedding.key);
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
    return this.request({ kind: 'image', id: 0, modelId, rgb, transform, tensor, post }, []);
  }

  async unload(modelId: string): Promise<void> {
    const model = this.models.get(modelId);
    if (!model) return;
    this.models.delete(modelId);
    await model.catch(() => undefined);
    if (this.worker) await this.request({ kind: 'unload', id: 0, modelId }, []);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.models.clear();
    this.resident.clear();
    this.failAll(new Error('the session pool was closed'));
    await worker?.terminate();
  }

  private request(message: WorkerRequest, transfer: ArrayBuffer[]): Promise<WorkerResponse> {
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

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    // Run from source (tsx) the worker is a .ts file beside this one; built, a .js file.
    const extension = extname(fileURLToPath(import.meta.url));
    const settings: WorkerSettings = { intraOpThreads: this.intraOpThreads };
    const url = new URL(`./session-worker${extension}`, import.meta.url);
    // From source, the worker thread needs tsx's loader registered before it can import TypeScript.
    const worker = extension === '.ts'
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData: settings })
      : new Worker(url, { workerData: settings });
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
      this.models.clear();
      this.resident.clear();
      this.failAll(error);
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
