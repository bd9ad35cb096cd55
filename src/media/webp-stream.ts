/**
 * Splits a stream of concatenated WebP files (FFmpeg's `image2pipe` with libwebp) into one buffer per image, by the
 * RIFF header's size: "RIFF", the size of what follows (little-endian 32 bits), "WEBP".
 */
export class WebpStreamSplitter {
  private buffer: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns the images they complete, in order. Throws on bytes that are not a WebP stream. */
  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const images: Buffer[] = [];
    while (this.buffer.length >= 12) {
      if (this.buffer.toString('latin1', 0, 4) !== 'RIFF' || this.buffer.toString('latin1', 8, 12) !== 'WEBP') {
        throw new Error('not a WebP stream: an image does not start with a RIFF WEBP header');
      }
      const end = 8 + this.buffer.readUInt32LE(4);
      if (this.buffer.length < end) break;
      images.push(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end);
    }
    return images;
  }

  /** Bytes left over that do not make a whole image (0 after a complete stream). */
  get pending(): number {
    return this.buffer.length;
  }
}
