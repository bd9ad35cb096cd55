import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
import { imageSize } from './files.js';
import { addClass, head, projectTypeOf, requireImage, scanDataset, type DatasetScan } from './scan.js';

const SHAPES = ['box', 'polygon', 'mask', 'tag', 'polyline', 'points', 'ellipse', 'skeleton', 'cuboid'];
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && (name === 'image' || name === 'label' || SHAPES.includes(name)),
});

type Attrs = Record<string, string | undefined>;
interface CvatImage extends Attrs {
  [key: string]: any;
}

/** A CVAT for images 1.1 document: root `<annotations>` with `<image>` elements (a video export has `<track>`s). */
export async function looksLikeCvatXml(path: string): Promise<boolean> {
  const text = await head(path);
  return /<annotations[\s>]/.test(text) && (/<version>\s*1\.1\s*<\/version>/.test(text) || /<image\s[^>]*name=/.test(text));
}

/**
 * CVAT for images 1.1 XML (`annotations.xml`, images under `images/` or `images/<subset>/` for a project export):
 * `<box xtl ytl xbr ybr>`, `<polygon points="x,y;…">`, `<mask rle left top width height>` (CVAT's row-major run
 * lengths inside the box, background first) and `<tag>` (image-level label). Polylines, points, ellipses, skeletons
 * and cuboids have no counterpart here and are left out. The `subset` attribute gives the split.
 */
export async function readCvat(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files: string[] = [];
  for (const f of s.files.filter((p) => p.toLowerCase().endsWith('.xml'))) if (await looksLikeCvatXml(join(root, f))) files.push(f);
  if (files.length === 0) throw new FormatError('no CVAT for images XML (annotations.xml) found');
  const docs = await Promise.all(files.map(async (file) => ({ file, doc: await parse(root, file) })));
  for (const { file, doc } of docs) {
    if (!doc.image && doc.track) throw new FormatError(`${file} is CVAT for video 1.1 (tracks): export the task as "CVAT for images 1.1" to import it`);
  }
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  for (const { doc } of docs) {
    for (const label of doc.meta?.project?.labels?.label ?? doc.meta?.task?.labels?.label ?? []) {
      if (typeof label?.name === 'string' && label.name.trim()) addClass(classes, label.name.trim());
    }
    for (const image of doc.image ?? []) {
      for (const shape of SHAPES) for (const el of image[shape] ?? []) if (typeof el.label === 'string') {
        const type = ({ box: 'bbox', polygon: 'polygon', mask: 'mask', tag: 'classification' } as const)[shape as 'box'];
        if (type) {
          addClass(classes, el.label.trim());
          types.push(type);
        }
      }
    }
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const { file, doc } of docs) {
      for (const image of (doc.image ?? []) as CvatImage[]) {
        const name = String(image.name ?? '');
        const where = `${file} image ${image.id ?? name}`;
        const subset = typeof image.subset === 'string' ? image.subset : '';
        const path = requireImage(s, name, where, subset ? [`images/${subset}`, 'images'] : ['images']);
        let width = Number(image.width);
        let height = Number(image.height);
        if (!(width > 0 && height > 0)) ({ width, height } = await imageSize(path));
        yield {
          split: splitFromName(subset),
          fileName: path.split('/').pop()!,
          source: { path },
          width,
          height,
          annotations: shapesOf(image, width, height, where),
        };
      }
    }
  }
  return { format: 'cvat', projectType: projectTypeOf(types), classes, items };
}

async function parse(root: string, file: string): Promise<any> {
  try {
    const doc = parser.parse(await readFile(join(root, file), 'utf8'));
    if (!doc.annotations || typeof doc.annotations !== 'object') throw new Error('no <annotations> element');
    return doc.annotations;
  } catch (error) {
    throw new FormatError(`${file} is not a CVAT XML document: ${(error as Error).message}`);
  }
}

function shapesOf(image: CvatImage, width: number, height: number, where: string): Annotation[] {
  const out: Annotation[] = [];
  for (const box of image.box ?? []) {
    const [xtl, ytl, xbr, ybr] = [box.xtl, box.ytl, box.xbr, box.ybr].map(Number);
    if (![xtl, ytl, xbr, ybr].every(Number.isFinite) || xbr <= xtl || ybr <= ytl) throw new FormatError(`${where}: a <box> needs xtl < xbr and ytl < ybr`);
    out.push({ type: 'bbox', className: String(box.label).trim(), geometry: { x: xtl, y: ytl, width: xbr - xtl, height: ybr - ytl } });
  }
  for (const polygon of image.polygon ?? []) {
    const points = openRing(parsePoints(String(polygon.points ?? ''), where));
    if (points.length < 3) throw new FormatError(`${where}: a <polygon> needs at least 3 points`);
    out.push({ type: 'polygon', className: String(polygon.label).trim(), geometry: { points } });
  }
  for (const mask of image.mask ?? []) {
    out.push({ type: 'mask', className: String(mask.label).trim(), geometry: { rle: encodeRle(cvatMaskBitmap(mask, width, height, where)) } });
  }
  for (const tag of image.tag ?? []) out.push({ type: 'classification', className: String(tag.label).trim(), geometry: {} });
  return out;
}

function parsePoints(text: string, where: string): Point[] {
  return text.split(';').filter((p) => p.trim()).map((pair) => {
    const [x, y] = pair.split(',').map(Number);
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw new FormatError(`${where}: points must be "x,y;x,y;…"`);
    return [x, y] as Point;
  });
}

/** CVAT's mask: run lengths (background first) over the `width`×`height` box at `left`,`top`, row by row. */
export function cvatMaskBitmap(mask: Attrs, width: number, height: number, where: string): { width: number; height: number; data: Uint8Array } {
  const [left, top, w, h] = [mask.left, mask.top, mask.width, mask.height].map(Number);
  const counts = String(mask.rle ?? '').split(',').map((c) => Number(c.trim()));
  if (![left, top, w, h].every(Number.isInteger) || w <= 0 || h <= 0 || counts.some((c) => !Number.isInteger(c) || c < 0)) {
    throw new FormatError(`${where}: a <mask> needs integer left, top, width, height and rle counts`);
  }
  const data = new Uint8Array(width * height);
  let index = 0;
  let value = 0;
  for (const run of counts) {
    if (value) {
      for (let i = index; i < index + run && i < w * h; i++) {
        const x = left + (i % w);
        const y = top + Math.floor(i / w);
        if (x < width && y < height) data[y * width + x] = 1;
      }
    }
    index += run;
    value ^= 1;
  }
  return { width, height, data };
}
