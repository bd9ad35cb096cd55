import { join } from 'node:path';
import type { FormatName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { findCocoFiles } from './coco-reader.js';
import { exists, listDir } from './files.js';
import { classFolders } from './folders-reader.js';
import { MASK_CLASSES_FILE } from './masks-reader.js';
import { findVocFiles, looksLikeVoc } from './voc-reader.js';
import { YOLO_YAML_NAMES } from './yolo-reader.js';

/**
 * Which layout a dataset folder holds, checked from the most to the least specific marker: a YOLO data.yaml, a
 * COCO JSON, PNG masks with _classes.csv, Pascal VOC XML, class-per-folder images.
 */
export async function detectFormat(root: string): Promise<FormatName> {
  for (const name of YOLO_YAML_NAMES) if (await exists(join(root, name))) return 'yolo';
  if ((await findCocoFiles(root)).length > 0) return 'coco';
  if (await exists(join(root, MASK_CLASSES_FILE))) return 'masks';
  for (const dir of (await listDir(root)).dirs) if (await exists(join(root, dir, MASK_CLASSES_FILE))) return 'masks';
  const xml = await findVocFiles(root);
  if (xml.length > 0 && (await looksLikeVoc(root, xml[0]))) return 'voc';
  if ((await classFolders(root)).length > 0) return 'folders';
  throw new FormatError(
    'unrecognised dataset layout: expected COCO JSON, YOLO data.yaml, Pascal VOC XML, PNG masks with _classes.csv, or class folders of images',
  );
}
