import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { Annotation, DatasetItem, DatasetSource, Split } from '../dataset.js';
import { IMAGE_EXTENSIONS, splitFromName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { orderedMap } from '../ordered-map.js';
import { ImportLedger } from '../import-ledger.js';
import { exists, imageSize, walk } from './files.js';

/** Optional class list beside the XML files (ours and CVAT's), which fixes the class order. */
export const VOC_CLASS_LISTS = ['labels.txt', 'labelmap.txt', 'classes.txt'];

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'object',
  processEntities: true,
});

interface VocObject {
  name?: string;
  bndbox?: { xmin?: string; ymin?: string; xmax?: string; ymax?: string };
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
 * An image `ImageSets` lists without an XML (VOC's test images, frames nobody labelled) is kept unlabelled; one whose
 * file is missing too is accounted as skipped.
 */
export async function readVoc(root: string): Promise<DatasetSource> {
  const files = await findVocFiles(root);
  if (files.length === 0) throw new FormatError('no Pascal VOC XML files found');
  const splitSets = await imageSetSplits(root);
  const names = new Set<string>();
  for (const file of files) for (const object of (await parseVoc(root, file)).object ?? []) names.add(objectName(object, file));
  const listed = await classList(root);
  const classes = [...listed, ...[...names].filter((n) => !listed.includes(n)).sort()];
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
    yield* orderedMap(files, 16, async (file) => {
      const doc = await parseVoc(root, file);
      const path = await locateImage(root, file, doc.filename);
      const width = Number(doc.size?.width);
      const height = Number(doc.size?.height);
      const size = width > 0 && height > 0 ? { width, height } : await imageSize(path);
      const stem = stemOf(file.split('/').pop()!);
      const split = splitSets.get(stem) ?? folderSplit(file);
      const annotations: Annotation[] = (doc.object ?? []).map((object) => {
        const box = object.bndbox;
        const [xmin, ymin, xmax, ymax] = [box?.xmin, box?.ymin, box?.xmax, box?.ymax].map(Number);
        if (![xmin, ymin, xmax, ymax].every(Number.isFinite) || xmax <= xmin || ymax <= ymin) {
          throw new FormatError(`${file}: object "${object.name}" needs a <bndbox> with xmin < xmax and ymin < ymax`);
        }
        return { type: 'bbox', className: objectName(object, file), geometry: { x: xmin, y: ymin, width: xmax - xmin, height: ymax - ymin } };
      });
      return { split, fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
    });
    for (const { split, path } of unlabelled) yield { split, fileName: path.split('/').pop()!, source: { path }, annotations: [] };
  }
  return { format: 'voc', projectType: 'object_detection', classes, ledger, items };
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
