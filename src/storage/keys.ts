import { randomBytes } from 'node:crypto';

/**
 * Every blob key the application stores, in one place. Keys are built from ids, content hashes and server-chosen
 * names only (never from user input) and are checked again by `assertBlobKey` in the store.
 *
 *   projects/{project}/images/{sha256}.{ext}            an uploaded or imported image (content-addressed)
 *   projects/{project}/thumbs/{sha256}.webp             its thumbnail
 *   projects/{project}/samples/{sha256}.{ext}           a sample's media file (audio, …; content-addressed)
 *   projects/{project}/exports/{filename}               an export archive, or a file an adapter prepared
 *   projects/{project}/models/{sha256}-{random}.{ext}   an uploaded model
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
