/**
 * COCO uncompressed run-length encoding: `counts` alternate background/foreground run lengths over the pixels in
 * column-major order (down each column, then the next column), starting with background.
 */
export interface Rle {
  size: [height: number, width: number];
  counts: number[];
}

/** A binary mask, row-major, one byte per pixel (0 or 1). */
export interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function encodeRle(mask: Bitmap): Rle {
  const { width, height, data } = mask;
  const counts: number[] = [];
  let current = 0;
  let run = 0;
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const value = data[y * width + x] ? 1 : 0;
      if (value !== current) {
        counts.push(run);
        run = 0;
        current = value;
      }
      run++;
    }
  }
  counts.push(run);
  return { size: [height, width], counts };
}

export function decodeRle(rle: Rle): Bitmap {
  const [height, width] = rle.size;
  const total = width * height;
  const data = new Uint8Array(total);
  let index = 0;
  let value = 0;
  for (const run of rle.counts) {
    if (value) {
      // Runs past the last pixel are dropped: mapped to row-major they would land on pixels of other rows.
      const end = Math.min(index + run, total);
      for (let i = index; i < end; i++) data[(i % height) * width + Math.floor(i / height)] = 1;
    }
    index += run;
    value ^= 1;
  }
  return { width, height, data };
}

/** Why an RLE is malformed for an image of the given size, or null when it is well formed. */
export function rleProblem(rle: Rle, height: number, width: number): string | null {
  if (rle.size[0] !== height || rle.size[1] !== width) {
    return `mask size [${rle.size.join(', ')}] does not match the image size [${height}, ${width}] (height, width)`;
  }
  let total = 0;
  for (const run of rle.counts) {
    if (!Number.isInteger(run) || run < 0) return 'counts must be non-negative integers';
    total += run;
  }
  if (total !== height * width) return `counts sum to ${total}, expected height × width = ${height * width}`;
  return null;
}

/** Foreground pixel count. */
export function rleArea(rle: Rle): number {
  let area = 0;
  for (let i = 1; i < rle.counts.length; i += 2) area += rle.counts[i];
  return area;
}

/** Tight bounding box of the foreground in pixel units, or null for an empty mask. */
export function rleBbox(rle: Rle): Box | null {
  const [height] = rle.size;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  let index = 0;
  for (let i = 0; i < rle.counts.length; i++) {
    const run = rle.counts[i];
    if (i % 2 === 1 && run > 0) {
      const first = index;
      const last = index + run - 1;
      const x0 = Math.floor(first / height);
      const x1 = Math.floor(last / height);
      minX = Math.min(minX, x0);
      maxX = Math.max(maxX, x1);
      if (x1 > x0) {
        // A run that wraps past the end of a column reaches both the last row of one and the first row of the next.
        minY = 0;
        maxY = height - 1;
      } else {
        minY = Math.min(minY, first % height);
        maxY = Math.max(maxY, last % height);
      }
    }
    index += run;
  }
  if (minX === Infinity) return null;
  return { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}
