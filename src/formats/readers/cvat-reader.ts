import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { AttributeSpec, AttributeValue, Skeleton } from '../../imaging/class-specs.js';
import { parseAttributeSpecs, parseSkeleton } from '../../imaging/class-specs.js';
import { normalizeDegrees, type Keypoint } from '../../imaging/geometry.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { mergeGroupedPolygons, openRing } from '../geometry.js';
import { ImportLedger } from '../import-ledger.js';
import { imageSize } from './files.js';
import { addClass, findImage, head, projectTypeOf, scanDataset, type DatasetScan } from './scan.js';

/** An XML element in document order (fast-xml-parser's `preserveOrder` output, reshaped). */
export interface El {
  tag: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false, preserveOrder: true });

function toEl(node: Record<string, unknown>): El | null {
  const tag = Object.keys(node).find((k) => k !== ':@');
  if (!tag || tag === '#text' || tag.startsWith('?')) return null;
  const raw = node[tag] as Record<string, unknown>[];
  const children: El[] = [];
  let text = '';
  for (const child of raw ?? []) {
    if ('#text' in child) text += String(child['#text']);
    else {
      const el = toEl(child);
      if (el) children.push(el);
    }
  }
  const attrs = Object.fromEntries(Object.entries((node[':@'] ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  return { tag, attrs, children, text };
}

export const kids = (el: El | undefined, tag: string) => (el?.children ?? []).filter((c) => c.tag === tag);
export const kid = (el: El | undefined, tag: string) => el?.children.find((c) => c.tag === tag);
export const textOf = (el: El | undefined, tag: string) => kid(el, tag)?.text.trim() ?? '';

/** A CVAT for images 1.1 document: root `<annotations>` with `<image>` elements (a video export has `<track>`s). */
export async function looksLikeCvatXml(path: string): Promise<boolean> {
  const text = await head(path);
  return /<annotations[\s>]/.test(text) && (/<version>\s*1\.1\s*<\/version>/.test(text) || /<image\s[^>]*name=/.test(text));
}

/** A label of the document's `<meta>`: its attribute declarations, and for a skeleton its points and edges. */
export interface LabelDecl {
  name: string;
  type: string;
  attributes: AttributeSpec[];
  svg: string;
  parent: string;
}

/**
 * CVAT for images 1.1 XML (`annotations.xml`, images under `images/` or `images/<subset>/` for a project export),
 * every shape CVAT writes:
 * - `<box xtl ytl xbr ybr rotation?>` → bbox (CVAT's convention: the box before rotation, degrees clockwise);
 * - `<polygon>` → polygon; polygons of one label sharing a `group_id` in an image are one object in parts;
 * - `<polyline>` → polyline, `<points>` → points, `<ellipse cx cy rx ry rotation?>` → ellipse;
 * - `<mask rle left top width height>` → mask (CVAT's row-major run lengths inside the box, background first);
 * - `<skeleton>` → keypoints in the order of the label's sublabels (`<label><parent>`), edges from its `<svg>`;
 *   a point `outside="1"` is not labelled (v 0), `occluded="1"` is labelled but not visible (v 1), else v 2;
 * - `<tag>` → classification.
 * `group_id` → groupId; `<attribute name>` values → attributes, typed by the label's declarations (`checkbox`,
 * `select`/`radio` → select, `number`, `text`; `mutable` has no meaning without tracks and is not kept); a shape's
 * `occluded="1"` becomes the checkbox attribute `occluded` (declared on its class). Shapes are ordered by `z_order`.
 * What cannot be kept goes to the ledger with its reason: cuboids, tracks in an images export, shapes without a
 * label or with unreadable geometry, attributes of a skeleton's points, images whose file is missing.
 */
export async function readCvat(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files: string[] = [];
  for (const f of s.files.filter((p) => p.toLowerCase().endsWith('.xml'))) if (await looksLikeCvatXml(join(root, f))) files.push(f);
  if (files.length === 0) throw new FormatError('no CVAT for images XML (annotations.xml) found');
  const docs = await Promise.all(files.map(async (file) => ({ file, doc: await parse(root, file) })));
  for (const { file, doc } of docs) {
    if (kids(doc, 'image').length === 0 && kids(doc, 'track').length > 0) {
      throw new FormatError(`${file} is CVAT for video 1.1 (tracks): import it with format=cvat_video`);
    }
  }
  const ledger = new ImportLedger();
  const classes: string[] = [];
  const labels = new Map<string, LabelDecl>();
  /** Sublabels (skeleton points) by their parent, in declaration order: names may repeat across skeletons. */
  const skeletons = new Map<string, string[]>();
  for (const { doc } of docs) {
    const meta = kid(doc, 'meta');
    const holder = [kid(meta, 'project'), kid(meta, 'task'), kid(meta, 'job')].find((h) => kid(h, 'labels'));
    for (const label of kids(kid(holder, 'labels'), 'label')) {
      const decl = labelDecl(label);
      if (!decl.name) continue;
      if (decl.parent) {
        const names = skeletons.get(decl.parent) ?? [];
        if (!names.includes(decl.name)) skeletons.set(decl.parent, [...names, decl.name]);
      } else if (!labels.has(decl.name)) {
        labels.set(decl.name, decl);
        addClass(classes, decl.name);
      }
    }
  }
  // A skeleton whose sublabels are not declared takes its point names in the order the file first shows them.
  for (const { doc } of docs) for (const image of kids(doc, 'image')) for (const sk of kids(image, 'skeleton')) {
    const name = (sk.attrs.label ?? '').trim();
    if (!name || (labels.get(name)?.type === 'skeleton' && skeletons.has(name))) continue;
    const names = skeletons.get(name) ?? [];
    for (const p of kids(sk, 'points')) if (p.attrs.label && !names.includes(p.attrs.label)) names.push(p.attrs.label);
    skeletons.set(name, names);
  }
  const attributeSpecs = new Map<string, AttributeSpec[]>();
  for (const decl of labels.values()) attributeSpecs.set(decl.name, decl.attributes);
  const occludedClasses = new Set<string>();
  const types: Annotation['type'][] = [];

  const prepared: DatasetItem[] = [];
  for (const { file, doc } of docs) {
    for (const track of kids(doc, 'track')) {
      ledger.skip('tracks', '', {
        file,
        item: `track ${track.attrs.id ?? ''} (label "${track.attrs.label ?? ''}")`,
        reason: 'a track (CVAT for video) in an images export: export the task as "CVAT for images 1.1" to get its shapes per image',
      });
    }
    for (const image of kids(doc, 'image')) {
      const name = image.attrs.name ?? '';
      const where = `image ${name || image.attrs.id}`;
      const subset = image.attrs.subset ?? '';
      const found = findImage(s, name, subset ? [`images/${subset}`, 'images'] : ['images']);
      const shapes = image.children.filter((c) => c.tag !== 'attribute');
      if (!found) {
        ledger.skip('images', '', { file, item: where, reason: 'its file is not in the archive' });
        for (const shape of shapes) ledger.skip('annotations', shape.tag, { file, item: `${where}: ${shape.tag} (label "${shape.attrs.label ?? ''}")`, reason: 'its image is not in the archive' });
        continue;
      }
      const path = join(s.root, found);
      let width = Number(image.attrs.width);
      let height = Number(image.attrs.height);
      if (!(width > 0 && height > 0)) ({ width, height } = await imageSize(path));
      const context: ShapeContext = { file, where, width, height, ledger, attributeSpecs, skeletons, occludedClasses };
      const annotations = mergeGroupedPolygons(shapesOf(shapes, context));
      for (const a of annotations) {
        addClass(classes, a.className);
        types.push(a.type);
      }
      prepared.push({ split: splitFromName(subset), fileName: found.split('/').pop()!, source: { path }, width, height, annotations });
    }
  }

  const classSpecs = classSpecsOf(classes, attributeSpecs, skeletons, labels, occludedClasses);

  async function* items(): AsyncGenerator<DatasetItem> {
    yield* prepared;
  }
  return { format: 'cvat', projectType: projectTypeOf(types), classes, classSpecs, ledger, items };
}

export async function parse(root: string, file: string): Promise<El> {
  try {
    const nodes = parser.parse(await readFile(join(root, file), 'utf8')) as Record<string, unknown>[];
    const annotations = nodes.map(toEl).find((el) => el?.tag === 'annotations');
    if (!annotations) throw new Error('no <annotations> element');
    return annotations;
  } catch (error) {
    throw new FormatError(`${file} is not a CVAT XML document: ${(error as Error).message}`);
  }
}

/** CVAT separates an attribute's values by newlines (older exports by spaces). */
function valueList(text: string, fallback: string): string[] {
  if (text.includes('\n')) return text.split('\n').map((v) => v.trim()).filter((v) => v !== '');
  const words = text.split(/\s+/).filter(Boolean);
  return words.length > 1 && (fallback === '' || words.includes(fallback)) ? words : text.trim() ? [text.trim()] : [];
}

/** A `<label>` of `<meta>`: its attribute declarations as Versa specs (radio → select; mutable is not kept). */
export function labelDecl(label: El): LabelDecl {
  const attributes: AttributeSpec[] = [];
  for (const attribute of kids(kid(label, 'attributes'), 'attribute')) {
    const name = textOf(attribute, 'name');
    const inputType = textOf(attribute, 'input_type');
    const fallback = kid(attribute, 'default_value')?.text.trim() ?? '';
    const values = valueList(kid(attribute, 'values')?.text ?? '', fallback);
    let spec: Record<string, unknown>;
    if (inputType === 'checkbox') spec = { name, type: 'checkbox', default: fallback.toLowerCase() === 'true' };
    else if (inputType === 'select' || inputType === 'radio') spec = { name, type: 'select', values, ...(values.includes(fallback) ? { default: fallback } : {}) };
    else if (inputType === 'number') {
      const range = values.map(Number);
      const ok = range.length >= 2 && range.length <= 3 && range.every(Number.isFinite) && range[0] <= range[1];
      spec = { name, type: 'number', ...(ok ? { values: range } : {}), ...(fallback !== '' && Number.isFinite(Number(fallback)) ? { default: Number(fallback) } : {}) };
    } else spec = { name, type: 'text', ...(fallback ? { default: fallback } : {}) };
    try {
      attributes.push(...parseAttributeSpecs([spec]));
    } catch {
      // A default the declaration itself does not admit (a number outside its range...): the spec without it.
      try {
        attributes.push(...parseAttributeSpecs([{ ...spec, default: undefined }]));
      } catch {
        // Not a declaration Versa can hold (an empty select): values given for it are skipped, each with its reason.
      }
    }
  }
  return { name: textOf(label, 'name'), type: textOf(label, 'type'), attributes, svg: kid(label, 'svg')?.text ?? '', parent: textOf(label, 'parent') };
}

/** A skeleton's edges from CVAT's `<svg>`: `<circle data-node-id data-label-name>` nodes, `<line data-node-from data-node-to>`. */
export function skeletonEdges(svg: string, points: string[]): [number, number][] {
  const nodes = new Map<string, number>();
  for (const m of svg.matchAll(/<circle\b[^>]*>/g)) {
    const id = /data-node-id="([^"]*)"/.exec(m[0])?.[1];
    const label = /data-label-name="([^"]*)"/.exec(m[0])?.[1];
    if (id !== undefined && label !== undefined && points.includes(label)) nodes.set(id, points.indexOf(label));
  }
  const edges: [number, number][] = [];
  for (const m of svg.matchAll(/<line\b[^>]*>/g)) {
    const from = nodes.get(/data-node-from="([^"]*)"/.exec(m[0])?.[1] ?? '');
    const to = nodes.get(/data-node-to="([^"]*)"/.exec(m[0])?.[1] ?? '');
    if (from !== undefined && to !== undefined && from !== to && !edges.some(([a, b]) => (a === from && b === to) || (a === to && b === from))) edges.push([from, to]);
  }
  return edges;
}

export interface ShapeContext {
  file: string;
  where: string;
  width: number;
  height: number;
  ledger: ImportLedger;
  attributeSpecs: Map<string, AttributeSpec[]>;
  skeletons: Map<string, string[]>;
  occludedClasses: Set<string>;
}

/** An attribute's text as its declaration types it (CVAT writes every value as text). */
function typedValue(text: string, spec: AttributeSpec | undefined): AttributeValue {
  if (spec?.type === 'checkbox' && /^(true|false)$/i.test(text.trim())) return text.trim().toLowerCase() === 'true';
  if (spec?.type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

export function attributesOf(shape: El, className: string, context: ShapeContext): Record<string, AttributeValue> | undefined {
  const specs = context.attributeSpecs.get(className) ?? [];
  const out: Record<string, AttributeValue> = {};
  for (const attribute of kids(shape, 'attribute')) {
    const name = attribute.attrs.name ?? '';
    out[name] = typedValue(attribute.text, specs.find((s) => s.name === name));
  }
  if (shape.attrs.occluded === '1' && out.occluded === undefined) {
    out.occluded = true;
    context.occludedClasses.add(className);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const SHAPE_TAGS = new Set(['box', 'polygon', 'polyline', 'points', 'ellipse', 'mask', 'skeleton', 'tag']);

/** The image's shapes in drawing order (`z_order`, then file order; tags last), each converted or skipped with why. */
function shapesOf(elements: El[], context: ShapeContext): Annotation[] {
  const { file, where, ledger } = context;
  const out: { z: number; order: number; annotation: Annotation }[] = [];
  elements.forEach((el, index) => {
    const label = (el.attrs.label ?? '').trim();
    const what = `${where}: shape ${index + 1} (${el.tag}${label ? `, label "${label}"` : ''})`;
    const skip = (reason: string) => ledger.skip('annotations', el.tag, { file, item: what, reason });
    if (el.tag === 'cuboid') return skip('Versa has no 3D cuboid shape');
    if (!SHAPE_TAGS.has(el.tag)) return skip(`<${el.tag}> is not a CVAT for images shape Versa knows`);
    if (!label) return skip('the shape has no label');
    try {
      const shape = geometryOf(el, label, context, what);
      if (!shape) return;
      const attributes = attributesOf(el, label, context);
      const group = Number(el.attrs.group_id);
      const annotation = { ...shape, className: label, ...(attributes ? { attributes } : {}), ...(Number.isInteger(group) && group > 0 ? { groupId: group } : {}) } as Annotation;
      out.push({ z: el.tag === 'tag' ? Infinity : Number(el.attrs.z_order) || 0, order: index, annotation });
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      skip(error.message);
    }
  });
  return out.sort((a, b) => a.z - b.z || a.order - b.order).map((o) => o.annotation);
}

export class ShapeError extends Error {}

function numbers(el: El, keys: string[]): number[] {
  const values = keys.map((k) => Number(el.attrs[k]));
  const bad = keys.filter((_, i) => el.attrs[keys[i]] === undefined || !Number.isFinite(values[i]));
  if (bad.length > 0) throw new ShapeError(`<${el.tag}> needs numeric ${bad.join(', ')}`);
  return values;
}

export function geometryOf(el: El, label: string, context: ShapeContext, what: string): Omit<Annotation, 'className'> | null {
  switch (el.tag) {
    case 'box': {
      const [xtl, ytl, xbr, ybr] = numbers(el, ['xtl', 'ytl', 'xbr', 'ybr']);
      if (xbr <= xtl || ybr <= ytl) throw new ShapeError('a <box> needs xtl < xbr and ytl < ybr');
      const rotation = el.attrs.rotation === undefined ? 0 : normalizeDegrees(numbers(el, ['rotation'])[0]);
      return { type: 'bbox', geometry: { x: xtl, y: ytl, width: xbr - xtl, height: ybr - ytl, ...(rotation ? { rotation } : {}) } };
    }
    case 'polygon': {
      const points = openRing(parsePoints(el));
      if (points.length < 3) throw new ShapeError('a <polygon> needs at least 3 points');
      return { type: 'polygon', geometry: { points } };
    }
    case 'polyline': {
      const points = parsePoints(el);
      if (points.length < 2) throw new ShapeError('a <polyline> needs at least 2 points');
      return { type: 'polyline', geometry: { points } };
    }
    case 'points': {
      const points = parsePoints(el);
      if (points.length < 1) throw new ShapeError('<points> needs at least 1 point');
      return { type: 'points', geometry: { points } };
    }
    case 'ellipse': {
      const [cx, cy, rx, ry] = numbers(el, ['cx', 'cy', 'rx', 'ry']);
      const rotation = el.attrs.rotation === undefined ? 0 : normalizeDegrees(numbers(el, ['rotation'])[0]);
      return { type: 'ellipse', geometry: { cx, cy, rx: Math.abs(rx), ry: Math.abs(ry), rotation } };
    }
    case 'mask':
      return { type: 'mask', geometry: { rle: encodeRle(cvatMaskBitmap(el.attrs, context.width, context.height, what)) } };
    case 'tag':
      return { type: 'classification', geometry: {} };
    case 'skeleton':
      return skeletonOf(el, label, context, what);
    default:
      return null;
  }
}

/** A `<skeleton>`: its `<points>` children by name in the skeleton's order; what cannot be kept goes to the ledger. */
function skeletonOf(el: El, label: string, context: ShapeContext, what: string): Omit<Annotation, 'className'> {
  const names = context.skeletons.get(label) ?? [];
  const points: Keypoint[] = names.map(() => [0, 0, 0]);
  el.children.forEach((element, i) => {
    if (element.tag === 'attribute') return;
    const name = element.attrs.label ?? '';
    const item = `${what}, element ${i + 1} (${element.tag}, label "${name}")`;
    if (element.tag !== 'points') return context.ledger.skip('annotations', `skeleton ${element.tag}`, { file: context.file, item, reason: 'a skeleton element Versa keeps only as a point' });
    const index = names.indexOf(name);
    if (index < 0) return context.ledger.skip('annotations', 'skeleton point', { file: context.file, item, reason: `the skeleton "${label}" declares no point "${name}"` });
    for (const attribute of kids(element, 'attribute')) {
      context.ledger.skip('attributes', '', { file: context.file, item: `attribute "${attribute.attrs.name ?? ''}" of ${item}`, reason: 'Versa keeps attributes per annotation, not per skeleton point' });
    }
    if (element.attrs.outside === '1') return;
    let xy: Point | undefined;
    try {
      xy = parsePoints(element)[0];
    } catch {
      xy = undefined;
    }
    if (!xy) return context.ledger.skip('annotations', 'skeleton point', { file: context.file, item, reason: 'the point has no coordinates' });
    points[index] = [xy[0], xy[1], element.attrs.occluded === '1' ? 1 : 2];
  });
  return { type: 'keypoints', geometry: { points } };
}


export function parsePoints(el: El): Point[] {
  return String(el.attrs.points ?? '').split(';').filter((p) => p.trim()).map((pair) => {
    const [x, y] = pair.split(',').map(Number);
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw new ShapeError('points must be "x,y;x,y;…"');
    return [x, y] as Point;
  });
}

/** CVAT's mask: run lengths (background first) over the `width`×`height` box at `left`,`top`, row by row. */
export function cvatMaskBitmap(mask: Record<string, string | undefined>, width: number, height: number, where: string): { width: number; height: number; data: Uint8Array } {
  const [left, top, w, h] = [mask.left, mask.top, mask.width, mask.height].map(Number);
  const counts = String(mask.rle ?? '').split(',').map((c) => Number(c.trim()));
  if (![left, top, w, h].every(Number.isInteger) || w <= 0 || h <= 0 || counts.some((c) => !Number.isInteger(c) || c < 0)) {
    throw new ShapeError(`${where}: a <mask> needs integer left, top, width, height and rle counts`);
  }
  const data = new Uint8Array(width * height);
  let index = 0;
  let value = 0;
  for (const run of counts) {
    if (value) {
      for (let i = index; i < index + run && i < w * h; i++) {
        const x = left + (i % w);
        const y = top + Math.floor(i / w);
        if (x >= 0 && y >= 0 && x < width && y < height) data[y * width + x] = 1;
      }
    }
    index += run;
    value ^= 1;
  }
  return { width, height, data };
}

/**
 * Each class's attributes and skeleton (points in declaration order, edges from the label's SVG); a class some shape
 * marked occluded (`occluded`, CVAT for images) gets an `occluded` checkbox.
 */
export function classSpecsOf(
  classes: string[],
  attributeSpecs: ReadonlyMap<string, AttributeSpec[]>,
  skeletons: ReadonlyMap<string, string[]>,
  labels: ReadonlyMap<string, LabelDecl>,
  occluded: ReadonlySet<string> = new Set(),
): Map<string, ClassSpec> {
  const classSpecs = new Map<string, ClassSpec>();
  for (const name of classes) {
    const spec: ClassSpec = {};
    const attributes = [...(attributeSpecs.get(name) ?? [])];
    if (occluded.has(name) && !attributes.some((a) => a.name === 'occluded')) attributes.push({ name: 'occluded', type: 'checkbox', default: false });
    if (attributes.length > 0) spec.attributes = attributes;
    const points = skeletons.get(name);
    if (points && points.length > 0) {
      try {
        spec.skeleton = parseSkeleton({ points, edges: skeletonEdges(labels.get(name)?.svg ?? '', points), flip_pairs: [] });
      } catch {
        // Names CVAT allows but a skeleton does not (duplicates): the shapes keep their points in file order.
      }
    }
    if (spec.attributes || spec.skeleton) classSpecs.set(name, spec);
  }
  return classSpecs;
}
