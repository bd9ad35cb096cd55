import type { FormatName } from '../dataset.js';
import { detectLayout } from './layout.js';

/**
 * Which layout a dataset folder holds, decided from its annotation files' content (layout.ts); several matching
 * readers or none is a FormatError that lists what was found and the `format` values that apply.
 */
export function detectFormat(root: string): Promise<FormatName> {
  return detectLayout(root);
}
