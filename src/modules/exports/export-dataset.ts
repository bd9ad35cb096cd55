import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Annotation, DatasetItem, Split } from '../../formats/dataset.js';
import { SPLITS } from '../../formats/dataset.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { ExportAnnotationRow, ExportImageRow, PageCursor } from './exports.repository.js';

/** Images read per query: small enough that one page's queries and JSON parsing stay well under 50 ms. */
export const EXPORT_PAGE_SIZE = 1000;

export interface PageSource {
  images(cursor: PageCursor): Promise<ExportImageRow[]>;
  annotations(imageIds: number[]): Promise<ExportAnnotationRow[]>;
}

/**
 * A dataset's items read from the database one page at a time (keyset by id), so an export never holds more than a
 * page of images and their annotations. Between pages it yields to the event loop, so requests keep being served
 * while a large export runs. `signal` stops the reading when the file can no longer be written.
 */
export async function* pagedItems(source: PageSource, blobs: BlobStore, annotatedOnly: boolean, signal: AbortSignal): AsyncGenerator<DatasetItem> {
  let after = 0;
  for (;;) {
    signal.throwIfAborted();
    const images = await source.images({ after, limit: EXPORT_PAGE_SIZE, annotatedOnly });
    if (images.length === 0) return;
    const byImage = groupByImage(await source.annotations(images.map((i) => i.id)));
    for (const image of images) yield toItem(image, byImage.get(image.id) ?? [], blobs);
    after = images[images.length - 1].id;
    if (images.length < EXPORT_PAGE_SIZE) return;
    await nextTurn();
  }
}

/** A version's items, split after split (the version tables are indexed by split). */
export async function* versionItems(
  pages: (split: Split) => PageSource,
  blobs: BlobStore,
  annotatedOnly: boolean,
  signal: AbortSignal,
): AsyncGenerator<DatasetItem> {
  for (const split of SPLITS) yield* pagedItems(pages(split), blobs, annotatedOnly, signal);
}

function groupByImage(rows: ExportAnnotationRow[]): Map<number, ExportAnnotationRow[]> {
  const byImage = new Map<number, ExportAnnotationRow[]>();
  for (const row of rows) {
    const list = byImage.get(row.image_id);
    if (list) list.push(row);
    else byImage.set(row.image_id, [row]);
  }
  return byImage;
}

function toItem(image: ExportImageRow, rows: ExportAnnotationRow[], blobs: BlobStore): DatasetItem {
  return {
    split: image.split === 'train' || image.split === 'valid' || image.split === 'test' ? image.split : null,
    fileName: image.filename,
    source: { open: () => blobs.stream(image.blob_key) },
    width: image.width,
    height: image.height,
    annotations: rows.map(toAnnotation),
  };
}

/** Stored geometry → the formats' annotation shape (masks keep only their RLE; the stored bbox is derived). */
function toAnnotation(row: ExportAnnotationRow): Annotation {
  const geometry = JSON.parse(row.geometry);
  const className = row.class_name;
  switch (row.annotation_type) {
    case 'bbox':
      return { type: 'bbox', className, geometry: { x: geometry.x, y: geometry.y, width: geometry.width, height: geometry.height } };
    case 'polygon':
      return { type: 'polygon', className, geometry: { points: geometry.points } };
    case 'mask':
      return { type: 'mask', className, geometry: { rle: geometry.rle } };
    default:
      return { type: 'classification', className, geometry: {} };
  }
}
