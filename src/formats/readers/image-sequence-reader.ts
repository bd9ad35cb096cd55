import { join, posix } from 'node:path';
import type { DatasetItem, DatasetSource, DatasetVideo } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { frameNumberOf } from './cvat-video-reader.js';
import { EXTRACTION_PREFIX } from './files.js';
import { scanDataset, type DatasetScan } from './scan.js';

const natural = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * An image sequence: every folder of images is one video's frames, in the natural order of their names
 * (`frame2.png` before `frame10.png`). A frame's number is the number its name ends in when every name of the folder
 * has a different one (`000001.jpg` … keep their gaps: frames taken every Nth), else its position. Asked for by
 * `format=image_sequence` (a folder of images alone reads as plain images otherwise). Files that are not images are
 * skipped, each with its path.
 */
export async function readImageSequence(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  if (s.images.length === 0) throw new FormatError('the folder holds no images (an image sequence is a folder of frames)');
  const ledger = new ImportLedger();
  const images = new Set(s.images);
  for (const path of s.files) if (!images.has(path)) ledger.skip('images', '', { file: path, item: `file ${path}`, reason: 'not an image: an image sequence is a folder of frames' });
  const byFolder = new Map<string, string[]>();
  for (const path of s.images) {
    const folder = posix.dirname(path);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), path]);
  }
  const videos: DatasetVideo[] = [];
  const items: DatasetItem[] = [];
  for (const [folder, paths] of [...byFolder].sort((a, b) => natural.compare(a[0], b[0]))) {
    paths.sort((a, b) => natural.compare(a, b));
    const numbers = paths.map((p) => frameNumberOf(p.split('/').pop()!));
    const numbered = numbers.every((n) => n !== null) && new Set(numbers).size === numbers.length;
    const first = numbered ? Math.min(...(numbers as number[])) : 0;
    // Frames at the dataset's root: the video is named after the folder (not a temporary extraction's).
    const rootName = posix.basename(s.root.replace(/\\/g, '/'));
    let name = folder !== '.' ? folder : rootName && !rootName.startsWith(EXTRACTION_PREFIX) ? rootName : 'sequence';
    for (let n = 2; videos.some((v) => v.name === name); n++) name = `${name} (${n})`;
    const frames = paths.map((path, i) => ({ path, frame: numbered ? (numbers[i] as number) - first : i })).sort((a, b) => a.frame - b.frame);
    videos.push({ name, frameCount: frames[frames.length - 1].frame + 1 });
    for (const { path, frame } of frames) items.push({ split: null, fileName: path.split('/').pop()!, source: { path: join(s.root, path) }, annotations: [], video: { name, frame } });
  }
  return {
    format: 'image_sequence',
    projectType: 'object_detection',
    classes: [],
    videos,
    ledger,
    async *items() {
      yield* items;
    },
  };
}
