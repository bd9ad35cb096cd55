import { randomBytes } from 'node:crypto';

/**
 * Every blob key the application stores, in one place. Keys are built from ids, content hashes and server-chosen
 * names only (never from user input) and are checked again by `assertBlobKey` in the store.
 *
 *   projects/{project}/images/{sha256}.{ext}            an uploaded or imported image (content-addressed)
 *   projects/{project}/thumbs/{sha256}.webp             its thumbnail
 *   projects/{project}/samples/{sha256}.{ext}           a sample's media file (audio, …; content-addressed)
 *   projects/{project}/exports/{filename}               an export archive, or a file an adapter prepared
 *   projects/{project}/models/{sha256}-{random}.{ext}   a model (uploaded or trained; a trained one's checkpoint: .pt)
 *   projects/{project}/videos/{sha256}-{random}.{ext}   an uploaded video (its frames are images)
 *   projects/{project}/versions/{number}/{split}/{f}    a generated dataset version's files
 *
 * Everything of a project sits under `projects/{project}`; src/storage/lifecycle.ts says what is deleted with what.
 */
export const PROJECTS_PREFIX = 'projects';

export const projectBlobPrefix = (projectId: number): string => `${PROJECTS_PREFIX}/${projectId}`;

export const imageBlobKey = (projectId: number, sha256: string, ext: string): string => `${projectBlobPrefix(projectId)}/images/${sha256}.${ext}`;

export const thumbnailBlobKey = (projectId: number, sha256: string): string => `${projectBlobPrefix(projectId)}/thumbs/${sha256}.webp`;

export const sampleBlobKey = (projectId: number, sha256: string, ext: string): string => `${projectBlobPrefix(projectId)}/samples/${sha256}.${ext}`;

export const exportBlobKey = (projectId: number, filename: string): string => `${projectBlobPrefix(projectId)}/exports/${filename}`;

/**
 * A model's key: a name of its own (a random suffix), not the bare hash, so that a concurrent upload of the same bytes
 * that is refused removes only the file it wrote itself, never the one the winner's row points to.
 */
export const modelBlobKey = (projectId: number, sha256: string, ext: string, unique = randomBytes(6).toString('hex')): string =>
  `${projectBlobPrefix(projectId)}/models/${sha256}-${unique}.${ext}`;

/** The folder of all of a project's versions (each removed whole with its version). */
export const versionsPrefix = (projectId: number): string => `${projectBlobPrefix(projectId)}/versions`;

export const versionPrefix = (projectId: number, number: number): string => `${versionsPrefix(projectId)}/${number}`;

export const versionFileKey = (prefix: string, split: string, filename: string): string => `${prefix}/${split}/${filename}`;

/** A video's key: a name of its own, like a model's, so deleting one video never removes another's file. */
export const videoBlobKey = (projectId: number, sha256: string, ext: string, unique = randomBytes(6).toString('hex')): string =>
  `${projectBlobPrefix(projectId)}/videos/${sha256}-${unique}.${ext}`;

/**
 * An image imported by reference (issue 27) is the object of a project storage's bucket, not a file of Versa's:
 *
 *   storages/{storage}/{etag}/{object key, base64url}.{ext}
 *
 * Its bytes are read from the bucket when needed (src/storage/sourced-blob-store.ts), only while the object still has
 * the ETag it was imported with, and Versa never writes or deletes it. The key is null when the object's key is too
 * long to fit in a blob key (about 330 bytes of object key).
 */
export const STORAGES_PREFIX = 'storages';

const ETAG = /^[0-9a-f]{1,64}(-[0-9]{1,5})?$/;

/** The ETag as a key segment: a quoted hex ETag (`"md5"`, `"md5-parts"`) without quotes; `_` (no check) otherwise. */
const etagSegment = (etag: string): string => {
  const bare = etag.replace(/^"|"$/g, '').toLowerCase();
  return ETAG.test(bare) ? bare : '_';
};

export function storageObjectBlobKey(storageId: number, etag: string, objectKey: string, ext: string): string | null {
  const key = `${STORAGES_PREFIX}/${storageId}/${etagSegment(etag)}/${Buffer.from(objectKey, 'utf8').toString('base64url')}.${ext}`;
  return key.length <= 512 ? key : null;
}

/** The bucket object a `storages/…` key names (`etag` null: read whatever is there), or null for any other key. */
export function parseStorageObjectBlobKey(key: string): { storageId: number; etag: string | null; objectKey: string } | null {
  const match = /^storages\/([1-9][0-9]{0,9})\/([0-9a-f-]+|_)\/([A-Za-z0-9_-]+)\.[a-z0-9]+$/.exec(key);
  if (!match) return null;
  return { storageId: Number(match[1]), etag: match[2] === '_' ? null : `"${match[2]}"`, objectKey: Buffer.from(match[3], 'base64url').toString('utf8') };
}

/** Where every referenced object of one storage sits among blob keys (`storages/{storage}/`): for counting them. */
export const storageBlobPrefix = (storageId: number): string => `${STORAGES_PREFIX}/${storageId}/`;
