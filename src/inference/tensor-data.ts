/** Element types the inference code exchanges with models. */
export type TensorType = 'float32' | 'int64' | 'int32' | 'uint8' | 'bool';

/**
 * A tensor as plain data, so it can cross to the inference worker thread (its buffer is transferred, not copied)
 * without onnxruntime objects on the caller's side.
 */
export interface TensorData {
  type: TensorType;
  data: Float32Array | BigInt64Array | Int32Array | Uint8Array;
  dims: number[];
}

export function float32(data: Float32Array, dims: number[]): TensorData {
  return { type: 'float32', data, dims };
}

/** Describes one model input or output as onnxruntime reports it; symbolic dimensions are strings. */
export interface ValueInfo {
  name: string;
  type: string;
  dims: (number | string)[];
}

export interface ModelInfo {
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  /** The ModelProto's metadata_props (Ultralytics writes names, imgsz, task, stride, …). */
  metadata: Record<string, string>;
}
