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

/** How an image input is laid out: planar `[1, 3, H, W]`, or interleaved `[H, W, 3]` / `[1, H, W, 3]`. */
export interface ImageInputLayout {
  layout: 'nchw' | 'hwc';
  /** HWC only: a leading batch dimension. */
  batch: boolean;
  height: number | string;
  width: number | string;
}

/** The layout of an image input told from its shape, or null when it is no 3-channel image. */
export function imageInputLayout(dims: readonly (number | string)[]): ImageInputLayout | null {
  const three = (d: number | string | undefined) => d === 3 || typeof d === 'string';
  if (dims.length === 3 && dims[2] === 3) return { layout: 'hwc', batch: false, height: dims[0], width: dims[1] };
  if (dims.length !== 4 || (typeof dims[0] === 'number' && dims[0] !== 1)) return null;
  if (dims[3] === 3 && dims[1] !== 3) return { layout: 'hwc', batch: true, height: dims[1], width: dims[2] };
  return three(dims[1]) ? { layout: 'nchw', batch: true, height: dims[2], width: dims[3] } : null;
}
