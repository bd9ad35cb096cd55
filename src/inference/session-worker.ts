/**
 * The inference worker thread. onnxruntime-node's `session.run` runs the model synchronously on the calling
 * thread (its promise only defers the call), so sessions live here, never on the event loop's thread. Each model
 * is loaded once and reused; requests are answered in arrival order.
 *
 * Image runs arrive already decoded and resized (sharp does that in libuv's thread pool, driven from the event-loop
 * thread, so the next image decodes while this thread is inside a run); here they become the model's float tensor,
 * run, and for detectors are decoded to detections, so only small results cross back.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { UnsupportedModelError } from './errors.js';
import { toHwcTensor, toInputTensor } from './letterbox.js';
import { readOnnxMetadata } from './onnx-metadata.js';
import type { ModelInfo, TensorData, ValueInfo } from './tensor-data.js';
import { samMaskFromOutputs } from './sam-mask.js';
import { RESIDENT_FEEDS, type WorkerRequest, type WorkerResponse, type WorkerSettings } from './session-protocol.js';
import { decodeYolo } from './yolo-decode.js';

const settings = workerData as WorkerSettings;
const sessions = new Map<string, ort.InferenceSession>();
/** Feeds kept for later requests by key, least recently used first (the pool mirrors this list). */
const resident = new Map<string, TensorData>();
/** Per model, the float input buffer image runs fill: runs are sequential, so one is enough and none is allocated per image. */
const inputBuffers = new Map<string, Float32Array>();

async function load(modelId: string, source: string | Uint8Array): Promise<ModelInfo> {
  const bytes = typeof source === 'string' ? new Uint8Array(await readFile(source)) : source;
  let metadata: Record<string, string>;
  try {
    metadata = readOnnxMetadata(bytes);
  } catch {
    throw new Error('not an ONNX model (the file is not a valid ModelProto)');
  }
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: settings.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  await release(modelId);
  sessions.set(modelId, session);
  return { inputs: session.inputMetadata.map(describe), outputs: session.outputMetadata.map(describe), metadata };
}

async function release(modelId: string): Promise<void> {
  await sessions.get(modelId)?.release();
  sessions.delete(modelId);
  inputBuffers.delete(modelId);
}

function describe(value: ort.InferenceSession.ValueMetadata): ValueInfo {
  if (!value.isTensor) return { name: value.name, type: 'non-tensor', dims: [] };
  return { name: value.name, type: value.type, dims: [...value.shape] };
}

function sessionOf(modelId: string): ort.InferenceSession {
  const session = sessions.get(modelId);
  if (!session) throw new Error(`model ${modelId} is not loaded`);
  return session;
}

async function run(session: ort.InferenceSession, feeds: Record<string, TensorData>, outputNames?: string[]): Promise<Record<string, TensorData>> {
  const inputs: Record<string, ort.Tensor> = {};
  for (const [name, tensor] of Object.entries(feeds)) inputs[name] = new ort.Tensor(tensor.type, tensor.data, tensor.dims);
  const results = outputNames ? await session.run(inputs, outputNames) : await session.run(inputs);
  const outputs: Record<string, TensorData> = {};
  for (const [name, tensor] of Object.entries(results)) {
    outputs[name] = { type: tensor.type as TensorData['type'], data: tensor.data as TensorData['data'], dims: [...tensor.dims] };
  }
  return outputs;
}

async function runImage(request: Extract<WorkerRequest, { kind: 'image' }>): Promise<{ response: WorkerResponse; transfer: ArrayBuffer[] }> {
  const session = sessionOf(request.modelId);
  const feeds = { [request.tensor.inputName]: imageTensor(request) };
  if (request.post.kind === 'outputs') {
    const outputs = await run(session, feeds, request.post.outputNames);
    return { response: { id: request.id, ok: true, outputs }, transfer: transferable(outputs) };
  }
  const outputs = await run(session, feeds);
  const ordered = session.outputNames.map((name) => outputs[name]);
  const detections = decodeYolo(ordered, request.transform, request.post.options);
  return { response: { id: request.id, ok: true, detections }, transfer: [] };
}

function imageTensor({ modelId, rgb, transform, tensor }: Extract<WorkerRequest, { kind: 'image' }>): TensorData {
  if (tensor.hwc) {
    const { data, height, width } = toHwcTensor(rgb, transform, tensor.hwc);
    return { type: tensor.hwc.type, data, dims: tensor.hwc.batch ? [1, height, width, 3] : [height, width, 3] };
  }
  const { inputWidth: width, inputHeight: height } = transform;
  let buffer = inputBuffers.get(modelId);
  if (buffer?.length !== 3 * width * height) inputBuffers.set(modelId, (buffer = new Float32Array(3 * width * height)));
  toInputTensor(rgb, transform, { into: buffer, normalise: tensor.normalise, padValue: tensor.padValue });
  return { type: 'float32', data: buffer, dims: [1, 3, height, width] };
}

function residentFeeds(request: Extract<WorkerRequest, { kind: 'run' }>): Record<string, TensorData> {
  const feeds: Record<string, TensorData> = {};
  for (const [name, feed] of Object.entries(request.feeds)) {
    if ('resident' in feed) {
      const kept = resident.get(feed.resident);
      if (!kept) throw new Error(`kept feed ${feed.resident} is not here`);
      feeds[name] = kept;
      resident.delete(feed.resident);
      resident.set(feed.resident, kept);
    } else {
      feeds[name] = feed;
      const key = request.keep?.[name];
      if (key === undefined) continue;
      resident.delete(key);
      resident.set(key, feed);
      if (resident.size > RESIDENT_FEEDS) resident.delete(resident.keys().next().value!);
    }
  }
  return feeds;
}

function transferable(outputs: Record<string, TensorData>): ArrayBuffer[] {
  return [...new Set(Object.values(outputs).map((t) => t.data.buffer as ArrayBuffer))];
}

async function handle(request: WorkerRequest): Promise<{ response: WorkerResponse; transfer: ArrayBuffer[] }> {
  try {
    if (request.kind === 'load') {
      return { response: { id: request.id, ok: true, info: await load(request.modelId, request.source) }, transfer: [] };
    }
    if (request.kind === 'unload') {
      await release(request.modelId);
      return { response: { id: request.id, ok: true }, transfer: [] };
    }
    if (request.kind === 'image') return await runImage(request);
    // Kept feeds first: the pool counts them as kept whatever becomes of this run.
    const feeds = residentFeeds(request);
    const outputs = await run(sessionOf(request.modelId), feeds, request.outputNames);
    if (request.samMask) return { response: { id: request.id, ok: true, mask: samMaskFromOutputs(outputs, request.samMask) }, transfer: [] };
    return { response: { id: request.id, ok: true, outputs }, transfer: transferable(outputs) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { response: { id: request.id, ok: false, message, unsupported: error instanceof UnsupportedModelError }, transfer: [] };
  }
}

// One request at a time: a run is CPU-bound and already uses every intra-op thread it is given.
let chain = Promise.resolve();
parentPort!.on('message', (request: WorkerRequest) => {
  chain = chain.then(async () => {
    const { response, transfer } = await handle(request);
    parentPort!.postMessage(response, transfer);
  });
});
