import type { LetterboxTransform } from './letterbox.js';
import type { SamMask, SamMaskSpec } from './sam-mask.js';
import type { ModelInfo, TensorData } from './tensor-data.js';
import type { YoloDecodeOptions, YoloDetection } from './yolo-decode.js';

/**
 * How many kept feeds (SAM image embeddings, 4 MiB each) the worker holds, least recently used dropped first. The
 * pool mirrors the same list from the same sequence of requests, so it knows which keys it may name.
 */
export const RESIDENT_FEEDS = 4;

/** Messages between SessionPool (event-loop thread) and the inference worker thread. */
export interface WorkerSettings {
  intraOpThreads: number;
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
  | {
      kind: 'run';
      id: number;
      modelId: string;
      /** A feed is its data, or the key of data an earlier request asked the worker to keep (see `RESIDENT_FEEDS`). */
      feeds: Record<string, TensorData | { resident: string }>;
      /** Feeds sent with data that the worker keeps under a key, so later requests can name them instead. */
      keep?: Record<string, string>;
      outputNames?: string[];
      /** Answer a SAM mask made from the outputs instead of the outputs. */
      samMask?: SamMaskSpec;
    }
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
  | { id: number; ok: true; info?: ModelInfo; outputs?: Record<string, TensorData>; detections?: YoloDetection[]; mask?: SamMask }
  /** `unsupported`: the model's outputs are not what the post-processing understands (a 422, not a crash). */
  | { id: number; ok: false; message: string; unsupported?: boolean };
