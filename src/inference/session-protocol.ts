import type { ModelInfo, TensorData } from './tensor-data.js';

/** Messages between SessionPool (event-loop thread) and the inference worker thread. */
export interface WorkerSettings {
  intraOpThreads: number;
}

export type WorkerRequest =
  | { kind: 'load'; id: number; modelId: string; source: string | Uint8Array }
  | { kind: 'unload'; id: number; modelId: string }
  | { kind: 'run'; id: number; modelId: string; feeds: Record<string, TensorData>; outputNames?: string[] };

export type WorkerResponse =
  | { id: number; ok: true; info?: ModelInfo; outputs?: Record<string, TensorData> }
  | { id: number; ok: false; message: string };
