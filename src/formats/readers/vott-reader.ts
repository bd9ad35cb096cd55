import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, DatasetSource, Point } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { csvFields } from './openimages-reader.js';
import { listImage, listedItems, skipMissingImage, type ListedImage } from './listed-images.js';
import { findImage, splitOfPath, type DatasetScan } from './scan.js';

/** VoTT's CSV export header: `"image","xmin","ymin","xmax","ymax","label"`. */
export function isVottCsvHeader(line: string): boolean {
  return csvFields(line).join(',').toLowerCase() === 'image,xmin,ymin,xmax,ymax,label';
}

/** VoTT 2 JSON: the export (`vott-json-export/<project>-export.json`, `assets` by id) or one `<id>-asset.json`. */
export function looksLikeVottJson(text: string): boolean {
  return /^\s*\{/.test(text) && (/"assets"\s*:\s*\{/.test(text) || /"asset"\s*:\s*\{/.test(text)) && /"regions"\s*:/.test(text);
}

interface VottRegion {
  id?: string;
  type?: string;
  tags?: unknown;
  boundingBox?: { left?: number; top?: number; width?: number; height?: number };
  points?: { x?: number; y?: number }[];
}
interface VottAsset {
  asset?: { name?: string; path?: string; type?: number; size?: { width?: number; height?: number }; parent?: unknown };
  regions?: VottRegion[];
}

/**
 * VoTT (Microsoft Visual Object Tagging Tool 2): the CSV export (`*-export.csv` beside its images, one box a row in
 * pixels) or the JSON export / asset files (`assets.<id>.regions[]`). Regions: `RECTANGLE` and `SQUARE` → boxes (their
 * `boundingBox`), `POLYGON` → polygons, `POLYLINE` → polylines, `POINT` → points. A region with several tags becomes
 * one annotation per tag (VoTT has no multi-label region type here); a region with no tag is skipped (no class). Frames
 * of video assets (`asset.type` 2/3, `parent`) are skipped as video, which is not importable yet. Classes: the
 * project's `tags` in order, then names met in regions.
 */
export async function readVott(scan: DatasetScan, jsonFiles: string[], csvFiles: string[]): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const listed = new Map<string, ListedImage>();
  const classes: string[] = [];
  const addClass = (name: string) => void (classes.includes(name) || classes.push(name));
  for (const file of csvFiles) {
    const dir = posix.dirname(file);
    const lines = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/);
    const missing = new Map<string, Annotation[]>();
    for (const [n, line] of lines.entries()) {
      if (n === 0 || !line.trim()) continue;
      const [image, ...rest] = csvFields(line);
      const label = rest.pop() ?? '';
      const [xmin, ymin, xmax, ymax] = rest.map(Number);
      if (![xmin, ymin, xmax, ymax].every(Number.isFinite) || !label) throw new FormatError(`${file} line ${n + 1}: expected image,xmin,ymin,xmax,ymax,label`);
      addClass(label);
      const annotation: Annotation = { type: 'bbox', className: label, geometry: { x: xmin, y: ymin, width: xmax - xmin, height: ymax - ymin } };
      const path = findImage(scan, image, [dir]);
      if (!path) missing.set(image, [...(missing.get(image) ?? []), annotation]);
      else listImage(listed, path, splitOfPath(path), [annotation]);
    }
    for (const [image, list] of missing) skipMissingImage(ledger, file, image, list);
  }
  for (const file of jsonFiles) {
    let doc: { tags?: { name?: string }[]; assets?: Record<string, VottAsset> } & VottAsset;
    try {
      doc = JSON.parse(await readFile(join(scan.root, file), 'utf8'));
    } catch (error) {
      throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    for (const tag of doc.tags ?? []) if (typeof tag?.name === 'string' && tag.name) addClass(tag.name);
    const assets = doc.assets ? Object.values(doc.assets) : [doc];
    for (const entry of assets) {
      const asset = entry.asset ?? {};
      const reference = asset.name ?? asset.path ?? '';
      const annotations: Annotation[] = [];
      for (const [i, region] of (entry.regions ?? []).entries()) {
        const what = `region ${region.id ?? i + 1} of ${reference} (${region.type ?? 'no type'})`;
        const tags = Array.isArray(region.tags) ? region.tags.filter((t): t is string => typeof t === 'string' && t !== '') : [];
        if (tags.length === 0) {
          ledger.skip('annotations', vottType(region.type), { file, item: what, reason: 'the region has no tag, so no class' });
          continue;
        }
        const shape = vottShape(region);
        if (!shape) {
          for (const _ of tags) ledger.skip('annotations', String(region.type ?? 'unknown'), { file, item: what, reason: 'a region type or geometry Versa cannot read' });
          continue;
        }
        for (const tag of tags) {
          addClass(tag);
          annotations.push({ ...shape, className: tag } as Annotation);
        }
      }
      if (asset.type === 2 || asset.type === 3 || asset.parent) {
        ledger.skip('images', '', { file, item: `video asset ${reference}`, reason: 'video frames and tracks are not importable yet' });
        for (const a of annotations) ledger.skip('annotations', a.type, { file, item: `region of video asset ${reference} (class "${a.className}")`, reason: 'video frames and tracks are not importable yet' });
        continue;
      }
      const path = reference ? findImage(scan, decodeURIComponent(reference.replace(/^file:/, '')), [posix.dirname(file)]) : null;
      if (!path) {
        skipMissingImage(ledger, file, reference || '(unnamed asset)', annotations);
        continue;
      }
      const image = listImage(listed, path, splitOfPath(path), annotations);
      if (asset.size?.width && asset.size.height) Object.assign(image, { width: asset.size.width, height: asset.size.height });
    }
  }
  const types = new Set<string>();
  for (const image of listed.values()) for (const a of image.annotations as Annotation[]) types.add(a.type);
  const projectType = types.has('polygon') ? 'instance_segmentation' : 'object_detection';
  return { format: 'vott', projectType, classes, ledger, items: listedItems(scan, listed) };
}

function vottType(type: string | undefined): string {
  return ({ RECTANGLE: 'bbox', SQUARE: 'bbox', POLYGON: 'polygon', POLYLINE: 'polyline', POINT: 'points' } as Record<string, string>)[type ?? ''] ?? String(type ?? 'unknown');
}

function vottShape(region: VottRegion): Omit<Annotation, 'className'> | null {
  const points: Point[] = (region.points ?? []).map((p) => [Number(p.x), Number(p.y)] as Point).filter((p) => p.every(Number.isFinite));
  switch (region.type) {
    case 'RECTANGLE':
    case 'SQUARE': {
      const b = region.boundingBox;
      if (b && [b.left, b.top, b.width, b.height].every((v) => typeof v === 'number' && Number.isFinite(v))) {
        return { type: 'bbox', geometry: { x: b.left!, y: b.top!, width: b.width!, height: b.height! } };
      }
      if (points.length < 2) return null;
      const xs = points.map((p) => p[0]);
      const ys = points.map((p) => p[1]);
      return { type: 'bbox', geometry: { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) } };
    }
    case 'POLYGON':
      return points.length >= 3 ? { type: 'polygon', geometry: { points } } : null;
    case 'POLYLINE':
      return points.length >= 2 ? { type: 'polyline', geometry: { points } } : null;
    case 'POINT':
      return points.length >= 1 ? { type: 'points', geometry: { points } } : null;
    default:
      return null;
  }
}
