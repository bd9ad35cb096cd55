import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, ClassSpec, DatasetSource } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import type { AttributeSpec, AttributeValue } from '../../imaging/class-specs.js';
import { listImage, listedItems, skipMissingImage, type ListedImage } from './listed-images.js';
import { splitOfPath, type DatasetScan } from './scan.js';

/** KITTI object label files: `<root>/.../label_2/<frame>.txt`. */
export const KITTI_LABEL_FILE = /(^|\/)label_2\/[^/]+\.txt$/;

/** The 3D and per-object columns after the box, kept as number attributes of each box. */
const NUMBER_ATTRIBUTES = ['truncated', 'occluded', 'alpha', 'height_3d', 'width_3d', 'length_3d', 'x_3d', 'y_3d', 'z_3d', 'rotation_y'] as const;

/** A KITTI object line: `type truncated occluded alpha left top right bottom h w l x y z rotation_y [score]`. */
export function looksLikeKittiLine(line: string): boolean {
  const tokens = line.trim().split(/\s+/);
  return (tokens.length === 15 || tokens.length === 16) && /^[A-Za-z_]/.test(tokens[0]) && tokens.slice(1).every((t) => Number.isFinite(Number(t)));
}

/**
 * KITTI object detection (`training/label_2/000000.txt` beside `training/image_2/000000.png`): one object a line.
 * The 2D box (left top right bottom, pixels) becomes a box of the class named by `type`; every other column is kept
 * as a number attribute of that box (`truncated` 0..1, `occluded` 0 fully visible .. 3 unknown, `alpha`, the 3D
 * dimensions `height_3d width_3d length_3d` in metres, the camera-space location `x_3d y_3d z_3d`, `rotation_y`, and
 * `score` for result files). `DontCare` lines (regions the benchmark ignores) are kept as boxes of class `DontCare`
 * without attributes: their columns are the placeholders -1/-10/-1000, not measurements. Images with no label file
 * (the `testing` split) are kept unlabelled.
 */
export async function readKitti(scan: DatasetScan): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const files = scan.files.filter((f) => KITTI_LABEL_FILE.test(f));
  if (files.length === 0) throw new FormatError('no KITTI label_2/*.txt files found');
  const listed = new Map<string, ListedImage>();
  const classes: string[] = [];
  const withScore = new Set<string>();
  // Images by folder and stem: `training/image_2/000000.png` under `training/image_2/000000`.
  const byStem = new Map<string, string>();
  for (const p of scan.images) byStem.set(posix.join(posix.dirname(p), stemOf(p.split('/').pop()!)), p);
  for (const file of files) {
    const dir = posix.dirname(posix.dirname(file));
    const stem = stemOf(file.split('/').pop()!);
    const image = byStem.get(posix.join(dir, 'image_2', stem));
    const annotations: Annotation[] = [];
    const lines = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/);
    for (const [n, line] of lines.entries()) {
      if (!line.trim()) continue;
      if (!looksLikeKittiLine(line)) throw new FormatError(`${file} line ${n + 1}: expected "type truncated occluded alpha left top right bottom h w l x y z rotation_y [score]"`);
      const [type, ...rest] = line.trim().split(/\s+/);
      const v = rest.map(Number);
      const [left, top, right, bottom] = v.slice(3, 7);
      const annotation: Annotation = { type: 'bbox', className: type, geometry: { x: left, y: top, width: right - left, height: bottom - top } };
      if (type !== 'DontCare') {
        const attributes: Record<string, AttributeValue> = {};
        const values = [v[0], v[1], v[2], ...v.slice(7, 14)];
        NUMBER_ATTRIBUTES.forEach((name, i) => (attributes[name] = values[i]));
        if (v.length === 15) {
          attributes.score = v[14];
          withScore.add(type);
        }
        annotation.attributes = attributes;
      }
      if (!classes.includes(type)) classes.push(type);
      annotations.push(annotation);
    }
    if (!image) {
      skipMissingImage(ledger, file, posix.join(dir, 'image_2', `${stem}.png`), annotations);
      continue;
    }
    listImage(listed, image, splitOfPath(file), annotations);
  }
  classes.sort();
  const classSpecs = new Map<string, ClassSpec>();
  for (const name of classes) {
    if (name === 'DontCare') continue;
    const attributes: AttributeSpec[] = NUMBER_ATTRIBUTES.map((a) => ({ name: a, type: 'number' }));
    if (withScore.has(name)) attributes.push({ name: 'score', type: 'number' });
    classSpecs.set(name, { attributes });
  }
  // Only the camera images (`image_2`, or images beside no other camera folder) of frames without labels are added.
  const camera = (p: string) => !/(^|\/)(image_3|velodyne|calib|label_2)\//.test(p);
  return { format: 'kitti', projectType: 'object_detection', classes, classSpecs, ledger, items: listedItems(scan, listed, camera) };
}
