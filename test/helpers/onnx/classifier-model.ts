import { OnnxGraph } from './onnx-graph.js';

/** The test classifier's classes: the colour channel with the highest mean. */
export const CLASSIFIER_CLASSES = ['red', 'green', 'blue'];

/**
 * An image classifier as Versa serves one (input `[1, 3, H, W]`, output `[1, nc]` logits): each class's logit is ten
 * times its colour channel's mean, so a red image is `red` with a probability of about 0.9999.
 */
export function buildClassifierModel(size = { width: 32, height: 32 }): Uint8Array {
  const g = new OnnxGraph('test-classify');
  const images = g.input('images', [1, 3, size.height, size.width]);
  const means = g.op('ReduceMean', [images], { axes: [2, 3], keepdims: 0 });
  g.op('Mul', [means, g.scalar(10)], {}, 'output0');
  g.output('output0', [1, CLASSIFIER_CLASSES.length]);
  const names = `{${CLASSIFIER_CLASSES.map((name, i) => `${i}: '${name}'`).join(', ')}}`;
  return g.toBytes({ metadata: { names, imgsz: `[${size.height}, ${size.width}]`, task: 'classify' } });
}
