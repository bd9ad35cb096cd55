import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { Zip, ZipPassThrough } from 'fflate';
import { ApiError, type VersaApi } from './api.js';
import { ProgressBar } from './progress.js';

export const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp', '.tif', '.tiff', '.gif', '.avif', '.bmp']);
/** Files that carry labels in a layout the server imports (YOLO, COCO, VOC, CVAT, LabelMe, CSV, …). */
export const LABEL_EXTENSIONS = new Set(['.txt', '.json', '.xml', '.yaml', '.yml', '.csv', '.names', '.data', '.jsonl']);

const NOTES = /^(readme|license|licence|source)([._-].*)?\.(txt|md)$/i;

export interface FolderFiles {
  images: string[];
  labels: string[];
  bytes: number;
}

/** The images and label files under a folder (hidden files and folders left out), in a stable order. */
export async function filesUnder(folder: string): Promise<FolderFiles> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const images: string[] = [];
  const labels: string[] = [];
  let bytes = 0;
  for (const e of entries) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    if (relative(folder, path).split(sep).some((part) => part.startsWith('.'))) continue;
    // Dataset downloads carry notes beside their labels (Roboflow's README.roboflow.txt): not labels.
    if (NOTES.test(e.name)) continue;
    const ext = extname(e.name).toLowerCase();
    if (IMAGE_EXTENSIONS.has(ext)) images.push(path);
    else if (LABEL_EXTENSIONS.has(ext)) labels.push(path);
    else continue;
    bytes += (await stat(path)).size;
  }
  return { images: images.sort(), labels: labels.sort(), bytes };
}

export interface UploadTotals {
  created: number;
  duplicates: number;
  rejected: number;
  rejections: { file: string; detail: string }[];
}

interface UploadAnswer {
  created: number;
  duplicates: number;
  rejected: number;
  results: { original_name: string; outcome: string; detail?: string }[];
}

/**
 * Images only: POST /api/projects/{id}/images in batches of `batch` files, `concurrency` batches in flight. Each file
 * is streamed from disk (see VersaApi.upload).
 */
export async function uploadImages(api: VersaApi, projectId: number, files: string[], options: { batch: number; concurrency: number; quiet: boolean }): Promise<UploadTotals> {
  const totals: UploadTotals = { created: 0, duplicates: 0, rejected: 0, rejections: [] };
  const bar = new ProgressBar('upload', options.quiet);
  let next = 0;
  let done = 0;
  bar.update(0, files.length);
  const worker = async () => {
    while (next < files.length) {
      const slice = files.slice(next, next + options.batch);
      next += slice.length;
      const answer = await uploadBatch(api, projectId, slice);
      totals.created += answer.created;
      totals.duplicates += answer.duplicates;
      totals.rejected += answer.rejected;
      for (const r of answer.results) if (r.outcome === 'rejected') totals.rejections.push({ file: r.original_name, detail: r.detail ?? '' });
      done += slice.length;
      bar.update(done, files.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  bar.done();
  return totals;
}

async function uploadBatch(api: VersaApi, projectId: number, files: string[]): Promise<UploadAnswer> {
  try {
    return await api.upload<UploadAnswer>(`/api/projects/${projectId}/images`, {}, 'files', files);
  } catch (error) {
    // Every file of the batch refused: the answer still carries the per-file report.
    if (!(error instanceof ApiError) || !(error.body as { results?: unknown })?.results) throw error;
    return error.body as UploadAnswer;
  }
}

/**
 * A folder as a zip written while it is read: entries stored (images are compressed already), each file read in
 * chunks, so memory stays flat whatever the folder's size. `onBytes` gets the file bytes read so far.
 */
export async function* zipFolder(folder: string, files: string[], onBytes?: (read: number) => void): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error) failure = error;
    else out.push(chunk);
  });
  let read = 0;
  for (const file of files) {
    const entry = new ZipPassThrough(relative(folder, file).split(sep).join('/'));
    zip.add(entry);
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
      entry.push(chunk as Buffer);
      read += (chunk as Buffer).length;
      onBytes?.(read);
      if (failure) throw failure;
      yield* out.splice(0);
    }
    entry.push(new Uint8Array(0), true);
    yield* out.splice(0);
  }
  zip.end();
  if (failure) throw failure;
  yield* out.splice(0);
}

/** Images with their labels: the folder zipped on the fly into POST /api/projects/{id}/import (all or nothing). */
export async function importFolder(api: VersaApi, projectId: number, folder: string, found: FolderFiles, fields: Record<string, string | undefined>, quiet: boolean): Promise<unknown> {
  const bar = new ProgressBar('upload', quiet);
  const files = [...found.images, ...found.labels].sort();
  const answer = await api.uploadStream(`/api/projects/${projectId}/import`, fields, 'file', 'folder.zip', zipFolder(folder, files, (read) => bar.update(read, found.bytes, '', 'bytes')));
  bar.done();
  return answer;
}
