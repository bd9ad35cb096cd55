import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { XMLParser } from 'fast-xml-parser';
import { headerSize, maskForeground } from '../../imaging/dataset-pixels.js';
import { specsFromValues, type AttributeValue } from '../../imaging/class-specs.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, ImageSource, Point } from '../dataset.js';
import { ImportLedger } from '../import-ledger.js';
import { FormatError } from '../format-error.js';
import { pointsBox } from '../../imaging/geometry.js';
import { mergeGroupedPolygons, openRing, rectangleOf } from '../geometry.js';
import { imageSize } from './files.js';
import { addClass, findImage, head, projectTypeOf, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

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
  group_id?: number | null;
  flags?: Record<string, unknown> | null;
  description?: string | null;
  /** X-AnyLabeling's (and Versa's) per-shape attribute values beside labelme's boolean flags. */
  attributes?: Record<string, unknown> | null;
}

/**
 * LabelMe, both forms:
 * - the labelme tool's JSON (one `<stem>.json` per image): `rectangle` → bbox, `polygon` → polygon, `circle` (centre
 *   and a point on it) → ellipse with rx = ry, `line` and `linestrip` → polyline, `point` and `points` → points,
 *   `mask` (a base64 PNG inside the box of its two points, 0/1 bytes) → mask; `group_id` → groupId (polygons of one
 *   label sharing it are one object in parts, as labelme2coco merges them); a shape's `flags` → checkbox attributes,
 *   its `attributes` object → attributes, a non-empty `description` → the text attribute `description`; the image's
 *   `flags` set to true → classifications.
 * - LabelMe 3.0 XML (`Annotations/<folder>/<stem>.xml`, images in `Images/<folder>/`, masks in `Masks/<folder>/`):
 *   `<polygon><pt>` → polygon (`<type>bounding_box</type>` → bbox), `<segm><mask>` → mask (foreground where the
 *   PNG's alpha, or else any channel, is not 0); `<occluded>yes</occluded>` → the checkbox attribute `occluded`;
 *   `<attributes>` (`a, b=c`) → attributes; `<parts>` links → one groupId per linked set.
 * What cannot be kept goes to the import ledger with why: objects marked deleted, unknown shape types, shapes with
 * too few points, masks that cannot be read, images whose file is missing.
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
  const ledger = new ImportLedger();
  const parsed: { file: string; annotations: { image: DocImage; list: Annotation[] } }[] = [];
  for (const d of docs) {
    const annotations = await annotationsOf(root, s, d.file, d.kind, ledger);
    if (annotations) parsed.push({ file: d.file, annotations });
  }
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  const seen = new Map<string, Map<string, Set<AttributeValue>>>();
  for (const d of parsed) for (const a of d.annotations.list) {
    addClass(classes, a.className);
    types.push(a.type);
    for (const [name, value] of Object.entries(a.attributes ?? {})) {
      const perClass = seen.get(a.className) ?? new Map<string, Set<AttributeValue>>();
      seen.set(a.className, perClass);
      perClass.set(name, (perClass.get(name) ?? new Set()).add(value));
    }
  }
  const classSpecs = new Map<string, ClassSpec>([...seen].map(([name, values]) => [name, { attributes: specsFromValues(values) }]));

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const d of parsed) {
      const { image } = d.annotations;
      const size = await image.size();
      yield {
        split: splitOfPath(d.file),
        fileName: image.fileName,
        source: image.source,
        ...size,
        annotations: d.annotations.list,
      };
    }
  }
  return { format: 'labelme', projectType: projectTypeOf(types), classes, classSpecs, ledger, items };
}

const SHAPE_TYPES = new Set(['rectangle', 'polygon', 'circle', 'line', 'linestrip', 'point', 'points', 'mask']);

/** A JSON value as an attribute value, or undefined when it is none (null, an object...). */
function attributeValue(value: unknown): AttributeValue | undefined {
  return typeof value === 'boolean' || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : undefined;
}

async function jsonShape(shape: LabelMeShape, image: DocImage, file: string, what: string, ledger: ImportLedger): Promise<Annotation | null> {
  const type = shape.shape_type ?? 'polygon';
  const skip = (reason: string) => {
    ledger.skip('annotations', type, { file, item: what, reason });
    return null;
  };
  const className = String(shape.label ?? '').trim();
  if (!SHAPE_TYPES.has(type)) return skip(`"${type}" is not a LabelMe shape type Versa knows`);
  if (!className) return skip('the shape has no label');
  const points = (Array.isArray(shape.points) ? shape.points : []).map((p) => [Number(p?.[0]), Number(p?.[1])] as Point);
  if (points.some((p) => !p.every(Number.isFinite))) return skip('its points are not numbers');
  const attributes: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(shape.attributes ?? {})) {
    const v = attributeValue(value);
    if (v === undefined) ledger.skip('attributes', '', { file, item: `attribute "${name}" of ${what}`, reason: 'not a boolean, number or text' });
    else attributes[name] = v;
  }
  for (const [name, value] of Object.entries(shape.flags ?? {})) {
    if (typeof value === 'boolean') attributes[name] = value;
    else ledger.skip('attributes', '', { file, item: `flag "${name}" of ${what}`, reason: 'a flag is true or false' });
  }
  if (typeof shape.description === 'string' && shape.description.trim()) attributes.description = shape.description;
  const extras = {
    className,
    ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
    ...(Number.isInteger(shape.group_id) ? { groupId: shape.group_id as number } : {}),
  };
  switch (type) {
    case 'rectangle': {
      if (points.length !== 2) return skip('a rectangle has 2 points');
      const box = pointsBox(points);
      if (!(box.width > 0 && box.height > 0)) return skip('the rectangle has no area');
      return { type: 'bbox', geometry: box, ...extras };
    }
    case 'polygon': {
      const ring = openRing(points);
      if (ring.length < 3) return skip('a polygon needs at least 3 points');
      return { type: 'polygon', geometry: { points: ring }, ...extras };
    }
    case 'circle': {
      if (points.length !== 2) return skip('a circle has 2 points (its centre and one on it)');
      const r = Math.hypot(points[1][0] - points[0][0], points[1][1] - points[0][1]);
      if (!(r > 0)) return skip('the circle has no radius');
      return { type: 'ellipse', geometry: { cx: points[0][0], cy: points[0][1], rx: r, ry: r, rotation: 0 }, ...extras };
    }
    case 'line':
    case 'linestrip':
      if (points.length < 2) return skip(`a ${type} needs at least 2 points`);
      return { type: 'polyline', geometry: { points }, ...extras };
    case 'point':
    case 'points':
      if (points.length < 1) return skip('a point shape needs a point');
      return { type: 'points', geometry: { points }, ...extras };
    default: {
      if (typeof shape.mask !== 'string' || points.length < 1) return skip('a mask shape needs its PNG and a point');
      try {
        return { type: 'mask', geometry: { rle: await labelMeMask(shape.mask, points[0], await image.size()) }, ...extras };
      } catch (error) {
        return skip(`its PNG cannot be read: ${(error as Error).message}`);
      }
    }
  }
}


/** LabelMe 3.0's `<attributes>` text: `a, b=c` (a bare name is true; `\,` `\=` escape), values typed as datumaro does. */
function xmlAttributes(text: string): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const part of text.split(/(?<!\\),/).map((p) => p.trim()).filter(Boolean)) {
    const at = part.search(/(?<!\\)=/);
    const unescape = (v: string) => v.replace(/\\([\\,="])/g, '$1');
    if (at < 0) {
      out[unescape(part)] = true;
      continue;
    }
    const raw = part.slice(at + 1);
    let value: AttributeValue = unescape(raw);
    if (/^(true|false)$/i.test(raw)) value = raw.toLowerCase() === 'true';
    else if (raw.length > 1 && raw.startsWith('"') && raw.endsWith('"')) value = unescape(raw.slice(1, -1));
    else if (raw.trim() !== '' && String(Number(raw)) === raw) value = Number(raw);
    out[unescape(part.slice(0, at))] = value;
  }
  return out;
}

/** A document's image: a file of the dataset, or the image its JSON embeds (`imageData`). */
interface DocImage {
  fileName: string;
  source: ImageSource;
  size(): Promise<{ width: number; height: number }>;
}

function fileImage(path: string): DocImage {
  return { fileName: path.split('/').pop()!, source: { path }, size: () => imageSize(path) };
}

/**
 * The image a labelme JSON embeds as base64 `imageData` (labelme's default when saving, in every version), for a
 * document whose `imagePath` is not in the dataset; null when it holds none that decodes. The bytes are read from the
 * JSON again when the image is stored, not held.
 */
async function embeddedImage(path: string, imagePath: string, data: unknown): Promise<DocImage | null> {
  if (typeof data !== 'string' || data.length === 0) return null;
  let size: { width: number; height: number };
  try {
    size = await headerSize(Buffer.from(data, 'base64'));
  } catch {
    return null;
  }
  const name = imagePath.replace(/\\/g, '/').split('/').pop() || `${path.split('/').pop()!.replace(/\.json$/i, '')}.png`;
  const open = async () => Readable.from([Buffer.from(String(JSON.parse(await readFile(path, 'utf8')).imageData), 'base64')]);
  return { fileName: name, source: { open }, size: async () => size };
}

async function annotationsOf(root: string, s: DatasetScan, file: string, kind: 'json' | 'xml', ledger: ImportLedger): Promise<{ image: DocImage; list: Annotation[] } | null> {
  const text = await readFile(join(root, file), 'utf8');
  if (kind === 'json') {
    let doc: { imagePath?: string; imageData?: unknown; shapes?: LabelMeShape[]; flags?: Record<string, unknown>; imageWidth?: number; imageHeight?: number };
    try {
      doc = JSON.parse(text);
    } catch (error) {
      throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    const shapes = Array.isArray(doc.shapes) ? doc.shapes : [];
    const found = findImage(s, String(doc.imagePath ?? ''), [dirname(file)]);
    const image = found ? fileImage(join(s.root, found)) : await embeddedImage(join(root, file), String(doc.imagePath ?? ''), doc.imageData);
    if (!image) {
      ledger.skip('images', '', { file, item: `image "${doc.imagePath ?? ''}"`, reason: 'its file is not in the archive, and the JSON embeds no imageData' });
      shapes.forEach((shape, i) => ledger.skip('annotations', shape?.shape_type ?? 'polygon', { file, item: `shape ${i + 1} (label "${shape?.label ?? ''}")`, reason: 'its image is not in the archive' }));
      return null;
    }
    const list: Annotation[] = [];
    for (const [i, shape] of shapes.entries()) {
      const what = `shape ${i + 1} (${shape?.shape_type ?? 'polygon'}, label "${shape?.label ?? ''}")`;
      const annotation = await jsonShape(shape ?? {}, image, file, what, ledger);
      if (annotation) list.push(annotation);
    }
    // Image-level labels: flags set to true.
    for (const [name, on] of Object.entries(doc.flags ?? {})) if (on === true && name.trim()) list.push({ type: 'classification', className: name.trim(), geometry: {} });
    return { image, list: mergeGroupedPolygons(list) };
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
  const objects = annotation.object ?? [];
  const found = findImage(s, String(annotation.filename ?? ''), imageDirs);
  if (!found) {
    ledger.skip('images', '', { file, item: `image "${annotation.filename ?? ''}"`, reason: 'its file is not in the archive' });
    objects.forEach((o, i) => ledger.skip('annotations', o?.segm ? 'mask' : 'polygon', { file, item: `object ${i + 1} ("${o?.name ?? ''}")`, reason: 'its image is not in the archive' }));
    return null;
  }
  const image = join(s.root, found);
  // <parts>: objects linked by hasparts/ispartof form one group (one object made of parts).
  const groupOf = partGroups(objects);
  const list: Annotation[] = [];
  for (const [i, object] of objects.entries()) {
    const className = String(object.name ?? '').trim();
    const type = object.segm ? 'mask' : String(object.type ?? '') === 'bounding_box' ? 'bbox' : 'polygon';
    const what = `object ${i + 1} (${type}, "${className}")`;
    const skip = (reason: string) => ledger.skip('annotations', type, { file, item: what, reason });
    if (String(object.deleted ?? '0').trim() === '1') {
      skip('marked deleted in LabelMe');
      continue;
    }
    if (!className) {
      skip('the object has no <name>');
      continue;
    }
    const attributes = typeof object.attributes === 'string' ? xmlAttributes(object.attributes) : {};
    if (String(object.occluded ?? '').trim() === 'yes') attributes.occluded = true;
    const group = groupOf.get(String(object.id ?? '').trim());
    const extras = { className, ...(Object.keys(attributes).length > 0 ? { attributes } : {}), ...(group ? { groupId: group } : {}) };
    if (object.polygon?.pt) {
      const points = openRing((object.polygon.pt as { x: string; y: string }[]).map((p) => [Number(p.x), Number(p.y)] as Point));
      if (points.some((p) => !p.every(Number.isFinite)) || points.length < 3) {
        skip('a polygon needs 3 numeric points');
        continue;
      }
      const box = type === 'bbox' ? rectangleOf(points) ?? pointsBox(points) : null;
      list.push(box ? { type: 'bbox', geometry: box, ...extras } : { type: 'polygon', geometry: { points }, ...extras });
    } else if (object.segm?.mask) {
      const maskRef = String(object.segm.mask);
      const maskDir = datasetBase ? `${datasetBase}/Masks/${folder}` : `Masks/${folder}`;
      const maskPath = findImage(s, maskRef, [maskDir]);
      if (!maskPath) {
        skip(`its mask "${maskRef}" is not in the archive`);
        continue;
      }
      try {
        const size = await imageSize(image);
        const mask = await maskForeground(join(root, maskPath));
        // The mask covers the image from its top left; pixels beyond the image are not part of it.
        const data = new Uint8Array(size.width * size.height);
        for (let y = 0; y < Math.min(size.height, mask.height); y++) for (let x = 0; x < Math.min(size.width, mask.width); x++) data[y * size.width + x] = mask.data[y * mask.width + x];
        list.push({ type: 'mask', geometry: { rle: encodeRle({ width: size.width, height: size.height, data }) }, ...extras });
      } catch (error) {
        skip(`its mask cannot be read: ${(error as Error).message}`);
      }
    } else {
      skip('the object has neither a <polygon> nor a <segm> mask');
    }
  }
  return { image: fileImage(image), list };
}

/** Group ids for LabelMe 3.0 objects linked by `<parts><hasparts>`/`<ispartof>` (object ids → group 1, 2, …). */
function partGroups(objects: any[]): Map<string, number> {
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let r = id;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  const link = (a: string, b: string) => {
    if (!parent.has(a)) parent.set(a, a);
    if (!parent.has(b)) parent.set(b, b);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(rb, ra);
  };
  const ids = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).split(',').map((x) => x.trim()).filter(Boolean) : []);
  for (const object of objects) {
    const id = String(object?.id ?? '').trim();
    if (!id) continue;
    for (const other of [...ids(object?.parts?.hasparts), ...ids(object?.parts?.ispartof)]) link(id, other);
  }
  const groups = new Map<string, number>();
  const out = new Map<string, number>();
  for (const object of objects) {
    const id = String(object?.id ?? '').trim();
    if (!parent.has(id)) continue;
    const root = find(id);
    if (!groups.has(root)) groups.set(root, groups.size + 1);
    out.set(id, groups.get(root)!);
  }
  return out;
}

/** labelme ≥ 5.3 mask shape: a PNG (base64) of the mask inside its box (0/1 bytes), placed at the box's first corner. */
async function labelMeMask(base64: string, [left, top]: Point, size: { width: number; height: number }) {
  const { data, ...info } = await maskForeground(Buffer.from(base64, 'base64'));
  const bitmap = new Uint8Array(size.width * size.height);
  // labelme places it at the first point truncated to integers (numpy's astype(int)).
  const x0 = Math.trunc(left);
  const y0 = Math.trunc(top);
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const tx = x0 + x;
      const ty = y0 + y;
      if (data[y * info.width + x] && tx >= 0 && ty >= 0 && tx < size.width && ty < size.height) bitmap[ty * size.width + tx] = 1;
    }
  }
  return encodeRle({ width: size.width, height: size.height, data: bitmap });
}
