import { headerSize } from '../../imaging/dataset-pixels.js';
import { readImage, type DatasetItem } from '../dataset.js';
import { FormatError } from '../format-error.js';

/** The item's pixel size, read from the image header when the item does not carry it. */
export async function sizeOf(item: DatasetItem): Promise<{ width: number; height: number }> {
  if (item.width && item.height) return { width: item.width, height: item.height };
  try {
    const input = 'path' in item.source ? item.source.path : await readImage(item.source);
    return await headerSize(input);
  } catch (error) {
    throw new FormatError(`cannot read the size of image ${item.fileName}: ${(error as Error).message}`);
  }
}

/** A file or folder name safe inside a zip: no separators, NULs or dot-only names (entry names must not climb). */
export function safeEntryName(name: string): string {
  const cleaned = name.replace(/[\\/\0]/g, '_').trim();
  return cleaned === '' || /^\.+$/.test(cleaned) ? '_' : cleaned;
}
