import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ZipEntry } from './zip-build.js';

/** A fixture folder's files as zip entries, named relative to it (its SOURCE.md left out). */
export async function fixtureEntries(dir: string): Promise<ZipEntry[]> {
  const entries: ZipEntry[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.name === 'SOURCE.md') continue;
    const path = join(e.parentPath, e.name);
    entries.push({ name: relative(dir, path).split('\\').join('/'), data: await readFile(path) });
  }
  return entries;
}
