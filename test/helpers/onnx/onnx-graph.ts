import { ProtoWriter } from './protobuf-writer.js';

/** ONNX TensorProto.DataType values used by the test models. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
type ElementType = (typeof DataType)[keyof typeof DataType];

/** Attribute values: a plain integer, a list of integers, a string, a float (`{ f }`) or floats (`{ floats }`). */
export type AttributeValue = number | number[] | string | { f: number } | { floats: number[] };

interface Tensor {
  name: string;
  type: ElementType;
  dims: number[];
  data: Float32Array | BigInt64Array;
}

interface ValueInfo {
  name: string;
  type: ElementType;
  dims: (number | string)[];
}

interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, AttributeValue>;
}

/**
 * Builds an ONNX model from ops, one call per node, and serialises it as ModelProto bytes (field numbers from
 * onnx/onnx.proto). `op` returns the node's output names so graphs read like expressions.
 */
export class OnnxGraph {
  private readonly nodes: Node[] = [];
  private readonly initializers: Tensor[] = [];
  private readonly inputs: ValueInfo[] = [];
  private readonly outputs: ValueInfo[] = [];
  private counter = 0;

  constructor(private readonly name: string) {}

  input(name: string, dims: (number | string)[], type: ElementType = DataType.FLOAT): string {
    this.inputs.push({ name, dims, type });
    return name;
  }

  output(name: string, dims: (number | string)[], type: ElementType = DataType.FLOAT): void {
    this.outputs.push({ name, dims, type });
  }

  floats(data: ArrayLike<number>, dims: number[]): string {
    return this.initializer(DataType.FLOAT, Float32Array.from(data), dims);
  }

  scalar(value: number): string {
    return this.floats([value], []);
  }

  ints(data: readonly number[], dims: number[] = [data.length]): string {
    return this.initializer(DataType.INT64, BigInt64Array.from(data.map((v) => BigInt(v))), dims);
  }

  /** One node with a single output, optionally named (graph outputs must be named). */
  op(op: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, outputName?: string): string {
    return this.opN(op, inputs, 1, attributes, outputName ? [outputName] : undefined)[0];
  }

  opN(op: string, inputs: string[], count: number, attributes: Record<string, AttributeValue> = {}, names?: string[]): string[] {
    const outputs = names ?? Array.from({ length: count }, () => `${op.toLowerCase()}_${this.counter++}`);
    this.nodes.push({ op, inputs, outputs, attributes });
    return outputs;
  }

  toBytes(options: { opset?: number; metadata?: Record<string, string> } = {}): Uint8Array {
    const model = new ProtoWriter();
    model.int(1, 8); // ir_version
    model.string(2, 'versa-test');
    model.message(7, (graph) => this.writeGraph(graph));
    model.message(8, (opset) => opset.string(1, '').int(2, options.opset ?? 17));
    for (const [key, value] of Object.entries(options.metadata ?? {})) {
      model.message(14, (entry) => entry.string(1, key).string(2, value));
    }
    return model.finish();
  }

  private initializer(type: ElementType, data: Float32Array | BigInt64Array, dims: number[]): string {
    const name = `const_${this.counter++}`;
    this.initializers.push({ name, type, dims, data });
    return name;
  }

  private writeGraph(graph: ProtoWriter): void {
    for (const node of this.nodes) graph.message(1, (w) => writeNode(w, node));
    graph.string(2, this.name);
    for (const tensor of this.initializers) graph.message(5, (w) => writeTensor(w, tensor));
    for (const input of this.inputs) graph.message(11, (w) => writeValueInfo(w, input));
    for (const output of this.outputs) graph.message(12, (w) => writeValueInfo(w, output));
  }
}

function writeNode(w: ProtoWriter, node: Node): void {
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  w.string(4, node.op);
  for (const [name, value] of Object.entries(node.attributes)) w.message(5, (a) => writeAttribute(a, name, value));
}

// AttributeProto: name 1, f 2, i 3, s 4, floats 7, ints 8, type 20 (FLOAT 1, INT 2, STRING 3, FLOATS 6, INTS 7).
function writeAttribute(w: ProtoWriter, name: string, value: AttributeValue): void {
  w.string(1, name);
  if (typeof value === 'number') w.int(3, value).int(20, 2);
  else if (typeof value === 'string') w.string(4, value).int(20, 3);
  else if (Array.isArray(value)) w.packedInts(8, value).int(20, 7);
  else if ('f' in value) w.float(2, value.f).int(20, 1);
  else w.packedFloats(7, value.floats).int(20, 6);
}

// TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian).
function writeTensor(w: ProtoWriter, tensor: Tensor): void {
  w.packedInts(1, tensor.dims);
  w.int(2, tensor.type);
  w.string(8, tensor.name);
  w.bytes(9, new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
}

// ValueInfoProto: name 1, type 2 → TypeProto.tensor_type 1 → elem_type 1, shape 2 → dim 1 → dim_value 1 | dim_param 2.
function writeValueInfo(w: ProtoWriter, info: ValueInfo): void {
  w.string(1, info.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, info.type);
      tensor.message(2, (shape) => {
        for (const dim of info.dims) shape.message(1, (d) => (typeof dim === 'number' ? d.int(1, dim) : d.string(2, dim)));
      });
    }),
  );
}
