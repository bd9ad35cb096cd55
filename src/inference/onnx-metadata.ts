/**
 * Reads the `metadata_props` of an ONNX ModelProto (field 14, entries of key 1 / value 2) with a minimal protobuf
 * reader, because onnxruntime-node does not expose custom metadata. Everything else in the file, including
 * multi-megabyte weights, is skipped by length without being decoded.
 */
export function readOnnxMetadata(model: Uint8Array): Record<string, string> {
  const metadata: Record<string, string> = {};
  const reader = new ProtoReader(model, 0, model.length);
  while (!reader.done()) {
    const { field, wireType } = reader.tag();
    if (field === 14 && wireType === 2) {
      const entry = reader.sub();
      let key = '';
      let value = '';
      while (!entry.done()) {
        const inner = entry.tag();
        if (inner.field === 1 && inner.wireType === 2) key = entry.string();
        else if (inner.field === 2 && inner.wireType === 2) value = entry.string();
        else entry.skip(inner.wireType);
      }
      metadata[key] = value;
    } else {
      reader.skip(wireType);
    }
  }
  return metadata;
}

/**
 * `metadata_props` entries encoded as they sit at the top level of a ModelProto: protobuf lets a repeated field be
 * appended after the rest of a message, so appending these bytes to a serialized model adds the entries.
 */
export function encodeOnnxMetadata(entries: Record<string, string>): Uint8Array {
  const out: number[] = [];
  const encoder = new TextEncoder();
  const field = (target: number[], number: number, bytes: Uint8Array | number[]) => {
    varint(target, number * 8 + 2);
    varint(target, bytes.length);
    target.push(...bytes);
  };
  for (const [key, value] of Object.entries(entries)) {
    const entry: number[] = [];
    field(entry, 1, encoder.encode(key));
    field(entry, 2, encoder.encode(value));
    field(out, 14, entry);
  }
  return Uint8Array.from(out);
}

function varint(target: number[], value: number): void {
  while (value >= 0x80) {
    target.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  target.push(value);
}

/** What Ultralytics exports write into the ONNX metadata, parsed; absent or malformed entries are left out. */
export interface UltralyticsMetadata {
  names?: string[];
  imgsz?: [height: number, width: number];
  task?: string;
  endToEnd?: boolean;
  /** Pose models: `kpt_shape` [keypoints, values per keypoint (2 or 3)]. */
  keypointShape?: [number, number];
  /** Pose models: keypoint names (`kpt_names`, the first class's list), when given for every keypoint. */
  keypointNames?: string[];
  /** Pose models: `flip_idx`, the keypoint each one becomes in a horizontal flip. */
  flipIndex?: number[];
}

export function parseUltralyticsMetadata(metadata: Record<string, string>): UltralyticsMetadata {
  const parsed: UltralyticsMetadata = {};
  const names = metadata.names ? parseNames(metadata.names) : null;
  if (names) parsed.names = names;
  const imgsz = metadata.imgsz?.match(/-?\d+/g)?.map(Number);
  if (imgsz && imgsz.length === 1 && imgsz[0] > 0) parsed.imgsz = [imgsz[0], imgsz[0]];
  if (imgsz && imgsz.length === 2 && imgsz[0] > 0 && imgsz[1] > 0) parsed.imgsz = [imgsz[0], imgsz[1]];
  if (metadata.task) parsed.task = metadata.task.trim();
  if (metadata.end2end) parsed.endToEnd = /^true$/i.test(metadata.end2end.trim());
  const kpt = metadata.kpt_shape?.match(/\d+/g)?.map(Number);
  if (kpt && kpt.length === 2 && kpt[0] > 0 && (kpt[1] === 2 || kpt[1] === 3)) parsed.keypointShape = [kpt[0], kpt[1]];
  if (metadata.kpt_names && parsed.keypointShape) {
    // `{0: ['nose', 'left_eye', ...]}` (a list per class) or a plain list; the first list's names.
    const first = metadata.kpt_names.replace(/^\s*\{\s*\d+\s*:\s*/, '').split(']')[0];
    const names = [...first.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? m[2]).replace(/\\(.)/g, '$1'));
    if (names.length === parsed.keypointShape[0]) parsed.keypointNames = names;
  }
  const flip = metadata.flip_idx?.match(/\d+/g)?.map(Number);
  if (flip && parsed.keypointShape && flip.length === parsed.keypointShape[0] && flip.every((i) => i < flip.length)) parsed.flipIndex = flip;
  return parsed;
}

/**
 * Class names from the Python dict literal Ultralytics writes, `{0: 'person', 1: "car's"}`, in index order; null
 * when the indices are not 0..n-1.
 */
export function parseNames(text: string): string[] | null {
  const names = new Map<number, string>();
  const entry = /(\d+)\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g;
  for (const match of text.matchAll(entry)) {
    const raw = match[2] ?? match[3] ?? '';
    names.set(Number(match[1]), raw.replace(/\\(.)/g, '$1'));
  }
  if (names.size === 0) return null;
  const ordered: string[] = [];
  for (let i = 0; i < names.size; i++) {
    const name = names.get(i);
    if (name === undefined) return null;
    ordered.push(name);
  }
  return ordered;
}

class ProtoReader {
  constructor(
    private readonly bytes: Uint8Array,
    private position: number,
    private readonly end: number,
  ) {
    if (end > bytes.length) throw new Error('truncated protobuf message');
  }

  done(): boolean {
    return this.position >= this.end;
  }

  tag(): { field: number; wireType: number } {
    const tag = this.varint();
    return { field: Math.floor(tag / 8), wireType: tag % 8 };
  }

  sub(): ProtoReader {
    const length = this.varint();
    const reader = new ProtoReader(this.bytes, this.position, this.position + length);
    this.position += length;
    return reader;
  }

  string(): string {
    const length = this.varint();
    const text = new TextDecoder().decode(this.bytes.subarray(this.position, this.position + length));
    this.position += length;
    return text;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.position += 8;
    else if (wireType === 2) {
      const length = this.varint();
      this.position += length;
    }
    else if (wireType === 5) this.position += 4;
    else throw new Error(`unsupported protobuf wire type ${wireType}`);
    if (this.position > this.end) throw new Error('truncated protobuf message');
  }

  /** Varints as plain numbers: exact up to 2^53, enough for lengths and tags. */
  private varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.position >= this.end) throw new Error('truncated protobuf varint');
      const byte = this.bytes[this.position++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
      if (scale > 2 ** 63) throw new Error('protobuf varint too long');
    }
  }
}
