import { Random } from '../src/lib/random.js';
import { DataType, OnnxGraph } from '../test/helpers/onnx/onnx-graph.js';

/** Builds timing-only models with random weights: their sizes and shapes matter, not what they predict. */
class Weights {
  params = 0;
  flops = 0;
  constructor(
    readonly g: OnnxGraph,
    private readonly random: Random,
  ) {}

  /** He-style uniform weights with variance 1/fanIn, so activations stay bounded through the stack. */
  tensor(dims: number[], fanIn: number): string {
    const count = dims.reduce((a, b) => a * b, 1);
    const bound = Math.sqrt(3 / fanIn);
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = this.random.uniform(-bound, bound);
    this.params += count;
    return this.g.floats(data, dims);
  }

  bias(length: number, value = 0): string {
    this.params += length;
    return this.g.floats(new Array(length).fill(value), [length]);
  }

  conv(x: string, cin: number, cout: number, k: number, stride: number, outSize: number, activation = true, bias = 0): string {
    const pad = Math.floor(k / 2);
    const y = this.g.op('Conv', [x, this.tensor([cout, cin, k, k], cin * k * k), this.bias(cout, bias)], {
      kernel_shape: [k, k], strides: [stride, stride], pads: [pad, pad, pad, pad],
    });
    this.flops += 2 * cin * cout * k * k * outSize * outSize;
    return activation ? this.g.op('Mul', [y, this.g.op('Sigmoid', [y])]) : y;
  }

  linear(x: string, rows: number, cin: number, cout: number, activation?: 'relu'): string {
    const y = this.g.op('Add', [this.g.op('MatMul', [x, this.tensor([cin, cout], cin)]), this.bias(cout)]);
    this.flops += 2 * rows * cin * cout;
    return activation ? this.g.op('Relu', [y]) : y;
  }

  layerNorm(x: string, dim: number): string {
    this.params += 2 * dim;
    return this.g.op('LayerNormalization', [x, this.g.floats(new Array(dim).fill(1), [dim]), this.g.floats(new Array(dim).fill(0), [dim])], { axis: -1 });
  }
}

/**
 * Random weights leave the head's outputs nearly constant (every activation shrinks through the stack), so the
 * head standardises them per level and channel over the grid before use, as a trained head's would vary: class
 * logits become `CLASS_GAIN × z + CLASS_BIAS`, which puts about 1–2 % of the anchors above 0.25 on a photo-like
 * image (a few hundred candidates, as a trained YOLOv8n shows on a busy picture), and boxes are centred near
 * their anchor with sizes of one to several strides, so neighbouring candidates overlap and NMS has real work.
 */
export const CLASS_GAIN = 1.5;
export const CLASS_BIAS = -6.5;

function standardise(g: OnnxGraph, x: string): string {
  const centred = g.op('Sub', [x, g.op('ReduceMean', [x], { axes: [2, 3], keepdims: 1 })]);
  const variance = g.op('ReduceMean', [g.op('Mul', [centred, centred])], { axes: [2, 3], keepdims: 1 });
  return g.op('Div', [centred, g.op('Sqrt', [g.op('Add', [variance, g.scalar(1e-12)])])]);
}

/**
 * A detector with YOLOv8n's interface and roughly its size: input [1, 3, S, S], conv backbone with SiLU down to
 * strides 8/16/32 (64/128/256 channels), a box branch and a class branch per level, output [1, 84, N]
 * (N = 8400 at S = 640) of boxes (cx, cy, w, h in input pixels) and class scores.
 */
export function buildYolov8nLike(size = 640, seed = 8): { bytes: Uint8Array; params: number; gflops: number } {
  const g = new OnnxGraph('yolov8n-like');
  const w = new Weights(g, new Random(seed));
  const images = g.input('images', [1, 3, size, size]);
  let x = w.conv(images, 3, 16, 3, 2, size / 2);
  x = w.conv(x, 16, 32, 3, 2, size / 4);
  x = w.conv(x, 32, 32, 3, 1, size / 4);
  x = w.conv(x, 32, 64, 3, 2, size / 8);
  x = w.conv(x, 64, 64, 3, 1, size / 8);
  const p3 = w.conv(x, 64, 64, 3, 1, size / 8);
  x = w.conv(p3, 64, 128, 3, 2, size / 16);
  x = w.conv(x, 128, 128, 3, 1, size / 16);
  const p4 = w.conv(x, 128, 128, 3, 1, size / 16);
  x = w.conv(p4, 128, 256, 3, 2, size / 32);
  x = w.conv(x, 256, 256, 3, 1, size / 32);
  x = w.conv(x, 256, 256, 3, 1, size / 32);
  const p5 = w.conv(x, 256, 256, 3, 1, size / 32);
  const levels: string[] = [];
  for (const [feature, channels, stride] of [[p3, 64, 8], [p4, 128, 16], [p5, 256, 32]] as const) {
    const grid = size / stride;
    let box = w.conv(feature, channels, 64, 3, 1, grid);
    box = w.conv(box, 64, 64, 3, 1, grid);
    const t = standardise(g, w.conv(box, 64, 4, 1, 1, grid, false));
    // cx, cy: the anchor's centre moved by up to half a stride; w, h: 1.5–6 strides.
    const anchors = g.floats(
      Array.from({ length: 2 * grid * grid }, (_, i) => (i < grid * grid ? (i % grid) + 0.5 : Math.floor((i - grid * grid) / grid) + 0.5) * stride),
      [1, 2, grid, grid],
    );
    const centre = g.op('Add', [anchors, g.op('Mul', [g.op('Tanh', [g.op('Slice', [t, g.ints([0]), g.ints([2]), g.ints([1])])]), g.scalar(stride / 2)])]);
    const extent = g.op('Mul', [g.op('Add', [g.op('Mul', [g.op('Sigmoid', [g.op('Slice', [t, g.ints([2]), g.ints([4]), g.ints([1])])]), g.scalar(4.5)]), g.scalar(1.5)]), g.scalar(stride)]);
    let cls = w.conv(feature, channels, 80, 3, 1, grid);
    cls = w.conv(cls, 80, 80, 3, 1, grid);
    cls = g.op('Sigmoid', [g.op('Add', [g.op('Mul', [standardise(g, w.conv(cls, 80, 80, 1, 1, grid, false)), g.scalar(CLASS_GAIN)]), g.scalar(CLASS_BIAS)])]);
    levels.push(g.op('Reshape', [g.op('Concat', [centre, extent, cls], { axis: 1 }), g.ints([1, 84, -1])]));
  }
  g.op('Concat', levels, { axis: 2 }, 'output0');
  const anchors = [8, 16, 32].reduce((n, s) => n + (size / s) ** 2, 0);
  g.output('output0', [1, 84, anchors]);
  return { bytes: g.toBytes({ metadata: { names: `{${Array.from({ length: 80 }, (_, i) => `${i}: 'class${i}'`).join(', ')}}`, imgsz: `[${size}, ${size}]`, task: 'detect' } }), params: w.params, gflops: w.flops / 1e9 };
}

/**
 * A prompt decoder with SAM's exported interface and SAM ViT's published decoder size (≈4M parameters): point
 * embeddings plus output tokens, a two-layer two-way transformer (token self-attention, token→image and
 * image→token cross-attention at half width, 2048-wide MLP) over the 64 × 64 × 256 embedding, transposed-conv
 * upscaling to 256 × 256, hypernetwork MLPs per mask token, an IoU head, best-mask selection (as the export with
 * return_single_mask) and SAM's post-processing to the original size.
 */
export function buildSamDecoderLike(seed = 9): { bytes: Uint8Array; params: number } {
  const g = new OnnxGraph('sam-decoder-like');
  const w = new Weights(g, new Random(seed));
  const D = 256;
  const embeddings = g.input('image_embeddings', [1, D, 64, 64]);
  const coords = g.input('point_coords', [1, 'points', 2]);
  const labels = g.input('point_labels', [1, 'points']);
  g.input('mask_input', [1, 1, 256, 256]);
  g.input('has_mask_input', [1]);
  const origSize = g.input('orig_im_size', [2]);

  const projected = g.op('MatMul', [g.op('Div', [coords, g.scalar(1024)]), w.tensor([2, D / 2], 2)]);
  const pointEmbedding = g.op('Concat', [g.op('Sin', [projected]), g.op('Cos', [projected])], { axis: 2 });
  const labelEmbedding = g.op('Mul', [g.op('Unsqueeze', [labels, g.ints([2])]), w.tensor([D], 1)]);
  const prompts = g.op('Add', [pointEmbedding, labelEmbedding]);
  const outputTokens = w.tensor([1, 5, D], 1);
  let tokens = g.op('Concat', [outputTokens, prompts], { axis: 1 });
  let image = g.op('Transpose', [g.op('Reshape', [embeddings, g.ints([1, D, 4096])])], { perm: [0, 2, 1] });
  // SAM computes its dense positional encoding from a fixed random projection: a buffer, not a parameter.
  const random = new Random(seed + 1);
  const imagePe = g.floats(Float32Array.from({ length: 4096 * D }, () => random.uniform(-1, 1)), [1, 4096, D]);

  const heads = (x: string, width: number) => g.op('Transpose', [g.op('Reshape', [x, g.ints([1, -1, 8, width / 8])])], { perm: [0, 2, 1, 3] });
  const attention = (q: string, k: string, v: string, qRows: number, kRows: number, inner: number): string => {
    const qp = heads(w.linear(q, qRows, D, inner), inner);
    const kp = heads(w.linear(k, kRows, D, inner), inner);
    const vp = heads(w.linear(v, kRows, D, inner), inner);
    const scores = g.op('Softmax', [g.op('Div', [g.op('MatMul', [qp, g.op('Transpose', [kp], { perm: [0, 1, 3, 2] })]), g.scalar(Math.sqrt(inner / 8))])], { axis: -1 });
    w.flops += 4 * qRows * kRows * inner;
    const merged = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [scores, vp])], { perm: [0, 2, 1, 3] }), g.ints([1, -1, inner])]);
    return w.linear(merged, qRows, inner, D);
  };
  const T = 6;
  for (let layer = 0; layer < 2; layer++) {
    tokens = w.layerNorm(g.op('Add', [tokens, attention(tokens, tokens, tokens, T, T, D)]), D);
    const keys = g.op('Add', [image, imagePe]);
    tokens = w.layerNorm(g.op('Add', [tokens, attention(tokens, keys, image, T, 4096, D / 2)]), D);
    tokens = w.layerNorm(g.op('Add', [tokens, w.linear(w.linear(tokens, T, D, 2048, 'relu'), T, 2048, D)]), D);
    image = w.layerNorm(g.op('Add', [image, attention(keys, tokens, tokens, 4096, T, D / 2)]), D);
  }
  tokens = w.layerNorm(g.op('Add', [tokens, attention(tokens, g.op('Add', [image, imagePe]), image, T, 4096, D / 2)]), D);

  const spatial = g.op('Reshape', [g.op('Transpose', [image], { perm: [0, 2, 1] }), g.ints([1, D, 64, 64])]);
  const up1 = g.op('Relu', [g.op('ConvTranspose', [spatial, w.tensor([D, 64, 2, 2], D), w.bias(64)], { kernel_shape: [2, 2], strides: [2, 2] })]);
  const up2 = g.op('Relu', [g.op('ConvTranspose', [up1, w.tensor([64, 32, 2, 2], 64), w.bias(32)], { kernel_shape: [2, 2], strides: [2, 2] })]);
  w.flops += 2 * (D * 64 * 4 * 4096 + 64 * 32 * 4 * 16384);
  const maskTokens = g.op('Slice', [tokens, g.ints([1]), g.ints([5]), g.ints([1])]); // [1, 4, D]
  const hyper = g.op('Reshape', [maskTokens, g.ints([4, 1, D])]);
  const mlp = (x: string, widths: number[]) => {
    let y = x;
    widths.slice(1).forEach((out, i) => {
      y = g.op('Add', [g.op('MatMul', [y, w.tensor([4, widths[i], out], widths[i])]), w.tensor([4, 1, out], 1)]);
      if (i < widths.length - 2) y = g.op('Relu', [y]);
    });
    return y;
  };
  const hyperOut = g.op('Reshape', [mlp(hyper, [D, D, D, 32]), g.ints([1, 4, 32])]);
  const masks = g.op('Reshape', [g.op('MatMul', [hyperOut, g.op('Reshape', [up2, g.ints([1, 32, 65536])])]), g.ints([1, 4, 256, 256])]);
  w.flops += 2 * 4 * 32 * 65536;
  const iouToken = g.op('Slice', [tokens, g.ints([0]), g.ints([1]), g.ints([1])]);
  const iou = w.linear(w.linear(w.linear(iouToken, 1, D, D, 'relu'), 1, D, D, 'relu'), 1, D, 4); // [1, 1, 4]
  const scores = g.op('Reshape', [iou, g.ints([1, 4])]);
  const best = g.op('ArgMax', [scores], { axis: 1, keepdims: 0 });
  const bestMask = g.op('Gather', [masks, best], { axis: 1 });
  g.op('Gather', [scores, best], { axis: 1 }, 'iou_predictions');

  const upscaled = g.op('Resize', [bestMask, '', g.floats([1, 1, 4, 4], [4])], { mode: 'linear' });
  const longest = g.op('ReduceMax', [origSize], { keepdims: 1 });
  const resized = g.op('Floor', [g.op('Add', [g.op('Mul', [origSize, g.op('Div', [g.scalar(1024), longest])]), g.scalar(0.5)])]);
  const cropped = g.op('Slice', [upscaled, g.ints([0, 0]), g.op('Cast', [resized], { to: DataType.INT64 }), g.ints([2, 3])]);
  const outSize = g.op('Concat', [g.ints([1, 1]), g.op('Cast', [origSize], { to: DataType.INT64 })], { axis: 0 });
  g.op('Resize', [cropped, '', '', outSize], { mode: 'linear' }, 'masks');
  g.output('masks', [1, 1, 'height', 'width']);
  g.output('iou_predictions', [1, 1]);
  return { bytes: g.toBytes(), params: w.params };
}
