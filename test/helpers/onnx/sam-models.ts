import { DataType, OnnxGraph } from './onnx-graph.js';

/** Predicted IoUs of the test decoder's three masks: empty, the clicked colour region, the whole image. */
export const SAM_TEST_SCORES = [0.2, 0.9, 0.5];

/**
 * A SAM-interface encoder: `image` [1, 3, S, S] → `image_embeddings` [1, 256, S/16, S/16] whose first three
 * channels are the normalised mean colour of each 16 × 16 cell (the rest zero), like SAM's 64 × 64 grid at S = 1024.
 */
export function buildSamEncoder(size = 1024): Uint8Array {
  const g = new OnnxGraph('test-sam-encoder');
  embeddingsOf(g, g.input('image', [1, 3, size, size]), size);
  return g.toBytes();
}

/**
 * The same encoder exported with its pre-processing inside, as segment_anything-style `--use-preprocess` exports
 * are: `input_image` [H, W, 3] of 0–255 pixels (the resized image; free H and W unless `fixed`), normalised with
 * SAM's mean and std, made planar and padded bottom/right to S × S inside the model.
 */
export function buildSamEncoderHwc(size = 1024, options: { fixed?: boolean; batch?: boolean } = {}): Uint8Array {
  const g = new OnnxGraph('test-sam-encoder-hwc');
  const hw = options.fixed ? [size, size] : ['image_height', 'image_width'];
  let image = g.input('input_image', options.batch ? [1, ...hw, 3] : [...hw, 3]);
  if (options.batch) image = g.op('Squeeze', [image, g.ints([0])]);
  const normalised = g.op('Div', [g.op('Sub', [image, g.floats([123.675, 116.28, 103.53], [3])]), g.floats([58.395, 57.12, 57.375], [3])]);
  const planar = g.op('Transpose', [normalised], { perm: [2, 0, 1] });
  const missing = g.op('Sub', [g.ints([size, size]), g.op('Slice', [g.op('Shape', [planar]), g.ints([1]), g.ints([3]), g.ints([0])])]);
  const padded = g.op('Pad', [planar, g.op('Concat', [g.ints([0, 0, 0, 0]), missing], { axis: 0 })]);
  embeddingsOf(g, g.op('Unsqueeze', [padded, g.ints([0])]), size);
  return g.toBytes();
}

function embeddingsOf(g: OnnxGraph, image: string, size: number): void {
  const cells = g.op('AveragePool', [image], { kernel_shape: [16, 16], strides: [16, 16] });
  g.op('Pad', [cells, g.ints([0, 0, 0, 0, 0, 253, 0, 0])], {}, 'image_embeddings');
  g.output('image_embeddings', [1, 256, size / 16, size / 16]);
}

/**
 * A decoder with SAM's exported interface whose mask depends on the prompt: the cells whose colour is close to
 * the mean colour under the include points (label 1; the padding point −1 and excludes are ignored). Its logits
 * go through SAM's own post-processing: upscale to S × S, crop to the resized image, resize to `orig_im_size`.
 * It returns three masks, the best (by `iou_predictions`) being that colour region. With `boxCorners` a box prompt
 * (its corners labelled 2 and 3) counts as one include point at its centre, as SAM segments the object a box frames:
 * a box drawn around a region, or inside it, selects it.
 */
export function buildSamDecoder(size = 1024, options: { boxCorners?: boolean } = {}): Uint8Array {
  const grid = size / 16;
  const g = new OnnxGraph('test-sam-decoder');
  const embeddings = g.input('image_embeddings', [1, 256, grid, grid]);
  const coords = g.input('point_coords', [1, 'points', 2]);
  const labels = g.input('point_labels', [1, 'points']);
  g.input('mask_input', [1, 1, 256, 256]);
  g.input('has_mask_input', [1]);
  const origSize = g.input('orig_im_size', [2]);

  const colours = g.op('Reshape', [g.op('Slice', [embeddings, g.ints([0]), g.ints([3]), g.ints([1])]), g.ints([3, grid, grid])]);
  const cell = g.op('Floor', [g.op('Div', [coords, g.scalar(16)])]);
  const cellRamp = g.floats(Array.from({ length: grid }, (_, i) => i), [grid]);
  const oneHot = (axis: number) => {
    const index = g.op('Reshape', [g.op('Slice', [cell, g.ints([axis]), g.ints([axis + 1]), g.ints([2])]), g.ints([-1, 1])]);
    return g.op('Cast', [g.op('Equal', [index, cellRamp])], { to: DataType.FLOAT }); // [n, grid]
  };
  const columns = g.op('Transpose', [oneHot(0)], { perm: [1, 0] }); // [grid, n]
  const rows = g.op('Transpose', [oneHot(1)], { perm: [1, 0] }); // [grid, n]
  const perPoint = g.op('ReduceSum', [g.op('Mul', [g.op('MatMul', [colours, columns]), rows]), g.ints([1])], { keepdims: 0 }); // [3, n]
  const includeLabel = (label: number) => g.op('Cast', [g.op('Equal', [labels, g.scalar(label)])], { to: DataType.FLOAT });
  const include = includeLabel(1); // [1, n]
  let total = g.op('ReduceSum', [g.op('Mul', [perPoint, include]), g.ints([1])], { keepdims: 1 }); // [3, 1]
  let count = g.op('ReduceSum', [include], { keepdims: 1 });
  if (options.boxCorners) {
    // The box's centre, the mean of its two corners, looked up as one more point.
    const corners = g.op('Add', [includeLabel(2), includeLabel(3)]); // [1, n]
    const centre = g.op('MatMul', [g.op('Div', [corners, g.scalar(2)]), g.op('Reshape', [coords, g.ints([-1, 2])])]); // [1, 2]
    const at = (axis: number) => g.op('Cast', [g.op('Equal', [g.op('Floor', [g.op('Div', [g.op('Slice', [centre, g.ints([axis]), g.ints([axis + 1]), g.ints([1])]), g.scalar(16)])]), cellRamp])], { to: DataType.FLOAT }); // [1, grid]
    const boxColour = g.op('ReduceSum', [g.op('Mul', [g.op('MatMul', [colours, g.op('Transpose', [at(0)], { perm: [1, 0] })]), g.op('Transpose', [at(1)], { perm: [1, 0] })]), g.ints([1])], { keepdims: 0 }); // [3, 1]
    const boxed = g.op('ReduceMax', [corners], { keepdims: 1 }); // 1 with a box, else 0
    total = g.op('Add', [total, g.op('Mul', [boxColour, boxed])]);
    count = g.op('Add', [count, boxed]);
  }
  const colour = g.op('Reshape', [g.op('Div', [total, count]), g.ints([3, 1, 1])]);
  const difference = g.op('Sub', [colours, colour]);
  const distance = g.op('ReduceSum', [g.op('Mul', [difference, difference]), g.ints([0])], { keepdims: 0 });
  // Saturated ±10 logits put the zero crossing halfway between an inside and an outside cell: on their border.
  const logits = g.op('Clip', [g.op('Mul', [g.op('Sub', [g.scalar(1), distance]), g.scalar(100)]), g.scalar(-10), g.scalar(10)]);
  const lowRes = g.op('Reshape', [logits, g.ints([1, 1, grid, grid])]);

  // SAM's postprocess_masks: upscale to the encoder frame, crop the resized image, resize to the original size.
  const upscaled = g.op('Resize', [lowRes, '', g.floats([1, 1, 16, 16], [4])], { mode: 'linear' });
  const longest = g.op('ReduceMax', [origSize], { keepdims: 1 });
  const resized = g.op('Floor', [g.op('Add', [g.op('Mul', [origSize, g.op('Div', [g.scalar(size), longest])]), g.scalar(0.5)])]);
  const cropped = g.op('Slice', [upscaled, g.ints([0, 0]), g.op('Cast', [resized], { to: DataType.INT64 }), g.ints([2, 3])]);
  const outSize = g.op('Concat', [g.ints([1, 1]), g.op('Cast', [origSize], { to: DataType.INT64 })], { axis: 0 });
  const region = g.op('Resize', [cropped, '', '', outSize], { mode: 'linear' });
  const empty = g.op('Sub', [g.op('Mul', [region, g.scalar(0)]), g.scalar(10)]);
  const everything = g.op('Add', [g.op('Mul', [region, g.scalar(0)]), g.scalar(10)]);
  g.op('Concat', [empty, region, everything], { axis: 1 }, 'masks');
  g.op('Identity', [g.floats(SAM_TEST_SCORES, [1, 3])], {}, 'iou_predictions');
  g.output('masks', [1, 3, 'height', 'width']);
  g.output('iou_predictions', [1, 3]);
  return g.toBytes();
}
