/**
 * Splits a stream of concatenated JPEG files (FFmpeg's `image2pipe` with MJPEG) into one buffer per image. The split
 * follows the file's structure rather than searching for the end marker's two bytes, which may occur inside a
 * header segment: marker segments are skipped by their length; after start-of-scan, entropy-coded data runs to the
 * first 0xFF that is neither a stuffed 0xFF00 nor a restart marker (RST0–7); the image ends at end-of-image (0xFFD9).
 */
export class JpegStreamSplitter {
  private buffer: Buffer = Buffer.alloc(0);
  /** Where scanning resumes inside `buffer` (the current image starts at 0). */
  private at = 0;
  private inScan = false;

  /** Adds bytes; returns the images they complete, in order. Throws on bytes that are not a JPEG stream. */
  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const images: Buffer[] = [];
    for (;;) {
      const end = this.scan();
      if (end === undefined) break;
      images.push(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end);
      this.at = 0;
      this.inScan = false;
    }
    return images;
  }

  /** Bytes left over that do not make a whole image (0 after a complete stream). */
  get pending(): number {
    return this.buffer.length;
  }

  /** The end offset of the image at the start of `buffer` when it is complete; undefined when more bytes are needed. */
  private scan(): number | undefined {
    const b = this.buffer;
    if (this.at === 0) {
      if (b.length < 2) return undefined;
      if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error('not a JPEG stream: an image does not start with SOI');
      this.at = 2;
    }
    for (;;) {
      if (this.inScan) {
        let i = this.at;
        for (;;) {
          i = b.indexOf(0xff, i);
          if (i < 0 || i + 1 >= b.length) {
            this.at = i < 0 ? b.length : i;
            return undefined;
          }
          const next = b[i + 1];
          if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) i += 2;
          else break;
        }
        this.at = i;
        this.inScan = false;
      }
      if (this.at + 2 > b.length) return undefined;
      if (b[this.at] !== 0xff) throw new Error('not a JPEG stream: a marker was expected');
      const marker = b[this.at + 1];
      if (marker === 0xff) {
        this.at += 1; // fill byte
        continue;
      }
      if (marker === 0xd9) return this.at + 2;
      if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        this.at += 2;
        continue;
      }
      if (this.at + 4 > b.length) return undefined;
      const length = b.readUInt16BE(this.at + 2);
      if (length < 2) throw new Error('not a JPEG stream: a segment length is under 2');
      if (this.at + 2 + length > b.length) return undefined;
      this.at += 2 + length;
      if (marker === 0xda) this.inScan = true;
    }
  }
}

/** A JPEG's encoded width and height, read from its start-of-frame segment (nothing is decoded); null when none is found. */
export function jpegFrameSize(bytes: Buffer): { width: number; height: number } | null {
  let at = 2;
  while (at + 9 <= bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    if (marker === 0xda || marker === 0xd9) return null;
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  return null;
}
