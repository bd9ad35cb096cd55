import { join } from 'node:path';
import type { DatasetItem, DatasetSource, Split } from '../dataset.js';
import { isImageName, splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { listDir } from './files.js';

interface ClassFolder {
  split: Split | null;
  className: string;
  dir: string;
}

/** Class-per-folder classification: `{train,valid,test}/<class>/*.jpg`, or `<class>/*.jpg` without splits. */
export async function readFolders(root: string): Promise<DatasetSource> {
  const folders = await classFolders(root);
  if (folders.length === 0) throw new FormatError('no class folders with images found');
  const classes = [...new Set(folders.map((f) => f.className))].sort();

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const folder of folders) {
      const { files } = await listDir(folder.dir);
      for (const fileName of files.filter(isImageName)) {
        yield {
          split: folder.split,
          fileName,
          source: { path: join(folder.dir, fileName) },
          annotations: [{ type: 'classification', className: folder.className, geometry: {} }],
        };
      }
    }
  }
  return { format: 'folders', projectType: 'classification', classes, items };
}

export async function classFolders(root: string): Promise<ClassFolder[]> {
  const { dirs } = await listDir(root);
  const splitDirs = dirs.filter((d) => splitFromName(d));
  const found: ClassFolder[] = [];
  const scan = async (dir: string, split: Split | null) => {
    for (const className of (await listDir(dir)).dirs) {
      const classDir = join(dir, className);
      if ((await listDir(classDir)).files.some(isImageName)) found.push({ split, className, dir: classDir });
    }
  };
  if (splitDirs.length > 0) for (const d of splitDirs) await scan(join(root, d), splitFromName(d));
  else await scan(root, null);
  return found;
}
