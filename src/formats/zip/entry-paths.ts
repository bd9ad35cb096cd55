import { FormatError } from '../format-error.js';

/**
 * The paths an archive's entries take once extracted, kept to refuse entries that would land on each other — two
 * entries of one name, or one name used for a file and for a folder — in the archive's own terms, before the file
 * system answers with EEXIST or ENOTDIR and a server path.
 */
export class EntryPaths {
  private readonly kinds = new Map<string, 'file' | 'folder'>();

  /** Claims a path (relative to the archive's root, `/`-separated) for a file or a folder, and its parents as folders. */
  claim(path: string, kind: 'file' | 'folder'): void {
    const parts = path.split('/').filter((part) => part !== '' && part !== '.');
    for (let i = 1; i < parts.length; i++) this.set(parts.slice(0, i).join('/'), 'folder');
    if (parts.length > 0) this.set(parts.join('/'), kind);
  }

  private set(path: string, kind: 'file' | 'folder'): void {
    const before = this.kinds.get(path);
    if (before === undefined) this.kinds.set(path, kind);
    else if (before === 'file' && kind === 'file') throw new FormatError(`the archive holds two entries named "${path}"`, 'unsafe_archive');
    else if (before !== kind) throw new FormatError(`the archive holds both a file and a folder named "${path}"`, 'unsafe_archive');
  }
}
