import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Split } from '../dataset.js';
import { IMAGE_EXTENSIONS, isImageName, splitFromName, stemOf } from '../dataset.js';
import { specsFromValues, type AttributeValue } from '../../imaging/class-specs.js';
import { FormatError } from '../format-error.js';
import { orderedMap } from '../ordered-map.js';
import { ImportLedger } from '../import-ledger.js';
import { exists, imageSize, walk } from './files.js';

/** Optional class list beside the XML files (ours and CVAT's), which fixes the class order. */
export const VOC_CLASS_LISTS = ['labels.txt', 'labelmap.txt', 'classes.txt'];

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'object' || name === 'part' || name === 'attribute',
  processEntities: true,
});

interface VocBox {
  xmin?: string;
  ymin?: string;
  xmax?: string;
  ymax?: string;
}
interface VocObject {
  name?: string;
  bndbox?: VocBox;
  difficult?: string;
  truncated?: string;
  occluded?: string;
  pose?: string;
  /** VOC person layout: a head, hand or foot box of the object. */
  part?: { name?: string; bndbox?: VocBox }[];
  /** VOC action release: `<actions><phoning>1</phoning>…</actions>`. */
  actions?: Record<string, string>;
  /** CVAT's Pascal VOC 1.1 export: the object's other attributes. */
  attributes?: { attribute?: { name?: string; value?: string }[] };
}
interface VocAnnotation {
  filename?: string;
  size?: { width?: string; height?: string };
  object?: VocObject[];
}

export async function findVocFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for await (const path of walk(root)) if (path.toLowerCase().endsWith('.xml')) found.push(path);
  return found;
}

export async function looksLikeVoc(root: string, xml: string): Promise<boolean> {
  const text = await readFile(join(root, xml), 'utf8');
  return /<annotation[\s>]/.test(text);
}

/**
 * Pascal VOC: one `<annotation>` XML per image with `<object><name>` and `<bndbox>` corners in pixels. Layouts:
 * Roboflow's (`train/a.xml` beside `train/a.jpg`) and the original (`Annotations/a.xml` + `JPEGImages/a.jpg`, splits
 * from `ImageSets/Main/{train,val,test}.txt`). Classes come from a class list file when present, else sorted names.
 * An image `ImageSets` lists without an XML (VOC's test images, frames nobody labelled), and any other image of the
 * dataset no XML names (masks under `Segmentation*` aside), is kept unlabelled; one ImageSets lists whose file is
 * missing too is accounted as skipped. An object's `difficult`, `truncated` and `occluded` flags and the action
 * release's `<actions>` become checkbox attributes (set when 1), its `pose` a select (unless `Unspecified`), CVAT's `<attributes>` attributes of their own;
 * the parts of the person layout (`<part>` head/hand/foot boxes) become boxes of the part's class in the same group
 * as their object.
 */
export async function readVoc(root: string): Promise<DatasetSource> {
  const files = await findVocFiles(root);
  if (files.length === 0) throw new FormatError('no Pascal VOC XML files found');
  const splitSets = await imageSetSplits(root);
  const names = new Set<string>();
  const seen = new Map<string, Map<string, Set<AttributeValue>>>();
  for (const file of files) {
    for (const object of (await parseVoc(root, file)).object ?? []) {
      const name = objectName(object, file);
      names.add(name);
      for (const part of object.part ?? []) if (typeof part.name === 'string' && part.name.trim()) names.add(part.name.trim());
      for (const [attribute, value] of Object.entries(objectAttributes(object))) {
        if (!seen.has(name)) seen.set(name, new Map());
        const values = seen.get(name)!;
        if (!values.has(attribute)) values.set(attribute, new Set());
        values.get(attribute)!.add(value);
      }
    }
  }
  const listed = await classList(root);
  const classes = [...listed, ...[...names].filter((n) => !listed.includes(n)).sort()];
  const classSpecs = new Map<string, ClassSpec>([...seen].map(([name, values]) => [name, { attributes: specsFromValues(values) }]));
  const ledger = new ImportLedger();
  const labelled = new Set(files.map((f) => stemOf(f.split('/').pop()!)));
  const unlabelled: { stem: string; split: Split; path: string }[] = [];
  for (const [stem, split] of splitSets) {
    if (labelled.has(stem)) continue;
    const path = await unlabelledImage(root, stem);
    if (path) unlabelled.push({ stem, split, path });
    else ledger.skip('images', '', { file: `ImageSets/Main/${split === 'valid' ? 'val' : split}.txt`, item: `image ${stem}`, reason: 'listed, but neither its XML nor its image is in the dataset' });
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    const named = new Set(unlabelled.map((u) => u.path));
    yield* orderedMap(files, 16, async (file) => {
      const doc = await parseVoc(root, file);
      const path = await locateImage(root, file, doc.filename);
      named.add(path);
      const width = Number(doc.size?.width);
      const height = Number(doc.size?.height);
      const size = width > 0 && height > 0 ? { width, height } : await imageSize(path);
      const stem = stemOf(file.split('/').pop()!);
      const split = splitSets.get(stem) ?? folderSplit(file);
      const annotations: Annotation[] = [];
      let group = 0;
      for (const object of doc.object ?? []) {
        const className = objectName(object, file);
        const attributes = objectAttributes(object);
        const parts = (object.part ?? []).filter((p) => typeof p.name === 'string' && p.name.trim());
        const groupId = parts.length ? ++group : undefined;
        annotations.push({
          type: 'bbox',
          className,
          geometry: vocBox(object.bndbox, `${file}: object "${object.name}"`),
          ...(Object.keys(attributes).length ? { attributes } : {}),
          ...(groupId ? { groupId } : {}),
        });
        for (const part of parts) {
          annotations.push({ type: 'bbox', className: part.name!.trim(), geometry: vocBox(part.bndbox, `${file}: part "${part.name}" of "${object.name}"`), groupId });
        }
      }
      return { split, fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
    });
    for (const { split, path } of unlabelled) yield { split, fileName: path.split('/').pop()!, source: { path }, annotations: [] };
    // Any other image no XML names (masks of the segmentation release aside): kept, unlabelled.
    for await (const rel of walk(root)) {
      const path = join(root, rel);
      if (!isImageName(rel) || named.has(path) || /(^|\/)Segmentation[^/]*\//.test(rel)) continue;
      yield { split: splitSets.get(stemOf(rel.split('/').pop()!)) ?? folderSplit(rel), fileName: rel.split('/').pop()!, source: { path }, annotations: [] };
    }
  }
  return { format: 'voc', projectType: 'object_detection', classes, classSpecs, ledger, items };
}

function vocBox(box: VocBox | undefined, what: string): { x: number; y: number; width: number; height: number } {
  const [xmin, ymin, xmax, ymax] = [box?.xmin, box?.ymin, box?.xmax, box?.ymax].map(Number);
  if (![xmin, ymin, xmax, ymax].every(Number.isFinite) || xmax <= xmin || ymax <= ymin) {
    throw new FormatError(`${what} needs a <bndbox> with xmin < xmax and ymin < ymax`);
  }
  return { x: xmin, y: ymin, width: xmax - xmin, height: ymax - ymin };
}

/** The object's flags and attributes that say something (a flag at 0 and pose `Unspecified` are the defaults). */
function objectAttributes(object: VocObject): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const flag of ['difficult', 'truncated', 'occluded'] as const) if (String(object[flag] ?? '').trim() === '1') attributes[flag] = true;
  const pose = typeof object.pose === 'string' ? object.pose.trim() : '';
  if (pose && pose !== 'Unspecified') attributes.pose = pose;
  // The action release's flags, each a checkbox named by its action (set when 1).
  if (object.actions && typeof object.actions === 'object') {
    for (const [action, value] of Object.entries(object.actions)) if (String(value).trim() === '1') attributes[action] = true;
  }
  for (const attribute of object.attributes?.attribute ?? []) {
    const name = typeof attribute.name === 'string' ? attribute.name.trim() : '';
    if (!name || name in attributes) continue;
    const raw = String(attribute.value ?? '');
    attributes[name] = raw === 'true' || raw === 'false' ? raw === 'true' : raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return attributes;
}

async function parseVoc(root: string, file: string): Promise<VocAnnotation> {
  let doc: { annotation?: VocAnnotation };
  try {
    doc = parser.parse(await readFile(join(root, file), 'utf8')) as { annotation?: VocAnnotation };
  } catch (error) {
    throw new FormatError(`${file} is not valid XML: ${(error as Error).message}`);
  }
  if (!doc.annotation || typeof doc.annotation !== 'object') throw new FormatError(`${file} has no <annotation> element`);
  return doc.annotation;
}

function objectName(object: VocObject, file: string): string {
  const name = typeof object.name === 'string' ? object.name.trim() : '';
  if (!name) throw new FormatError(`${file}: every <object> needs a <name>`);
  return name;
}

async function classList(root: string): Promise<string[]> {
  for (const name of VOC_CLASS_LISTS) {
    const path = join(root, name);
    if (!(await exists(path))) continue;
    // CVAT's labelmap.txt lines are `name:color::`; plain lists are one name a line.
    const lines = (await readFile(path, 'utf8')).split(/\r?\n/).filter((l) => l.trim() && !l.startsWith('#'));
    return [...new Set(lines.map((l) => l.split(':')[0].trim()).filter((n) => n && n !== 'background'))];
  }
  return [];
}

/** The image of an ImageSets entry that has no XML: `JPEGImages/<stem>.<ext>` beside `ImageSets`. */
async function unlabelledImage(root: string, stem: string): Promise<string | null> {
  for (const ext of IMAGE_EXTENSIONS) {
    const path = join(root, 'JPEGImages', stem + ext);
    if (await exists(path)) return path;
  }
  return null;
}

async function imageSetSplits(root: string): Promise<Map<string, Split>> {
  const splits = new Map<string, Split>();
  for (const [file, split] of [['train.txt', 'train'], ['val.txt', 'valid'], ['test.txt', 'test']] as const) {
    const path = join(root, 'ImageSets', 'Main', file);
    if (!(await exists(path))) continue;
    for (const line of (await readFile(path, 'utf8')).split(/\r?\n/)) if (line.trim()) splits.set(line.trim().split(/\s+/)[0], split);
  }
  return splits;
}

function folderSplit(file: string): Split | null {
  for (const part of file.split('/').slice(0, -1).reverse()) {
    const split = splitFromName(part);
    if (split) return split;
  }
  return null;
}

async function locateImage(root: string, file: string, declared: string | undefined): Promise<string> {
  const dir = join(root, dirname(file));
  const stem = stemOf(file.split('/').pop()!);
  const candidates: string[] = [];
  const name = typeof declared === 'string' ? declared.replace(/\\/g, '/').split('/').pop()! : '';
  if (name && name !== '..') candidates.push(join(dir, name), join(dir, '..', 'JPEGImages', name));
  for (const ext of IMAGE_EXTENSIONS) candidates.push(join(dir, stem + ext), join(dir, '..', 'JPEGImages', stem + ext));
  for (const candidate of candidates) {
    if (candidate.startsWith(root) && (await exists(candidate))) return candidate;
  }
  throw new FormatError(`${file}: its image "${declared ?? stem}" is not in the dataset`);
}
