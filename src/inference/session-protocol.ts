import type { LetterboxTransform } from './letterbox.js';
import type { ModelInfo, TensorData } from './tensor-data.js';
import type { YoloDecodeOptions, YoloDetection } from './yolo-decode.js';

/** Messages between SessionPool (event-loop thread) and the inference worker thread. */
export interface WorkerSettings {
  intraOpThreads: number;
  spinning: boolean;
}

/** How the worker turns a resized image into a model's float input (see `toInputTensor`). */
export interface ImageTensorSpec {
  inputName: string;
  normalise?: { mean: readonly number[]; std: readonly number[] };
  padValue?: number;
}

/** What the worker answers for an image run: the raw outputs, or YOLO detections decoded on the worker. */
export type ImagePostprocess = { kind: 'outputs'; outputNames?: string[] } | { kind: 'yolo'; options: YoloDecodeOptions };

export type WorkerRequest =
  | { kind: 'load'; id: number; modelId: string; source: string | Uint8Array }
  | { kind: 'unload'; id: number; modelId: string }
  | { kind: 'run'; id: number; modelId: string; feeds: Record<string, TensorData>; outputNames?: string[] }
  | {
      kind: 'image';
      id: number;
      modelId: string;
      /** The image resized to its place in the input (`resizeForInput`), interleaved RGB. */
      rgb: Uint8Array;
      transform: LetterboxTransform;
      tensor: ImageTensorSpec;
      post: ImagePostprocess;
    };

export type WorkerResponse =
  | { id: number; ok: true; info?: ModelInfo; outputs?: Record<string, TensorData>; detections?: YoloDetection[] }
  /** `unsupported`: the model's outputs are not what the post-processing understands (a 422, not a crash). */
  | { id: number; ok: false; message: string; unsupported?: boolean };
