import type { Writable } from 'node:stream';
import { stringify as toYaml } from 'yaml';
import type { Box } from '../../imaging/rle.js';
import type { Annotation, DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { geometryBox } from '../../imaging/geometry.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

const YAML_KEYS: Record<Split, string> = { train: 'train', valid: 'val', test: 'test' };

/** Where a YOLO-style writer puts an image and its label file, and what its `data.yaml` says given the splits seen. */
export interface YoloLayout {
  image(split: Split, fileName: string): string;
  label(split: Split, stem: string): string;
  dataYaml(splits: ReadonlySet<Split>): string;
}

/**
 * Writes every item's image and label lines where `layout` says, then its `data.yaml`. Coordinates are normalised
 * to [0, 1] and clipped to the image. Polygons stay polygons unless the project is a detection project (then their
 * boxes are written); masks are written as their boxes (YOLO has no mask lines). Items without a split go to `train`.
 */
export async function writeYoloLayout(dataset: DatasetToWrite, output: Writable, layout: YoloLayout): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classIndex = new Map(dataset.classes.map((name, index) => [name, index]));
    const polygons = dataset.projectType !== 'object_detection';
    const splits = new Set<Split>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      splits.add(split);
      const { width, height } = await sizeOf(item);
      const lines: string[] = [];
      for (const annotation of item.annotations) {
        const line = labelLine(annotation, classIndex, width, height, polygons);
        if (line) lines.push(line);
      }
      const fileName = safeEntryName(item.fileName);
      await zip.addImage(layout.image(split, fileName), item.source);
      await zip.addBuffer(layout.label(split, stemOf(fileName)), lines.length ? `${lines.join('\n')}\n` : '');
      stats.imageCount++;
      stats.annotationCount += lines.length;
    }
    await zip.addBuffer('data.yaml', layout.dataYaml(splits));
    return stats;
  });
}

/** YOLO (Roboflow's layout) zip: `{split}/images/*`, `{split}/labels/<stem>.txt` and a `data.yaml` naming the splits and classes. */
export async function writeYolo(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  return writeYoloLayout(dataset, output, {
    image: (split, fileName) => `${split}/images/${fileName}`,
    label: (split, stem) => `${split}/labels/${stem}.txt`,
    dataYaml: (splits) => {
      const config: Record<string, unknown> = {};
      for (const split of SPLIT_NAMES) if (splits.has(split)) config[YAML_KEYS[split]] = `${split}/images`;
      config.nc = dataset.classes.length;
      config.names = dataset.classes;
      return toYaml(config, { flow: false });
    },
  });
}

export function labelLine(annotation: Annotation, classIndex: Map<string, number>, width: number, height: number, polygons: boolean): string | null {
  if (annotation.type === 'classification') return null;
  const index = classIndex.get(annotation.className);
  if (index === undefined) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
  if (annotation.type === 'polygon' && polygons) {
    let line = String(index);
    for (const [x, y] of annotation.geometry.points) line += ` ${norm(x / width)} ${norm(y / height)}`;
    return line;
  }
  const box = geometryBox(annotation.type, annotation.geometry);
  if (!box) return null;
  const x0 = Math.max(0, box.x);
  const y0 = Math.max(0, box.y);
  const x1 = Math.min(width, box.x + box.width);
  const y1 = Math.min(height, box.y + box.height);
  if (x1 <= x0 || y1 <= y0) return null;
  return `${index} ${norm((x0 + x1) / 2 / width)} ${norm((y0 + y1) / 2 / height)} ${norm((x1 - x0) / width)} ${norm((y1 - y0) / height)}`;
}

/** Six decimals: 0.0006 px at 1000 px, and what Ultralytics and Roboflow write. */
function norm(value: number): string {
  const clipped = Math.min(1, Math.max(0, value));
  return String(Math.round(clipped * 1e6) / 1e6);
}
