import { OnnxGraph } from './onnx-graph.js';

/** A model that takes a while: `x` [n, n] through `depth` chained MatMuls with a fixed matrix, to `y`. */
export function buildSlowModel(n = 384, depth = 12): Uint8Array {
  const g = new OnnxGraph('slow');
  let x = g.input('x', [n, n]);
  const weights = g.floats(Array.from({ length: n * n }, (_, i) => ((i * 7919) % 13) / (13 * n)), [n, n]);
  for (let i = 0; i < depth; i++) x = g.op('MatMul', [x, weights], {}, i === depth - 1 ? 'y' : undefined);
  g.output('y', [n, n]);
  return g.toBytes();
}
