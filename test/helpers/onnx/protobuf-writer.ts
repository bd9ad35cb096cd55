/**
 * The few protobuf wire-format encodings needed to write ONNX files: varints (int64 as two's complement), 32-bit
 * floats, length-delimited bytes and nested messages. Chunks are kept as a list so multi-megabyte weight tensors
 * are copied once, at `finish`.
 */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(BigInt.asUintN(64, BigInt(value)));
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    return this.push(bytes);
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(BigInt(value.length));
    return this.push(value);
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (writer: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  /** A packed repeated int64 field. */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const value of values) inner.varint(BigInt.asUintN(64, BigInt(value)));
    return this.bytes(field, inner.finish());
  }

  /** A packed repeated float field. */
  packedFloats(field: number, values: readonly number[]): this {
    return this.bytes(field, new Uint8Array(Float32Array.from(values).buffer));
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }

  private tag(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private varint(value: bigint): void {
    const bytes: number[] = [];
    let rest = value;
    do {
      let byte = Number(rest & 0x7fn);
      rest >>= 7n;
      if (rest > 0n) byte |= 0x80;
      bytes.push(byte);
    } while (rest > 0n);
    this.push(Uint8Array.from(bytes));
  }

  private push(bytes: Uint8Array): this {
    this.chunks.push(bytes);
    this.length += bytes.length;
    return this;
  }
}
