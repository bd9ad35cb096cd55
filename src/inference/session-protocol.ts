import type { LetterboxTransform } from './letterbox.js';
import type { ModelInfo, TensorData } from './tensor-data.js';
import type { YoloDecodeOptions, YoloDetection } from './yolo-decode.js';

/** Messages between SessionPool (event-loop thread) and the inference worker thread. */
export interface WorkerSettings {
  intraOpThreads: number;
  spinning: boolean;
}

/**
 * How the worker turns a resized image into a model's input: planar float `[1, 3, H, W]` (`toInputTensor`), or
 * interleaved `[H, W, 3]` / `[1, H, W, 3]` pixels for models that normalise inside (`toHwcTensor`).
 */
export interface ImageTensorSpec {
  inputName: string;
  normalise?: { mean: readonly number[]; std: readonly number[] };
  padValue?: number;
  hwc?: {
    /** A leading batch dimension of 1. */
    batch: boolean;
    /** The input has fixed height and width: feed the padded frame, padding filled with `pad`. */
    padded: boolean;
    pad?: readonly number[];
    type: 'float32' | 'uint8';
  };
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
