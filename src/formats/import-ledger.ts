/**
 * The accounts of an import: every item a dataset's files hold is read, and then kept or skipped with a reason, so
 * that read = kept + skipped per kind (images; annotations by type; attribute values; tracks). Readers skip what
 * they cannot represent; the import skips what fails validation (a shape with no area inside its image) and keeps
 * the rest. Nothing leaves an import unaccounted.
 */
export type LedgerKind = 'images' | 'annotations' | 'attributes' | 'tracks';

export interface SkippedItem {
  /** The dataset file the item came from (an annotation file, or the image's name). */
  file: string;
  /** What the item is, in the file's terms: "shape 3 (cuboid, label car)", "image cat.jpg". */
  item: string;
  reason: string;
}

export interface LedgerCounts {
  images: number;
  /** By annotation type as the file names it (`bbox`, `polygon`, ..., or the tool's own name for one it cannot keep). */
  annotations: Record<string, number>;
  attributes: number;
  tracks: number;
}

/** Most skipped items an answer lists; `skipped_count` counts them all. */
export const MAX_SKIPPED_LISTED = 1000;

const emptyCounts = (): LedgerCounts => ({ images: 0, annotations: {}, attributes: 0, tracks: 0 });

export class ImportLedger {
  readonly read = emptyCounts();
  readonly kept = emptyCounts();
  readonly skipped = emptyCounts();
  readonly skippedList: SkippedItem[] = [];
  skippedCount = 0;

  /** An item read and kept. */
  keep(kind: LedgerKind, type = '', n = 1): void {
    add(this.read, kind, type, n);
    add(this.kept, kind, type, n);
  }

  /** An item read and left out, and why; `n` items when one entry stands for several alike. */
  skip(kind: LedgerKind, type: string, entry: SkippedItem, n = 1): void {
    add(this.read, kind, type, n);
    add(this.skipped, kind, type, n);
    this.skippedCount += n;
    if (this.skippedList.length < MAX_SKIPPED_LISTED) this.skippedList.push(n === 1 ? entry : { ...entry, item: `${entry.item} (×${n})` });
  }

  /** An item kept when read, left out later (an import into a project that refuses it), and why. */
  drop(kind: LedgerKind, type: string, entry: SkippedItem): void {
    add(this.kept, kind, type, -1);
    add(this.read, kind, type, -1);
    this.skip(kind, type, entry);
  }

  /** `{read, kept, skipped}` as an import answers it. */
  counts(): { read: LedgerCounts; kept: LedgerCounts; skipped: LedgerCounts } {
    return { read: this.read, kept: this.kept, skipped: this.skipped };
  }
}

function add(counts: LedgerCounts, kind: LedgerKind, type: string, n: number): void {
  if (kind === 'annotations') counts.annotations[type] = (counts.annotations[type] ?? 0) + n;
  else counts[kind] += n;
}
