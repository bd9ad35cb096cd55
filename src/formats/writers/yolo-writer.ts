import type { Writable } from 'node:stream';
import { stringify as toYaml } from 'yaml';
import type { Box } from '../../imaging/rle.js';
import { flipPermutation } from '../../imaging/class-specs.js';
import type { Annotation, DatasetToWrite, Point, Split, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { geometryBox, rotatedCorners } from '../../imaging/geometry.js';
import { ellipsePolygon } from './coco-writer.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally, type Wrote } from './export-tally.js';
import { tracksPath } from '../readers/yolo-reader.js';
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
 * to [0, 1] and clipped to the image. What a line holds follows the project type (`yoloMode`, `labelLines`: boxes,
 * polygons, OBB corners or pose lines); what YOLO cannot hold is converted or left out and counted in the WriteStats.
 * Items without a split go to `train`.
 */
export async function writeYoloLayout(dataset: DatasetToWrite, output: Writable, layout: YoloLayout, tally: ExportTally): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classIndex = new Map(dataset.classes.map((name, index) => [name, index]));
    const mode = yoloMode(dataset);
    const splits = new Set<Split>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      splits.add(split);
      const { width, height } = await sizeOf(item);
      const lines: string[] = [];
      const trackIds: string[] = [];
      for (const annotation of item.annotations) {
        const id = annotation.attributes?.track_id;
        for (const line of labelLines(annotation, classIndex, width, height, mode, tally)) {
          lines.push(line);
          trackIds.push(typeof id === 'number' ? String(id) : '-1');
        }
      }
      const fileName = safeEntryName(item.fileName);
      const labelPath = layout.label(split, stemOf(fileName));
      await zip.addImage(layout.image(split, fileName), item.source);
      await zip.addBuffer(labelPath, lines.length ? `${lines.join('\n')}\n` : '');
      if (trackIds.some((id) => id !== '-1')) await zip.addBuffer(tracksPath(labelPath)!, `${trackIds.join('\n')}\n`);
      stats.imageCount++;
      stats.annotationCount += lines.length;
    }
    await zip.addBuffer('data.yaml', `${layout.dataYaml(splits)}${mode.kind === 'pose' ? poseYaml(dataset.classes, mode) : ''}`);
    return stats;
  });
}

/** What YOLO writes with a shape besides its line: a frame shape's track id, in `tracks/` beside the label file. */
const WROTE: Wrote = { track: 'track ids in tracks/ beside the labels' };

/**
 * What the label lines hold, from the project type: `pose` (keypoint projects: every line `class cx cy w h` and k
 * points `px py v`, as Ultralytics requires of every line of a pose set — a plain box gets k unlabelled points),
 * `obb` (oriented detection: every line four corners), `segment` (polygons) or `detect` (boxes).
 */
export type YoloMode =
  | { kind: 'detect' | 'segment' | 'obb' }
  | { kind: 'pose'; k: number; flipIdx: number[]; names: Map<string, string[]> };

export function yoloMode(dataset: DatasetToWrite): YoloMode {
  if (dataset.projectType === 'oriented_detection') return { kind: 'obb' };
  if (dataset.projectType === 'keypoint_detection') {
    // YOLO has one kpt_shape for all classes: the first skeleton's (keypoints of another size are written as boxes).
    const skeleton = dataset.classes.map((name) => dataset.classSpecs?.get(name)?.skeleton).find(Boolean);
    if (skeleton) {
      const names = new Map<string, string[]>();
      for (const name of dataset.classes) {
        const own = dataset.classSpecs?.get(name)?.skeleton;
        if (own && own.points.length === skeleton.points.length) names.set(name, own.points);
      }
      return { kind: 'pose', k: skeleton.points.length, flipIdx: flipPermutation(skeleton, skeleton.points.length), names };
    }
  }
  return { kind: dataset.projectType === 'object_detection' ? 'detect' : 'segment' };
}

/** The pose keys of data.yaml: `kpt_shape`, `flip_idx` (Ultralytics' flip augmentation) and `kpt_names` per class. */
function poseYaml(classes: string[], mode: Extract<YoloMode, { kind: 'pose' }>): string {
  const kptNames = Object.fromEntries(classes.flatMap((name, index) => (mode.names.has(name) ? [[index, mode.names.get(name)!]] : [])));
  return toYaml({ kpt_shape: [mode.k, 3], flip_idx: mode.flipIdx, ...(Object.keys(kptNames).length ? { kpt_names: kptNames } : {}) }, { flow: false });
}

/**
 * The label lines of one annotation in `mode` (several for an object in parts, none for what YOLO cannot hold).
 * Conversions, counted in `tally`: in `detect` every shape is its box; in `segment` a rotated box and an ellipse are
 * polygons, a multi-part object one line per part, keypoints and masks their boxes; in `obb` every shape is four
 * corners (a box's, a 4-point polygon's own, any other shape's envelope); in `pose` keypoints of the skeleton's size
 * are pose lines and every other shape its box with no point labelled. Polylines, point sets and classifications
 * have no YOLO form and are left out.
 */
export function labelLines(annotation: Annotation, classIndex: Map<string, number>, width: number, height: number, mode: YoloMode, tally: ExportTally): string[] {
  if (annotation.type === 'classification' || annotation.type === 'polyline' || annotation.type === 'points') {
    tally.shape(annotation, 'skipped', annotation.type, WROTE);
    return [];
  }
  const index = classIndex.get(annotation.className);
  if (index === undefined) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
  const corners = (points: Point[]) => `${index}${points.map(([x, y]) => ` ${norm(x / width)} ${norm(y / height)}`).join('')}`;
  const converted = (to: string) => tally.shape(annotation, 'converted', `${annotation.type}${annotation.type === 'bbox' ? ' (rotated)' : ''}→${to}`, WROTE);
  const kept = (lines: string[]) => {
    tally.shape(annotation, 'kept', annotation.type, WROTE);
    return lines;
  };
  const noArea = () => {
    tally.shape(annotation, 'skipped', `${annotation.type} (no area in the image)`, WROTE);
    return [];
  };
  if (mode.kind === 'obb') {
    if (annotation.type === 'bbox') return kept([corners(rotatedCorners(annotation.geometry))]);
    if (annotation.type === 'polygon' && !annotation.geometry.parts && !annotation.geometry.holes && annotation.geometry.points.length === 4) return kept([corners(annotation.geometry.points)]);
    if (annotation.type === 'ellipse') {
      const e = annotation.geometry;
      converted('rotated bbox');
      return [corners(rotatedCorners({ x: e.cx - e.rx, y: e.cy - e.ry, width: 2 * e.rx, height: 2 * e.ry, rotation: e.rotation }))];
    }
    const box = geometryBox(annotation.type, annotation.geometry);
    if (!box) return noArea();
    converted('bbox');
    return [corners(rotatedCorners(box))];
  }
  if (mode.kind === 'pose') {
    const line = boxLine(index, geometryBox(annotation.type, annotation.geometry), width, height);
    if (!line) return noArea();
    if (annotation.type === 'keypoints' && annotation.geometry.points.length === mode.k) {
      let points = '';
      for (const [x, y, v] of annotation.geometry.points) points += v ? ` ${norm(x / width)} ${norm(y / height)} ${v}` : ' 0 0 0';
      return kept([`${line}${points}`]);
    }
    if (annotation.type !== 'bbox' || annotation.geometry.rotation) converted('bbox');
    else tally.shape(annotation, 'kept', 'bbox', WROTE);
    return [`${line}${' 0 0 0'.repeat(mode.k)}`];
  }
  if (mode.kind === 'segment') {
    if (annotation.type === 'polygon') {
      const parts = annotation.geometry.parts ?? [annotation.geometry.points];
      // One tally per shape: an object in parts with holes is one conversion naming both.
      const changes = [parts.length > 1 && 'parts→one line each', annotation.geometry.holes?.length && 'holes→left out'].filter(Boolean);
      if (changes.length > 0) tally.shape(annotation, 'converted', `polygon ${changes.join(' and ')}`, WROTE);
      else tally.shape(annotation, 'kept', 'polygon', WROTE);
      return parts.map(corners);
    }
    if (annotation.type === 'bbox' && annotation.geometry.rotation) {
      converted('polygon');
      return [corners(rotatedCorners(annotation.geometry))];
    }
    if (annotation.type === 'ellipse') {
      converted('polygon');
      return [corners(ellipsePolygon(annotation.geometry, 64))];
    }
  }
  const line = boxLine(index, geometryBox(annotation.type, annotation.geometry), width, height);
  if (!line) return noArea();
  if (annotation.type !== 'bbox' || annotation.geometry.rotation) converted('bbox');
  else tally.shape(annotation, 'kept', 'bbox', WROTE);
  return [line];
}

function boxLine(index: number, box: Box | null, width: number, height: number): string | null {
  if (!box) return null;
  const x0 = Math.max(0, box.x);
  const y0 = Math.max(0, box.y);
  const x1 = Math.min(width, box.x + box.width);
  const y1 = Math.min(height, box.y + box.height);
  if (x1 <= x0 || y1 <= y0) return null;
  return `${index} ${norm((x0 + x1) / 2 / width)} ${norm((y0 + y1) / 2 / height)} ${norm((x1 - x0) / width)} ${norm((y1 - y0) / height)}`;
}

/** YOLO (Roboflow's layout) zip: `{split}/images/*`, `{split}/labels/<stem>.txt` and a `data.yaml` naming the splits and classes. */
export async function writeYolo(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
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
  }, tally);
}

/** Six decimals: 0.0006 px at 1000 px, and what Ultralytics and Roboflow write. */
function norm(value: number): string {
  const clipped = Math.min(1, Math.max(0, value));
  return String(Math.round(clipped * 1e6) / 1e6);
}
