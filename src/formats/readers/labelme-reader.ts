import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { maskChannel } from '../../imaging/dataset-pixels.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { pointsBox } from '../../imaging/geometry.js';
import { openRing, rectangleOf } from '../geometry.js';
import { imageSize } from './files.js';
import { addClass, findImage, head, projectTypeOf, requireImage, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, isArray: (name) => name === 'object' || name === 'pt' });

/** LabelMe 3.0 XML (MIT LabelMe, CVAT's "LabelMe 3.0" export): `<annotation>` whose objects are `<polygon><pt>` or `<segm>`. */
export function looksLikeLabelMeXml(text: string): boolean {
  return /<annotation[\s>]/.test(text) && (/<polygon>\s*(<username>[^<]*<\/username>\s*)?<pt>/.test(text) || /<segm>/.test(text)) && !/<bndbox>/.test(text);
}

/** LabelMe JSON (wkentaro/labelme): one document per image with `shapes` and `imagePath`. */
export function looksLikeLabelMeJson(text: string): boolean {
  return /^\s*\{/.test(text) && /"shapes"\s*:/.test(text) && /"imagePath"\s*:/.test(text);
}

interface LabelMeShape {
  label?: string;
  points?: number[][];
  shape_type?: string;
  mask?: string;
}

/**
 * LabelMe, both forms: the labelme tool's JSON (one `<stem>.json` per image; `polygon`, `rectangle` and `mask`-less
 * shapes; circles, lines and points are left out) and LabelMe 3.0 XML (`Annotations/<folder>/<stem>.xml`, images in
 * `Images/<folder>/`, masks in `Masks/<folder>/`; objects marked deleted are skipped; `<type>bounding_box</type>`
 * polygons are boxes).
 */
export async function readLabelMe(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const docs: { file: string; kind: 'json' | 'xml' }[] = [];
  for (const file of s.files) {
    const lower = file.toLowerCase();
    if (!lower.endsWith('.json') && !lower.endsWith('.xml')) continue;
    const text = await head(join(root, file));
    if (lower.endsWith('.json') && looksLikeLabelMeJson(text)) docs.push({ file, kind: 'json' });
    else if (lower.endsWith('.xml') && looksLikeLabelMeXml(text)) docs.push({ file, kind: 'xml' });
  }
  if (docs.length === 0) throw new FormatError('no LabelMe JSON or LabelMe 3.0 XML files found');
  const parsed = await Promise.all(docs.map(async (d) => ({ ...d, annotations: await annotationsOf(root, s, d.file, d.kind) })));
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  for (const d of parsed) for (const a of d.annotations.list) {
    addClass(classes, a.className);
    types.push(a.type);
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const d of parsed) {
      const size = await imageSize(d.annotations.image);
      yield {
        split: splitOfPath(d.file),
        fileName: d.annotations.image.split('/').pop()!,
        source: { path: d.annotations.image },
        ...size,
        annotations: d.annotations.list,
      };
    }
  }
  return { format: 'labelme', projectType: projectTypeOf(types), classes, items };
}

async function annotationsOf(root: string, s: DatasetScan, file: string, kind: 'json' | 'xml'): Promise<{ image: string; list: Annotation[] }> {
  const text = await readFile(join(root, file), 'utf8');
  if (kind === 'json') {
    let doc: { imagePath?: string; shapes?: LabelMeShape[]; flags?: Record<string, unknown>; imageWidth?: number; imageHeight?: number };
    try {
      doc = JSON.parse(text);
    } catch (error) {
      throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    const image = requireImage(s, String(doc.imagePath ?? ''), file, [dirname(file)]);
    const list: Annotation[] = [];
    for (const shape of doc.shapes ?? []) {
      const className = String(shape.label ?? '').trim();
      const points = (shape.points ?? []).map((p) => [Number(p[0]), Number(p[1])] as Point);
      if (!className || points.some((p) => !p.every(Number.isFinite))) throw new FormatError(`${file}: every shape needs a label and numeric points`);
      if (shape.shape_type === 'rectangle' && points.length === 2) {
        const box = pointsBox(points);
        if (box.width > 0 && box.height > 0) list.push({ type: 'bbox', className, geometry: box });
      } else if ((shape.shape_type ?? 'polygon') === 'polygon' && points.length >= 3) {
        list.push({ type: 'polygon', className, geometry: { points: openRing(points) } });
      } else if (shape.shape_type === 'mask' && typeof shape.mask === 'string' && points.length >= 1) {
        list.push({ type: 'mask', className, geometry: { rle: await labelMeMask(shape.mask, points[0], await imageSize(image), file) } });
      }
    }
    // Image-level labels: flags set to true.
    for (const [name, on] of Object.entries(doc.flags ?? {})) if (on === true && name.trim()) list.push({ type: 'classification', className: name.trim(), geometry: {} });
    return { image, list };
  }
  let doc: { annotation?: { filename?: string; folder?: string; object?: any[] } };
  try {
    doc = parser.parse(text);
  } catch (error) {
    throw new FormatError(`${file} is not valid XML: ${(error as Error).message}`);
  }
  const annotation = doc.annotation ?? {};
  const folder = typeof annotation.folder === 'string' ? annotation.folder : '';
  const base = file.split('/').slice(0, -1).join('/');
  const datasetBase = base.replace(/(^|\/)Annotations(\/.*)?$/, '');
  const imageDirs = [datasetBase ? `${datasetBase}/Images/${folder}` : `Images/${folder}`, base];
  const image = requireImage(s, String(annotation.filename ?? ''), file, imageDirs);
  const list: Annotation[] = [];
  for (const object of annotation.object ?? []) {
    if (String(object.deleted ?? '0').trim() === '1') continue;
    const className = String(object.name ?? '').trim();
    if (!className) throw new FormatError(`${file}: every <object> needs a <name>`);
    if (object.polygon?.pt) {
      const points = openRing((object.polygon.pt as { x: string; y: string }[]).map((p) => [Number(p.x), Number(p.y)] as Point));
      if (points.some((p) => !p.every(Number.isFinite)) || points.length < 3) throw new FormatError(`${file}: object "${className}" needs 3 numeric points`);
      const box = String(object.type ?? '') === 'bounding_box' ? rectangleOf(points) : null;
      list.push(box ? { type: 'bbox', className, geometry: box } : { type: 'polygon', className, geometry: { points } });
    } else if (object.segm?.mask) {
      const maskRef = String(object.segm.mask);
      const maskDir = datasetBase ? `${datasetBase}/Masks/${folder}` : `Masks/${folder}`;
      const maskPath = findImage(s, maskRef, [maskDir]);
      if (!maskPath) throw new FormatError(`${file}: mask "${maskRef}" is not in the dataset`);
      const size = await imageSize(image);
      const pixels = (await maskChannel(join(root, maskPath), size)).data;
      const data = new Uint8Array(pixels.length);
      for (let i = 0; i < pixels.length; i++) data[i] = pixels[i] > 127 ? 1 : 0;
      list.push({ type: 'mask', className, geometry: { rle: encodeRle({ width: size.width, height: size.height, data }) } });
    }
  }
  return { image, list };
}

/** labelme ≥ 5.3 mask shape: a PNG (base64) of the mask inside its box, placed at the box's first corner. */
async function labelMeMask(base64: string, [left, top]: Point, size: { width: number; height: number }, file: string) {
  try {
    const { data, ...info } = await maskChannel(Buffer.from(base64, 'base64'));
    const bitmap = new Uint8Array(size.width * size.height);
    const x0 = Math.round(left);
    const y0 = Math.round(top);
    for (let y = 0; y < info.height; y++) {
      for (let x = 0; x < info.width; x++) {
        const tx = x0 + x;
        const ty = y0 + y;
        if (data[y * info.width + x] > 127 && tx >= 0 && ty >= 0 && tx < size.width && ty < size.height) bitmap[ty * size.width + tx] = 1;
      }
    }
    return encodeRle({ width: size.width, height: size.height, data: bitmap });
  } catch (error) {
    throw new FormatError(`${file}: a mask shape's PNG cannot be read: ${(error as Error).message}`);
  }
}
