/**
 * The inference worker thread. onnxruntime-node's `session.run` runs the model synchronously on the calling
 * thread (its promise only defers the call), so sessions live here, never on the event loop's thread. Each model
 * is loaded once and reused; requests are answered in arrival order.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { readOnnxMetadata } from './onnx-metadata.js';
import type { ModelInfo, TensorData, ValueInfo } from './tensor-data.js';
import type { WorkerRequest, WorkerResponse, WorkerSettings } from './session-protocol.js';

const settings = workerData as WorkerSettings;
const sessions = new Map<string, ort.InferenceSession>();

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
  await sessions.get(modelId)?.release();
  sessions.set(modelId, session);
  return { inputs: session.inputMetadata.map(describe), outputs: session.outputMetadata.map(describe), metadata };
}

function describe(value: ort.InferenceSession.ValueMetadata): ValueInfo {
  if (!value.isTensor) return { name: value.name, type: 'non-tensor', dims: [] };
  return { name: value.name, type: value.type, dims: [...value.shape] };
}

async function run(modelId: string, feeds: Record<string, TensorData>, outputNames?: string[]): Promise<Record<string, TensorData>> {
  const session = sessions.get(modelId);
  if (!session) throw new Error(`model ${modelId} is not loaded`);
  const inputs: Record<string, ort.Tensor> = {};
  for (const [name, tensor] of Object.entries(feeds)) inputs[name] = new ort.Tensor(tensor.type, tensor.data, tensor.dims);
  const results = outputNames ? await session.run(inputs, outputNames) : await session.run(inputs);
  const outputs: Record<string, TensorData> = {};
  for (const [name, tensor] of Object.entries(results)) {
    outputs[name] = { type: tensor.type as TensorData['type'], data: tensor.data as TensorData['data'], dims: [...tensor.dims] };
  }
  return outputs;
}

async function handle(request: WorkerRequest): Promise<{ response: WorkerResponse; transfer: ArrayBuffer[] }> {
  try {
    if (request.kind === 'load') {
      return { response: { id: request.id, ok: true, info: await load(request.modelId, request.source) }, transfer: [] };
    }
    if (request.kind === 'unload') {
      await sessions.get(request.modelId)?.release();
      sessions.delete(request.modelId);
      return { response: { id: request.id, ok: true }, transfer: [] };
    }
    const outputs = await run(request.modelId, request.feeds, request.outputNames);
    const transfer = Object.values(outputs).map((t) => t.data.buffer as ArrayBuffer);
    return { response: { id: request.id, ok: true, outputs }, transfer: [...new Set(transfer)] };
  } catch (error) {
    return { response: { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) }, transfer: [] };
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
