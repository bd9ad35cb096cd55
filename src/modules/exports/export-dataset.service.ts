import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Annotation, DatasetItem, Split } from '../../formats/dataset.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { AnnotationCursor, ExportAnnotationRow, ExportImageRow, PageCursor } from './exports.repository.js';
import { isSplitName, SPLIT_NAMES } from '../../lib/vocabulary.js';
import type { FrameTracks } from './frame-tracks.logic.js';

/**
 * Rows read per query. Each query and the work on its rows run without yielding, so these bound how long the event
 * loop is held: 2,000 annotations take ~4 ms to read on SQLite and about as long to write out, which leaves room
 * under the 50 ms a request may wait on a busy machine; smaller chunks cost no measurable throughput.
 */
export const EXPORT_PAGE_SIZES = { images: 1000, annotations: 2000 };

export interface PageSource {
  images(cursor: PageCursor): Promise<ExportImageRow[]>;
  annotations(cursor: AnnotationCursor): Promise<ExportAnnotationRow[]>;
}

/**
 * A dataset's items read from the database a page of images at a time (keyset by id), their annotations in chunks
 * (keyset by image id then annotation id), so an export never holds more than a page of images and a chunk of
 * annotations. After every query it yields to the event loop, so requests keep being served while a large export
 * runs. `signal` stops the reading when the file can no longer be written.
 */
export async function* pagedItems(
  source: PageSource,
  blobs: BlobStore,
  annotatedOnly: boolean,
  signal: AbortSignal,
  sizes = EXPORT_PAGE_SIZES,
  /** A project's videos and tracks: frames name their video and carry their tracks' shapes. */
  frames?: FrameTracks,
): AsyncGenerator<DatasetItem> {
  let after = 0;
  for (;;) {
    signal.throwIfAborted();
    const images = await source.images({ after, limit: sizes.images, annotatedOnly });
    if (images.length === 0) return;
    yield* pageItems(source, images, blobs, signal, sizes.annotations, frames);
    after = images[images.length - 1].id;
    if (images.length < sizes.images) return;
    await nextTurn();
  }
}

/** The items of one page of images (in id order), merged with their annotations as the chunks arrive. */
async function* pageItems(
  source: PageSource,
  images: ExportImageRow[],
  blobs: BlobStore,
  signal: AbortSignal,
  chunkSize: number,
  frames?: FrameTracks,
): AsyncGenerator<DatasetItem> {
  const lastImageId = images[images.length - 1].id;
  let from = { imageId: images[0].id, id: 0 };
  let next = 0;
  let annotations: Annotation[] = [];
  for (;;) {
    const rows = await source.annotations({ from, lastImageId, limit: chunkSize });
    for (const row of rows) {
      while (next < images.length && images[next].id < row.image_id) {
        yield toItem(images[next++], annotations, blobs, frames);
        annotations = [];
      }
      // A row of an image the page does not hold (one added since the page was read) is skipped.
      if (next < images.length && images[next].id === row.image_id) annotations.push(toAnnotation(row));
    }
    if (rows.length < chunkSize) break;
    const last = rows[rows.length - 1];
    from = { imageId: last.image_id, id: last.id };
    await nextTurn();
    signal.throwIfAborted();
  }
  while (next < images.length) {
    yield toItem(images[next++], annotations, blobs, frames);
    annotations = [];
  }
}

/** A version's items, split after split (the version tables are indexed by split); frames name their video. */
/**
 * A page source kept to `ids` (ascending): a page reads windows of them until it holds a page of images or the ids
 * run out, so a page shorter than the limit still means the last one.
 */
export function scopedPages(source: PageSource, ids: readonly number[]): PageSource {
  return {
    annotations: (cursor) => source.annotations(cursor),
    async images(cursor) {
      const rows: ExportImageRow[] = [];
      let start = firstAbove(ids, cursor.after);
      while (start < ids.length && rows.length < cursor.limit) {
        const window = ids.slice(start, start + cursor.limit);
        rows.push(...(await source.images({ ...cursor, after: 0, ids: window })));
        start += window.length;
      }
      return rows;
    },
  };
}

/** The index of the first of the ascending `ids` above `after`. */
function firstAbove(ids: readonly number[], after: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export async function* versionItems(
  pages: (split: Split) => PageSource,
  blobs: BlobStore,
  annotatedOnly: boolean,
  signal: AbortSignal,
  sizes = EXPORT_PAGE_SIZES,
  frames?: FrameTracks,
): AsyncGenerator<DatasetItem> {
  for (const split of SPLIT_NAMES) yield* pagedItems(pages(split), blobs, annotatedOnly, signal, sizes, frames);
}

function toItem(image: ExportImageRow, annotations: Annotation[], blobs: BlobStore, frames?: FrameTracks): DatasetItem {
  const video = frames?.frameOf(image.video_id, image.frame);
  return {
    ...(video ? { video } : {}),
    split: isSplitName(image.split) ? image.split : null,
    fileName: image.filename,
    source: { open: () => blobs.stream(image.blob_key) },
    width: image.width,
    height: image.height,
    annotations: video ? [...annotations, ...frames!.shapesOn(image.video_id!, video.frame)] : annotations,
  };
}

/**
 * Stored geometry → the formats' annotation shape, with the attribute values and group it carries (masks keep only
 * their RLE; the stored bbox is derived). Other shapes go as stored: their geometry is the dataset model's.
 */
function toAnnotation(row: ExportAnnotationRow): Annotation {
  const geometry = JSON.parse(row.geometry);
  const extras = {
    className: row.class_name,
    ...(row.attributes ? { attributes: JSON.parse(row.attributes) } : {}),
    ...(row.group_id != null ? { groupId: row.group_id } : {}),
  };
  switch (row.annotation_type) {
    case 'bbox': {
      const { x, y, width, height, rotation } = geometry;
      return { type: 'bbox', ...extras, geometry: rotation ? { x, y, width, height, rotation } : { x, y, width, height } };
    }
    case 'mask':
      return { type: 'mask', ...extras, geometry: { rle: geometry.rle } };
    case 'polygon':
    case 'keypoints':
    case 'polyline':
    case 'points':
    case 'ellipse':
      return { type: row.annotation_type, ...extras, geometry } as Annotation;
    default:
      return { type: 'classification', ...extras, geometry: {} };
  }
}
