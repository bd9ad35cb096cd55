import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, DatasetSource } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import type { AttributeSpec, AttributeValue } from '../../imaging/class-specs.js';
import { listImage, listedItems, skipMissingImage, type ListedImage } from './listed-images.js';
import { findImage, type DatasetScan } from './scan.js';

/** WIDER Face ground truth: `wider_face_split/wider_face_<split>_bbx_gt.txt`. */
export const WIDER_FACE_FILE = /(^|\/)wider_face_([a-z]+)_bbx_gt\.txt$/i;

/** The six flags of a face, as select attributes named by the benchmark's own words (checkbox for `invalid`). */
const FLAGS: { name: string; values: string[] }[] = [
  { name: 'blur', values: ['clear', 'normal', 'heavy'] },
  { name: 'expression', values: ['typical', 'exaggerate'] },
  { name: 'illumination', values: ['normal', 'extreme'] },
  { name: 'invalid', values: [] },
  { name: 'occlusion', values: ['no', 'partial', 'heavy'] },
  { name: 'pose', values: ['typical', 'atypical'] },
];
export const WIDER_FACE_ATTRIBUTES: AttributeSpec[] = FLAGS.map((f) =>
  f.values.length ? { name: f.name, type: 'select', values: f.values } : { name: f.name, type: 'checkbox' },
);

/**
 * WIDER Face: per split, `wider_face_<split>_bbx_gt.txt` lists each image (`0--Parade/0_Parade_marchingband_1_849.jpg`,
 * under `WIDER_<split>/images/`), its face count, then a line a face: `x y w h blur expression illumination invalid
 * occlusion pose` (pixels). Each face is a box of class `face` with those six as attributes (the codes become the
 * benchmark's words: blur clear/normal/heavy...). An image with no face has one placeholder line of zeros, which is
 * not a face. Faces with no width or height (the set has some) are skipped by the import with the reason.
 */
export async function readWiderFace(scan: DatasetScan): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const files = scan.files.filter((f) => WIDER_FACE_FILE.test(f));
  if (files.length === 0) throw new FormatError('no WIDER Face wider_face_<split>_bbx_gt.txt file found');
  const listed = new Map<string, ListedImage>();
  for (const file of files) {
    const subset = WIDER_FACE_FILE.exec(file)![2];
    const split = splitFromName(subset);
    const lines = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/).map((l) => l.trim());
    const base = posix.dirname(posix.dirname(file));
    const preferred = [posix.join(base, `WIDER_${subset}`, 'images'), `WIDER_${subset}/images`, posix.join(base, 'images'), 'images'];
    let n = 0;
    while (n < lines.length) {
      const name = lines[n];
      if (!name) {
        n++;
        continue;
      }
      const count = Number(lines[n + 1]);
      if (!Number.isInteger(count) || count < 0) throw new FormatError(`${file} line ${n + 2}: expected the face count of ${name}`);
      const annotations: Annotation[] = [];
      for (let i = 0; i < count; i++) {
        const v = (lines[n + 2 + i] ?? '').split(/[\s,]+/).map(Number);
        if (v.length < 4 || !v.slice(0, 4).every(Number.isFinite)) throw new FormatError(`${file} line ${n + 3 + i}: expected "x y w h blur expression illumination invalid occlusion pose"`);
        const attributes: Record<string, AttributeValue> = {};
        FLAGS.forEach((flag, k) => {
          const code = v[4 + k];
          if (!Number.isInteger(code)) return;
          if (!flag.values.length) attributes[flag.name] = code === 1;
          else if (flag.values[code] !== undefined) attributes[flag.name] = flag.values[code];
        });
        annotations.push({ type: 'bbox', className: 'face', geometry: { x: v[0], y: v[1], width: v[2], height: v[3] }, attributes });
      }
      // An image without faces is followed by one line of zeros.
      n += 2 + Math.max(count, count === 0 && /^0(\s+0)*$/.test(lines[n + 2] ?? '') ? 1 : 0);
      const path = findImage(scan, name, preferred);
      if (!path) skipMissingImage(ledger, file, name, annotations);
      else listImage(listed, path, split, annotations);
    }
  }
  const classSpecs = new Map([['face', { attributes: WIDER_FACE_ATTRIBUTES }]]);
  return { format: 'widerface', projectType: 'object_detection', classes: ['face'], classSpecs, ledger, items: listedItems(scan, listed) };
}
