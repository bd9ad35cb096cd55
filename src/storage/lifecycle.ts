import type { BlobStore } from './blob-store.js';
import { projectBlobPrefix, thumbnailBlobKey, versionPrefix } from './keys.js';

/**
 * What is deleted with what. Callers decide *whether* (rows, references); these say *which files*.
 *
 * - A project takes every file under it: images, thumbnails, exports, models, versions.
 * - An image's bytes (content-addressed, shared by rows with the same hash) go with their thumbnail, once no row of
 *   the project — image, or version source kept for a version — refers to them any more.
 * - A version takes its generated files; source files it alone kept go as images' bytes do.
 * - An export or a model takes its one file.
 */
export function deleteProjectFiles(blobs: BlobStore, projectId: number): Promise<void> {
  return blobs.deletePrefix(projectBlobPrefix(projectId));
}

/** An image's original and its thumbnail. */
export async function deleteImageFiles(blobs: BlobStore, image: { project_id: number; sha256: string; blob_key: string }): Promise<void> {
  await Promise.all([blobs.delete(image.blob_key), blobs.delete(thumbnailBlobKey(image.project_id, image.sha256))]);
}

/** A generated version's files. */
export function deleteVersionFiles(blobs: BlobStore, projectId: number, number: number): Promise<void> {
  return blobs.deletePrefix(versionPrefix(projectId, number));
}
