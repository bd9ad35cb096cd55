import { geometryBox } from '../../imaging/geometry.js';
import { decodeRle, rleBbox, type Box, type Rle } from '../../imaging/rle.js';
import type { Annotation, Split } from '../dataset.js';
import type { ExportTally, Wrote } from './export-tally.js';

/**
 * The box a box-only format (VOC, CreateML, CSV) writes for an annotation, clipped to the image when its size is
 * given, and tallied: an upright box is kept; a rotated box and every other shape is converted to its envelope
 * (`"ellipse→bbox"`); a classification (no geometry) and a shape with no area in the image are left out (null).
 * `wrote`: what the writer writes with each box it writes.
 */
export function boxOrTally(a: Annotation, tally: ExportTally, image?: { width: number; height: number }, wrote?: Wrote): Box | null {
  if (a.type === 'classification') {
    tally.shape(a, 'skipped', 'classification');
    return null;
  }
  const envelope = geometryBox(a.type, a.geometry);
  const box = envelope && image ? clipBox(envelope, image) : envelope;
  if (!box || box.width <= 0 || box.height <= 0) {
    tally.shape(a, 'skipped', `${a.type} (no area in the image)`);
    return null;
  }
  if (a.type === 'bbox' && !a.geometry.rotation) tally.shape(a, 'kept', 'bbox', wrote);
  else tally.shape(a, 'converted', `${a.type}${a.type === 'bbox' ? ' (rotated)' : ''}→bbox`, wrote);
  return box;
}

function clipBox(box: Box, image: { width: number; height: number }): Box {
  const x = Math.max(0, box.x);
  const y = Math.max(0, box.y);
  return { x, y, width: Math.min(image.width, box.x + box.width) - x, height: Math.min(image.height, box.y + box.height) - y };
}

/** Subset names the interchange formats use for our splits (CVAT, Datumaro: `default` for none). */
export function subsetOf(split: Split | null): string {
  return split ?? 'default';
}

/** pycocotools' compressed string form of RLE counts (the inverse of decodeCompressedCounts). */
export function encodeCompressedCounts(counts: number[]): string {
  let out = '';
  for (let i = 0; i < counts.length; i++) {
    let x = counts[i];
    if (i > 2) x -= counts[i - 2];
    let more = true;
    while (more) {
      let c = x & 0x1f;
      x >>= 5;
      more = c & 0x10 ? x !== -1 : x !== 0;
      if (more) c |= 0x20;
      out += String.fromCharCode(c + 48);
    }
  }
  return out;
}

/** A mask cut to its bounding box, row-major (CVAT's `<mask>` and LabelMe's mask shapes store this). */
export function maskCrop(rle: Rle): { left: number; top: number; width: number; height: number; data: Uint8Array } | null {
  const box = rleBbox(rle);
  if (!box || box.width <= 0 || box.height <= 0) return null;
  const bitmap = decodeRle(rle);
  const left = Math.floor(box.x);
  const top = Math.floor(box.y);
  const width = Math.min(bitmap.width - left, Math.ceil(box.x + box.width) - left);
  const height = Math.min(bitmap.height - top, Math.ceil(box.y + box.height) - top);
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = bitmap.data[(top + y) * bitmap.width + left + x];
  return { left, top, width, height, data };
}

/** Row-major run lengths starting with a background run (CVAT's mask `rle` attribute). */
export function rowRuns(data: Uint8Array): number[] {
  const runs: number[] = [];
  let current = 0;
  let run = 0;
  for (const v of data) {
    const value = v ? 1 : 0;
    if (value !== current) {
      runs.push(run);
      run = 0;
      current = value;
    }
    run++;
  }
  runs.push(run);
  return runs;
}
