import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { AttributeSpec } from '../../imaging/class-specs.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { quadToBox } from '../geometry.js';
import { ImportLedger } from '../import-ledger.js';
import { imageSize } from './files.js';
import { addClass, splitOfPath, type DatasetScan } from './scan.js';

/** A DOTA object line: eight coordinates, a class name, a difficult flag (0/1; absent in some tools' files). */
const OBJECT_LINE = /^\s*(-?\d+(\.\d+)?\s+){8}[^\s\d.-][^\s]*(\s+[01])?\s*$/;

/** A .txt file that holds DOTA object lines (its `imagesource:`/`gsd:` header optional). */
export function looksLikeDota(text: string): boolean {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const body = lines.filter((l) => !/^\s*(imagesource|gsd)\s*:/i.test(l));
  return body.length > 0 && OBJECT_LINE.test(body[0]) || (body.length === 0 && lines.length > 0 && /^\s*imagesource\s*:/i.test(lines[0]));
}

/** The attribute DOTA's `difficult` flag becomes on every class. */
export const DIFFICULT: AttributeSpec = { name: 'difficult', type: 'checkbox', default: false };

/**
 * DOTA (v1.0, v1.5, v2.0; also DOTA_devkit's and many OBB tools' output): images in `images/` and one
 * `labelTxt/<stem>.txt` per image (any folder names work: a label file is paired with the image of its stem, in a
 * sibling folder first), split folders `train/`, `val/`, `test/` when present. Each object line
 * `x1 y1 x2 y2 x3 y3 x4 y4 class difficult` becomes a rotated box when its quad is a rectangle (within
 * `quadToBox`'s tolerance), else a 4-point polygon (a hand-drawn quadrilateral: converted, said in FORMATS);
 * `difficult` becomes the checkbox attribute `difficult` every class declares. The header lines `imagesource:` and
 * `gsd:` are image metadata Versa has no place for: each one with a value is skipped through the ledger.
 * An image without a label file is kept unlabelled; a label file without its image is skipped with its objects.
 */
export async function readDota(root: string, scan: DatasetScan): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const labelFiles = scan.files.filter((f) => f.toLowerCase().endsWith('.txt') && !/(^|\/)(readme|license|classes|source)[^/]*$/i.test(f));
  const labelOf = new Map<string, string>();
  const orphans: string[] = [];
  const byStem = new Map<string, string[]>();
  for (const path of scan.images) {
    const stem = stemOf(path.split('/').pop()!);
    const list = byStem.get(stem);
    if (list) list.push(path);
    else byStem.set(stem, [path]);
  }
  for (const file of labelFiles) {
    const image = imageFor(byStem, file);
    if (image) labelOf.set(image, file);
    else orphans.push(file);
  }
  if (labelOf.size === 0 && orphans.length === 0) throw new FormatError('no DOTA label file (labelTxt/<image>.txt) found');

  // One pass to learn the classes (in order of first use); the label files are small.
  const classes: string[] = [];
  const parsed = new Map<string, ParsedLabels>();
  for (const file of [...labelOf.values(), ...orphans]) {
    const labels = parseDotaLabels(await readFile(join(root, file), 'utf8'), file);
    for (const object of labels.objects) addClass(classes, object.className);
    parsed.set(file, labels);
  }
  if (classes.length === 0 && labelOf.size === 0) throw new FormatError('the DOTA label files hold no objects');
  const classSpecs = new Map<string, ClassSpec>(classes.map((name) => [name, { attributes: [DIFFICULT] }]));
  let shapes = 0;
  let boxes = 0;
  for (const labels of parsed.values()) for (const o of labels.objects) (o.annotation.type === 'bbox' ? boxes++ : shapes++);
  // Rotated boxes make an oriented detection set; a set of hand-drawn quads only is still one (its objects are quads).
  const projectType = boxes + shapes > 0 ? 'oriented_detection' : 'object_detection';

  for (const file of orphans) {
    for (const object of parsed.get(file)!.objects) {
      ledger.skip('annotations', object.annotation.type, { file, item: `line ${object.line} (${object.className})`, reason: `no image named ${stemOf(file.split('/').pop()!)}.* is in the dataset` });
    }
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    const labelled = new Set(labelOf.keys());
    const images = scan.images.filter((p) => labelled.has(p) || !/(^|\/)(labelTxt|labels)(\/|$)/i.test(p));
    for (const image of images) {
      const path = join(root, image);
      const size = await imageSize(path);
      const file = labelOf.get(image);
      const labels = file ? parsed.get(file)! : null;
      if (labels && file) {
        for (const [key, value] of labels.header) {
          ledger.skip('attributes', '', { file, item: `${key}: ${value}`, reason: 'image metadata (DOTA header line) has no place in Versa' });
        }
      }
      yield { split: splitOfPath(image), fileName: image.split('/').pop()!, source: { path }, ...size, annotations: labels ? labels.objects.map((o) => o.annotation) : [] };
    }
  }
  return { format: 'dota', projectType, classes, classSpecs, ledger, items };
}

interface ParsedLabels {
  header: [string, string][];
  objects: { line: number; className: string; annotation: Annotation }[];
}

/** One DOTA label file: its header values (`null` ones left out) and its objects. */
export function parseDotaLabels(text: string, file: string): ParsedLabels {
  const header: [string, string][] = [];
  const objects: ParsedLabels['objects'] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const meta = /^(imagesource|gsd)\s*:\s*(.*)$/i.exec(line);
    if (meta) {
      if (meta[2] !== '' && meta[2].toLowerCase() !== 'null' && meta[2].toLowerCase() !== 'none') header.push([meta[1].toLowerCase(), meta[2]]);
      continue;
    }
    const fields = line.split(/\s+/);
    if (fields.length < 9 || fields.length > 10) throw new FormatError(`${file} line ${i + 1}: expected "x1 y1 x2 y2 x3 y3 x4 y4 class difficult", got ${fields.length} values`);
    const values = fields.slice(0, 8).map(Number);
    if (values.some((v) => !Number.isFinite(v))) throw new FormatError(`${file} line ${i + 1}: the eight coordinates must be numbers`);
    const className = fields[8];
    const difficult = fields[9] === '1';
    const quad: Point[] = [[values[0], values[1]], [values[2], values[3]], [values[4], values[5]], [values[6], values[7]]];
    const box = quadToBox(quad);
    const shape: Annotation = box ? { type: 'bbox', className, geometry: box } : { type: 'polygon', className, geometry: { points: quad } };
    objects.push({ line: i + 1, className, annotation: { ...shape, attributes: { difficult } } });
  }
  return { header, objects };
}

/** The image a label file belongs to: same stem, in a sibling `images` folder first, else anywhere when unique. */
function imageFor(byStem: Map<string, string[]>, labelFile: string): string | null {
  const dir = posix.dirname(labelFile);
  const parent = posix.dirname(dir);
  const candidates = byStem.get(stemOf(labelFile.split('/').pop()!)) ?? [];
  if (candidates.length <= 1) return candidates[0] ?? null;
  const sibling = candidates.filter((p) => posix.dirname(posix.dirname(p)) === parent || posix.dirname(p) === dir);
  return sibling.length === 1 ? sibling[0] : null;
}
