import { createHash } from 'node:crypto';
import type { Box } from '../imaging/rle.js';
import type { PolygonOptions } from './contour.js';
import type { SamMask } from './sam-mask.js';
import type { CachedEmbedding, EmbeddingCache } from './embedding-cache.js';
import { UnsupportedModelError } from './errors.js';
import type { ImageTensorSpec } from './session-protocol.js';
import type { SessionPool } from './session-pool.js';
import { imageInputLayout, type ModelInfo, type TensorData, type ValueInfo } from './tensor-data.js';

/** SAM's pixel normalisation (0–255 units), from segment_anything's Sam module. */
export const SAM_PIXEL_MEAN = [123.675, 116.28, 103.53] as const;
export const SAM_PIXEL_STD = [58.395, 57.12, 57.375] as const;

const DECODER_INPUTS = ['image_embeddings', 'point_coords', 'point_labels', 'mask_input', 'has_mask_input', 'orig_im_size'];

export interface SamPrompt {
  /** Points in original (EXIF-oriented) image pixels. */
  points: readonly [number, number][];
  /** Per point: 1 include, 0 exclude. */
  labels: readonly number[];
  /** Optional box prompt in original pixels. */
  box?: Box;
}

export type { SamMask } from './sam-mask.js';

export interface SamModels {
  encoderId: string;
  encoderSource: string | Uint8Array;
  decoderId: string;
  decoderSource: string | Uint8Array;
}

/**
 * Segment Anything through its ONNX interface: an image encoder (`[1, 3, S, S]`, S = 1024 for SAM, normalised,
 * longest side resized to S and padded bottom/right) producing `image_embeddings`, and the exported prompt decoder
 * (segment_anything's scripts/export_onnx_model.py; MobileSAM and EfficientSAM exports share it). The encoder runs
 * once per image and model: its embedding is cached (memory LRU + disk), so a click only runs the decoder.
 */
export class SamPredictor {
  private readonly inFlight = new Map<string, Promise<CachedEmbedding>>();
  /** Names the worker keeps an embedding under, so repeated clicks on one image send it once. */
  private readonly embeddingKeys = new WeakMap<CachedEmbedding, string>();

  private constructor(
    private readonly pool: SessionPool,
    private readonly cache: EmbeddingCache,
    private readonly models: SamModels,
    private readonly encoderInput: EncoderInput,
    readonly inputSize: number,
    private readonly decoder: ModelInfo,
  ) {}

  static async load(pool: SessionPool, cache: EmbeddingCache, models: SamModels): Promise<SamPredictor> {
    const [encoder, decoder] = await Promise.all([
      pool.load(models.encoderId, models.encoderSource),
      pool.load(models.decoderId, models.decoderSource),
    ]);
    const input = encoderInputOf(encoder);
    const names = new Set(decoder.inputs.map((i) => i.name));
    const missing = DECODER_INPUTS.filter((name) => !names.has(name));
    if (missing.length > 0) throw new UnsupportedModelError(`Not a SAM decoder: missing input(s) ${missing.join(', ')}`);
    return new SamPredictor(pool, cache, models, input, input.size, decoder);
  }

  /** The image's embedding: from the cache, or by running the encoder once (concurrent callers share the run). */
  async embed(image: Uint8Array, imageSha256 = sha256(image)): Promise<CachedEmbedding> {
    const cached = await this.cache.get(this.models.encoderId, imageSha256);
    if (cached) return cached;
    const key = imageSha256;
    const running = this.inFlight.get(key);
    if (running) return running;
    const computing = this.encode(image)
      .then(async (embedding) => {
        await this.cache.set(this.models.encoderId, imageSha256, embedding);
        return embedding;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, computing);
    return computing;
  }

  /** The best of the decoder's masks for the prompt (highest predicted IoU), thresholded at logit 0. */
  async predict(embedding: CachedEmbedding, prompt: SamPrompt, polygon?: PolygonOptions): Promise<SamMask> {
    const { image_embeddings: data, ...feeds } = this.decoderFeeds(embedding, prompt);
    const masks = this.decoder.outputs.find((o) => o.name === 'masks')?.name ?? this.decoder.outputs[0].name;
    const scores = this.decoder.outputs.find((o) => o.name === 'iou_predictions')?.name ?? this.decoder.outputs[1]?.name;
    let key = this.embeddingKeys.get(embedding);
    if (key === undefined) this.embeddingKeys.set(embedding, (key = `${this.models.encoderId}#${nextEmbeddingKey++}`));
    return this.pool.samMask(this.models.decoderId, feeds, { name: 'image_embeddings', key, data }, {
      masks,
      scores,
      width: embedding.originalWidth,
      height: embedding.originalHeight,
      polygon,
    });
  }

  private async encode(image: Uint8Array): Promise<CachedEmbedding> {
    const size = this.inputSize;
    // SAM resizes the longest side to S, normalises, then pads bottom/right with zeros.
    const { outputs, transform } = await this.pool.runImage(this.models.encoderId, image, { ...this.encoderInput.tensor, width: size, height: size, align: 'top-left' });
    const embedding = outputs.image_embeddings ?? Object.values(outputs)[0];
    return {
      dims: embedding.dims,
      data: embedding.data as Float32Array,
      originalWidth: transform.originalWidth,
      originalHeight: transform.originalHeight,
      resizedWidth: transform.resizedWidth,
      resizedHeight: transform.resizedHeight,
      inputSize: size,
    };
  }

  /** Prompt in the encoder's resized frame; without a box SAM expects a padding point (0, 0) labelled -1. */
  private decoderFeeds(embedding: CachedEmbedding, prompt: SamPrompt): Record<string, TensorData> {
    const sx = embedding.resizedWidth / embedding.originalWidth;
    const sy = embedding.resizedHeight / embedding.originalHeight;
    const coords: number[] = [];
    const labels: number[] = [];
    prompt.points.forEach(([x, y], i) => {
      coords.push(x * sx, y * sy);
      labels.push(prompt.labels[i]);
    });
    if (prompt.box) {
      const { x, y, width, height } = prompt.box;
      coords.push(x * sx, y * sy, (x + width) * sx, (y + height) * sy);
      labels.push(2, 3);
    } else {
      coords.push(0, 0);
      labels.push(-1);
    }
    return {
      image_embeddings: { type: 'float32', data: embedding.data, dims: embedding.dims },
      point_coords: { type: 'float32', data: Float32Array.from(coords), dims: [1, labels.length, 2] },
      point_labels: { type: 'float32', data: Float32Array.from(labels), dims: [1, labels.length] },
      mask_input: { type: 'float32', data: new Float32Array(256 * 256), dims: [1, 1, 256, 256] },
      has_mask_input: { type: 'float32', data: new Float32Array([0]), dims: [1] },
      orig_im_size: { type: 'float32', data: Float32Array.from([embedding.originalHeight, embedding.originalWidth]), dims: [2] },
    };
  }
}

interface EncoderInput {
  size: number;
  tensor: ImageTensorSpec;
}

/**
 * The encoder's image input: SAM's `[1, 3, S, S]` normalised and padded here, or the `[H, W, 3]` (or
 * `[1, H, W, 3]`) 0–255 pixels of encoders exported with their pre-processing inside (normalise, pad), told apart
 * by the input's shape. With free height and width S comes from the embedding grid (16 pixels a cell), else 1024.
 */
function encoderInputOf(encoder: ModelInfo): EncoderInput {
  const input = encoder.inputs[0];
  const shape = input && encoder.inputs.length === 1 ? imageInputLayout(input.dims) : null;
  if (!shape || (shape.layout === 'hwc' && input.type !== 'float32' && input.type !== 'uint8')) {
    throw new UnsupportedModelError(`A SAM encoder needs one image input [1, 3, S, S] or [H, W, 3]; this one has [${input?.dims.join(', ') ?? ''}]`);
  }
  const fixed = (d: number | string): d is number => typeof d === 'number' && d > 0;
  const { height, width } = shape;
  if (shape.layout === 'hwc') {
    const padded = fixed(height) && fixed(width);
    return {
      size: padded ? Math.max(height, width) : (gridSize(encoder.outputs) ?? 1024),
      // Padding of a fixed-size input is the pixel mean, so that it normalises to 0 inside the model as SAM's does.
      tensor: { inputName: input.name, hwc: { batch: shape.batch, padded, pad: SAM_PIXEL_MEAN, type: input.type as 'float32' | 'uint8' } },
    };
  }
  return {
    size: [height, width].find(fixed) ?? gridSize(encoder.outputs) ?? 1024,
    tensor: { inputName: input.name, normalise: { mean: SAM_PIXEL_MEAN, std: SAM_PIXEL_STD } },
  };
}

/** S from an `image_embeddings [1, C, S/16, S/16]` output with a fixed grid. */
function gridSize(outputs: ValueInfo[]): number | null {
  const embedding = outputs.find((o) => o.name === 'image_embeddings') ?? outputs[0];
  const side = embedding?.dims[3];
  return typeof side === 'number' && side > 0 ? side * 16 : null;
}

let nextEmbeddingKey = 1;

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
