import { UnsupportedModelError } from './errors.js';
import type { Preprocessing } from '../imaging/recipe/index.js';
import { parseUltralyticsMetadata } from './onnx-metadata.js';
import { servedInputs, servedPreprocessing } from './served-input.js';
import type { SessionPool } from './session-pool.js';
import type { ModelInfo } from './tensor-data.js';

export interface Classification {
  classId: number;
  className: string | null;
  confidence: number;
}

/**
 * An image classifier (input `[1, 3, H, W]` letterboxed like the detectors, pixels / 255; output `[1, nc]` scores,
 * probabilities or logits — softmaxed when they do not already sum to 1). Versa's versa-classify exports this layout.
 */
export class ImageClassifier {
  private constructor(
    private readonly pool: SessionPool,
    readonly modelId: string,
    private readonly inputName: string,
    private readonly width: number,
    private readonly height: number,
    private readonly names: string[] | null,
    /** The preprocessing of the images it was trained on, applied to every image before its letterbox. */
    private readonly preprocessing: Preprocessing | null,
  ) {}

  static async load(pool: SessionPool, modelId: string, source: string | Uint8Array, names?: string[]): Promise<ImageClassifier> {
    const info: ModelInfo = await pool.load(modelId, source);
    const input = info.inputs[0];
    if (!input || input.dims.length !== 4) throw new UnsupportedModelError(`A classifier needs one image input [1, 3, H, W]; this model's first input is [${input?.dims.join(', ') ?? ''}]`);
    const metadata = parseUltralyticsMetadata(info.metadata);
    const [height, width] = [input.dims[2], input.dims[3]].map((d, i) => (typeof d === 'number' && d > 0 ? d : (metadata.imgsz?.[i] ?? 224)));
    return new ImageClassifier(pool, modelId, input.name, width, height, names ?? metadata.names ?? null, servedPreprocessing(info.metadata));
  }

  /** The best class, after the preprocessing the model was trained with; tiles' probabilities are averaged. */
  async classify(image: Uint8Array): Promise<Classification> {
    const probabilities = await this.distribution(image);
    let best = 0;
    for (let i = 1; i < probabilities.length; i++) if (probabilities[i] > probabilities[best]) best = i;
    return { classId: best, className: this.names?.[best] ?? null, confidence: probabilities[best] };
  }

  /** The probability of every class, after the preprocessing the model was trained with; tiles' are averaged. */
  async distribution(image: Uint8Array): Promise<number[]> {
    const inputs = this.preprocessing ? (await servedInputs(image, this.preprocessing)).inputs.map((i) => i.image) : [image];
    const each = await Promise.all(inputs.map((input) => this.probabilities(input)));
    return each[0].map((_, k) => each.reduce((sum, p) => sum + p[k], 0) / each.length);
  }

  private async probabilities(image: Uint8Array): Promise<number[]> {
    const { outputs } = await this.pool.runImage(this.modelId, image, { inputName: this.inputName, width: this.width, height: this.height });
    const output = Object.values(outputs)[0];
    if (!output) throw new UnsupportedModelError('The classifier produced no output');
    const scores = Array.from(output.data as Float32Array);
    const sum = scores.reduce((a, b) => a + b, 0);
    return scores.every((s) => s >= 0) && Math.abs(sum - 1) < 1e-3 ? scores : softmax(scores);
  }
}

function softmax(values: number[]): number[] {
  const max = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - max));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}
