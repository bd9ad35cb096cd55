import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, DatasetSource, Split } from '../dataset.js';
import { splitFromName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import type { Skeleton } from '../../imaging/class-specs.js';
import type { Keypoint } from '../../imaging/geometry.js';
import { listImage, listedItems, skipMissingImage, type ListedImage } from './listed-images.js';
import { findImage, splitOfPath, type DatasetScan } from './scan.js';

/** MPII Human Pose's 16 joints, in its order, with its limbs and left/right pairs (as mmpose declares them). */
export const MPII_SKELETON: Skeleton = {
  points: ['right_ankle', 'right_knee', 'right_hip', 'left_hip', 'left_knee', 'left_ankle', 'pelvis', 'thorax', 'upper_neck', 'head_top',
    'right_wrist', 'right_elbow', 'right_shoulder', 'left_shoulder', 'left_elbow', 'left_wrist'],
  edges: [[0, 1], [1, 2], [2, 6], [6, 3], [3, 4], [4, 5], [6, 7], [7, 8], [8, 9], [7, 12], [12, 11], [11, 10], [7, 13], [13, 14], [14, 15]],
  flip_pairs: [[0, 5], [1, 4], [2, 3], [10, 15], [11, 14], [12, 13]],
};

/** A JSON list of MPII people: mmpose's `joints`/`joints_vis` or pytorch-pose's `mpii_annotations.json` `joint_self`. */
export function looksLikeMpii(text: string): boolean {
  return /^\s*\[/.test(text) && (/"joints_vis"\s*:/.test(text) || /"joint_self"\s*:/.test(text));
}

interface MpiiPerson {
  image?: string;
  img_paths?: string;
  joints?: number[][];
  joints_vis?: number[];
  joint_self?: number[][];
  center?: number[];
  objpos?: number[];
  scale?: number;
  scale_provided?: number;
  isValidation?: number;
}

/**
 * MPII Human Pose as the tools that train on it ship it as JSON: mmpose's `annotations/mpii_{train,val}.json` (also
 * `train.json`/`valid.json`: `{image, joints: [[x, y] ×16], joints_vis: [0|1 ×16], center, scale}`) and
 * pytorch-pose's `mpii_annotations.json` (`{img_paths, joint_self: [[x, y, vis] ×16], objpos, scale_provided,
 * isValidation}`). Each person is a keypoints annotation of class `person` with the MPII skeleton. Visibility: a joint
 * at negative coordinates (MPII's -1 for "not annotated") is not labelled (0); an annotated joint is visible (2) when
 * its flag says so, else occluded (1). The person box MPII gives as centre + scale (scale × 200 px is the person's
 * height) is kept as the keypoints' box: a square of side scale × 200 about the centre. `joint_others` (the other
 * people of the image) is not read: each of them is a record of its own in those files.
 */
export async function readMpii(scan: DatasetScan, files: string[]): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const listed = new Map<string, ListedImage>();
  for (const file of files) {
    let people: MpiiPerson[];
    try {
      people = JSON.parse(await readFile(join(scan.root, file), 'utf8'));
    } catch (error) {
      throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(people)) throw new FormatError(`${file}: expected a list of people`);
    const fileSplit = mpiiSplit(file);
    const preferred = ['images', posix.join(posix.dirname(posix.dirname(file)), 'images'), posix.dirname(file)];
    const missing = new Map<string, Annotation[]>();
    for (const [i, person] of people.entries()) {
      const reference = person.image ?? person.img_paths;
      if (typeof reference !== 'string') throw new FormatError(`${file}: person ${i + 1} names no image`);
      const annotation = personAnnotation(person, `${file}: person ${i + 1}`);
      const path = findImage(scan, reference, preferred);
      if (!path) {
        missing.set(reference, [...(missing.get(reference) ?? []), annotation]);
        continue;
      }
      const split = person.isValidation === undefined ? fileSplit ?? splitOfPath(path) : person.isValidation ? 'valid' : 'train';
      listImage(listed, path, split, [annotation]);
    }
    for (const [reference, list] of missing) skipMissingImage(ledger, file, reference, list);
  }
  return {
    format: 'mpii',
    projectType: 'keypoint_detection',
    classes: ['person'],
    classSpecs: new Map([['person', { skeleton: MPII_SKELETON }]]),
    ledger,
    items: listedItems(scan, listed),
  };
}

function personAnnotation(person: MpiiPerson, where: string): Annotation {
  const raw = person.joint_self ?? person.joints;
  if (!Array.isArray(raw) || raw.length !== 16) throw new FormatError(`${where}: expected 16 joints`);
  const points: Keypoint[] = raw.map((joint, j) => {
    const [x, y] = joint.map(Number);
    const flag = person.joint_self ? Number(joint[2]) : Number(person.joints_vis?.[j] ?? 1);
    if (!Number.isFinite(x) || !Number.isFinite(y) || x < 0 || y < 0) return [0, 0, 0];
    return [x, y, flag > 0 ? 2 : 1];
  });
  const center = person.center ?? person.objpos;
  const scale = person.scale ?? person.scale_provided;
  const annotation: Annotation = { type: 'keypoints', className: 'person', geometry: { points } };
  if (Array.isArray(center) && center.length >= 2 && typeof scale === 'number' && scale > 0) {
    const side = scale * 200;
    annotation.geometry.bbox = { x: center[0] - side / 2, y: center[1] - side / 2, width: side, height: side };
  }
  return annotation;
}

function mpiiSplit(file: string): Split | null {
  const stem = stemOf(file.split('/').pop()!).toLowerCase().replace(/^mpii_/, '');
  return splitFromName(stem) ?? null;
}
