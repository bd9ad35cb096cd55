import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { ClassSpecError, parseSkeleton, specsFromValues, type AttributeValue, type Skeleton } from '../../imaging/class-specs.js';
import type { Annotation, ClassSpec, DatasetSource } from '../dataset.js';
import { isSplitName } from '../../lib/vocabulary.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { listedItems, listImage, skipMissingImage, type ListedImage } from './listed-images.js';
import { addClass, findImage, projectTypeOf, type DatasetScan } from './scan.js';

const SHAPES = new Set<string>(['bbox', 'polygon', 'mask', 'classification', 'keypoints', 'polyline', 'points', 'ellipse']);

interface JsonlAnnotation {
  class?: unknown;
  type?: unknown;
  geometry?: unknown;
  attributes?: unknown;
  group_id?: unknown;
  skeleton?: unknown;
}

/** A first line that says the file is Versa's jsonl export: an object naming its `image` and listing `annotations`. */
export function looksLikeJsonl(firstLine: string): boolean {
  return /^\s*\{/.test(firstLine) && /"image"\s*:/.test(firstLine) && /"annotations"\s*:/.test(firstLine);
}

/**
 * Versa's `jsonl` export read back (one image a line: `{image, split, width, height, annotations: [{class, type,
 * geometry, attributes?, group_id?}]}`, geometry in the API's shapes), beside the images it names (found by name in
 * the archive; an archive image no line names is kept unlabelled). The export declares no attribute specs: they are
 * made from the values seen, as for other formats without declarations. A class's skeleton is the one its keypoints
 * carry (a skeleton that is not one refuses the archive, naming the line). An annotation of a type Versa does not have,
 * or without a class, and the lines of an image the archive lacks are skipped with why; a line that is not JSON
 * refuses the archive (422 naming it).
 */
export async function readJsonl(scan: DatasetScan, files: string[]): Promise<DatasetSource> {
  if (files.length === 0) throw new FormatError('no .jsonl file found');
  const ledger = new ImportLedger();
  const classes: string[] = [];
  const seen = new Map<string, Map<string, Set<AttributeValue>>>();
  const skeletons = new Map<string, Skeleton>();
  const listed = new Map<string, ListedImage>();
  for (const file of files) {
    const lines = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/);
    for (const [i, line] of lines.entries()) {
      if (!line.trim()) continue;
      const where = `line ${i + 1}`;
      const row = parseLine(line, `${file} ${where}`);
      const annotations = (Array.isArray(row.annotations) ? row.annotations : []).flatMap((a: JsonlAnnotation, n: number) => {
        const reason = annotationProblem(a);
        if (reason) ledger.skip('annotations', typeof a.type === 'string' ? a.type : 'unknown', { file, item: `${where} annotation ${n + 1}`, reason });
        if (!reason) noteSkeleton(a, skeletons, `${file} ${where} annotation ${n + 1}`);
        return reason ? [] : [toAnnotation(a, classes, seen)];
      });
      const found = findImage(scan, row.image as string, [posix.dirname(file)]);
      if (!found) {
        skipMissingImage(ledger, file, row.image as string, annotations);
        continue;
      }
      const split = isSplitName(row.split) ? row.split : null;
      listImage(listed, found, split, annotations);
    }
  }
  const classSpecs = new Map<string, ClassSpec>([...seen].map(([name, values]) => [name, { attributes: specsFromValues(values) }]));
  for (const [name, skeleton] of skeletons) classSpecs.set(name, { ...classSpecs.get(name), skeleton });
  const types = [...listed.values()].flatMap((l) => (Array.isArray(l.annotations) ? l.annotations.map((a) => a.type) : []));
  return { format: 'jsonl', projectType: projectTypeOf(types), classes, classSpecs, ledger, items: listedItems(scan, listed) };
}

function parseLine(line: string, where: string): Record<string, unknown> {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch (error) {
    throw new FormatError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row) || typeof (row as { image?: unknown }).image !== 'string') {
    throw new FormatError(`${where}: each line is an object naming its "image"`);
  }
  return row as Record<string, unknown>;
}

/** The skeleton a keypoints annotation carries, kept for its class (the first one seen). */
function noteSkeleton(a: JsonlAnnotation, skeletons: Map<string, Skeleton>, where: string): void {
  const className = (a.class as string).trim();
  if (a.type !== 'keypoints' || a.skeleton === undefined || skeletons.has(className)) return;
  try {
    skeletons.set(className, parseSkeleton(a.skeleton));
  } catch (error) {
    if (!(error instanceof ClassSpecError)) throw error;
    throw new FormatError(`${where}: skeleton${error.path.map((p) => `.${p}`).join('')} ${error.message}`);
  }
}

function annotationProblem(a: JsonlAnnotation): string | null {
  if (typeof a !== 'object' || a === null) return 'an annotation is an object';
  if (typeof a.type !== 'string' || !SHAPES.has(a.type)) return `Versa has no annotation type "${String(a.type)}"`;
  if (typeof a.class !== 'string' || !a.class.trim()) return 'the annotation has no class';
  if (typeof a.geometry !== 'object' || a.geometry === null) return 'the annotation has no geometry';
  return null;
}

/** The annotation, its class noted and its attribute values remembered for the class's specs. */
function toAnnotation(a: JsonlAnnotation, classes: string[], seen: Map<string, Map<string, Set<AttributeValue>>>): Annotation {
  const className = (a.class as string).trim();
  addClass(classes, className);
  const attributes: Record<string, AttributeValue> = {};
  if (typeof a.attributes === 'object' && a.attributes !== null) {
    const values = seen.get(className) ?? new Map<string, Set<AttributeValue>>();
    seen.set(className, values);
    for (const [name, value] of Object.entries(a.attributes)) {
      attributes[name] = value as AttributeValue;
      values.set(name, (values.get(name) ?? new Set()).add(value as AttributeValue));
    }
  }
  return {
    type: a.type,
    className,
    geometry: a.geometry,
    ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
    ...(Number.isInteger(a.group_id) && (a.group_id as number) > 0 ? { groupId: a.group_id as number } : {}),
  } as Annotation;
}
