import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decode as decodeRlePack } from '@thi.ng/rle-pack';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { isImageName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
import { imageSize } from './files.js';
import { addClass, finite, projectTypeOf, requireImage, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

interface LsResult {
  type?: string;
  original_width?: number;
  original_height?: number;
  value?: {
    x?: number;
    y?: number;
    width?: number;
    height?: number;
    rotation?: number;
    points?: number[][];
    rle?: number[];
    format?: string;
    rectanglelabels?: string[];
    polygonlabels?: string[];
    brushlabels?: string[];
    choices?: string[];
    labels?: string[];
  };
}
interface LsTask {
  id?: number;
  data?: Record<string, unknown>;
  annotations?: { result?: LsResult[]; was_cancelled?: boolean }[];
  completions?: { result?: LsResult[]; was_cancelled?: boolean }[];
}

/** A Label Studio JSON export: a list of tasks with `data` and `annotations[].result`. */
export function looksLikeLabelStudio(head: string): boolean {
  return /^\s*\[/.test(head) && /"(annotations|completions)"\s*:/.test(head) && /"(result|data)"\s*:/.test(head);
}

/**
 * Label Studio's JSON export (one file, a list of tasks). Per task the first annotation that was not cancelled is
 * used. Results: `rectanglelabels` (x, y, width, height in percent of the image; rotated rectangles become their
 * outline polygon), `polygonlabels` (points in percent), `brushlabels` (Label Studio's RLE of the RGBA layer,
 * decoded with @thi.ng/rle-pack into a mask) and `choices` (image-level labels). The image is the task's
 * `data.image` (or the first value that names an image file), found in the archive by its path's tail.
 */
export async function readLabelStudio(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files = s.files.filter((f) => f.toLowerCase().endsWith('.json'));
  const docs: { file: string; tasks: LsTask[] }[] = [];
  for (const file of files) {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(join(root, file), 'utf8'));
    } catch {
      continue;
    }
    if (Array.isArray(doc) && doc.some((t) => t && typeof t === 'object' && 'data' in t && ('annotations' in t || 'completions' in t))) {
      docs.push({ file, tasks: doc as LsTask[] });
    }
  }
  if (docs.length === 0) throw new FormatError('no Label Studio JSON export (a list of tasks with data and annotations) found');
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  for (const { tasks } of docs) for (const task of tasks) for (const r of resultsOf(task)) {
    for (const name of labelsOf(r)) addClass(classes, name);
    const type = ({ rectanglelabels: 'bbox', polygonlabels: 'polygon', brushlabels: 'mask', choices: 'classification' } as const)[r.type as 'choices'];
    if (type) types.push(type);
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const { file, tasks } of docs) {
      for (const task of tasks) {
        const where = `${file} task ${task.id ?? '?'}`;
        const reference = imageReference(task);
        if (!reference) throw new FormatError(`${where}: data names no image`);
        const path = requireImage(s, reference, where, ['images', 'upload', 'media']);
        const size = await imageSize(path);
        const annotations = resultsOf(task).flatMap((r) => convert(r, size, where));
        yield { split: splitOfPath(path.slice(root.length + 1)), fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
      }
    }
  }
  return { format: 'labelstudio', projectType: projectTypeOf(types), classes, items };
}

function resultsOf(task: LsTask): LsResult[] {
  const annotation = (task.annotations ?? task.completions ?? []).find((a) => !a.was_cancelled);
  return annotation?.result ?? [];
}

function labelsOf(r: LsResult): string[] {
  const v = r.value ?? {};
  return (v.rectanglelabels ?? v.polygonlabels ?? v.brushlabels ?? v.choices ?? v.labels ?? []).map((n) => String(n).trim()).filter(Boolean);
}

function imageReference(task: LsTask): string | null {
  const data = task.data ?? {};
  if (typeof data.image === 'string') return data.image;
  for (const value of Object.values(data)) if (typeof value === 'string' && isImageName(value.replace(/[?#].*$/, ''))) return value;
  return null;
}

function convert(r: LsResult, size: { width: number; height: number }, where: string): Annotation[] {
  const v = r.value ?? {};
  const names = labelsOf(r);
  if (names.length === 0) return [];
  const width = r.original_width ?? size.width;
  const height = r.original_height ?? size.height;
  // Percent coordinates are of the image as Label Studio saw it; scale to the image we have.
  const sx = size.width / 100;
  const sy = size.height / 100;
  switch (r.type) {
    case 'choices':
      return names.map((className) => ({ type: 'classification', className, geometry: {} }));
    case 'rectanglelabels': {
      if (!finite([v.x, v.y, v.width, v.height]) || v.width! <= 0 || v.height! <= 0) throw new FormatError(`${where}: a rectangle needs x, y, width, height`);
      const [x, y, w, h] = [v.x! * sx, v.y! * sy, v.width! * sx, v.height! * sy];
      const angle = ((v.rotation ?? 0) * Math.PI) / 180;
      if (Math.abs(angle) < 1e-9) return names.map((className) => ({ type: 'bbox', className, geometry: { x, y, width: w, height: h } }));
      // Rotated about its top-left corner, as Label Studio draws it.
      const corner = ([dx, dy]: Point): Point => [x + dx * Math.cos(angle) - dy * Math.sin(angle), y + dx * Math.sin(angle) + dy * Math.cos(angle)];
      const points = ([[0, 0], [w, 0], [w, h], [0, h]] as Point[]).map(corner);
      return names.map((className) => ({ type: 'polygon', className, geometry: { points } }));
    }
    case 'polygonlabels': {
      const points = (v.points ?? []).map((p) => [Number(p[0]) * sx, Number(p[1]) * sy] as Point);
      if (points.length < 3 || points.some((p) => !p.every(Number.isFinite))) throw new FormatError(`${where}: a polygon needs at least 3 points`);
      return names.map((className) => ({ type: 'polygon', className, geometry: { points: openRing(points) } }));
    }
    case 'brushlabels': {
      if (!Array.isArray(v.rle)) throw new FormatError(`${where}: a brush result needs its rle`);
      const rgba = decodeRlePack(Uint8Array.from(v.rle));
      if (rgba.length < width * height * 4) throw new FormatError(`${where}: the brush rle is shorter than ${width}×${height} pixels`);
      if (width !== size.width || height !== size.height) throw new FormatError(`${where}: the brush mask is ${width}×${height} but the image is ${size.width}×${size.height}`);
      const data = new Uint8Array(width * height);
      for (let i = 0; i < data.length; i++) data[i] = rgba[i * 4 + 3] > 0 ? 1 : 0;
      return names.map((className) => ({ type: 'mask', className, geometry: { rle: encodeRle({ width, height, data }) } }));
    }
    default:
      return [];
  }
}
