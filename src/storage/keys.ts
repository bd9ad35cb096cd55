/**
 * Every blob key the application stores, in one place. Keys are built from ids, content hashes and server-chosen
 * names only (never from user input) and are checked again by `assertBlobKey` in the store.
 *
 *   projects/{project}/images/{sha256}.{ext}          an uploaded or imported image (content-addressed)
 *   projects/{project}/thumbs/{sha256}.webp           its thumbnail
 *   projects/{project}/exports/{filename}             an export archive
 *   projects/{project}/models/{sha256}.{ext}          an uploaded model
 *   projects/{project}/versions/{number}/{split}/{f}  a generated dataset version's files
 *
 * Everything of a project sits under `projects/{project}`; src/storage/lifecycle.ts says what is deleted with what.
 */
export const projectBlobPrefix = (projectId: number): string => `projects/${projectId}`;

export const imageBlobKey = (projectId: number, sha256: string, ext: string): string => `${projectBlobPrefix(projectId)}/images/${sha256}.${ext}`;

export const thumbnailBlobKey = (projectId: number, sha256: string): string => `${projectBlobPrefix(projectId)}/thumbs/${sha256}.webp`;

export const exportBlobKey = (projectId: number, filename: string): string => `${projectBlobPrefix(projectId)}/exports/${filename}`;

export const modelBlobKey = (projectId: number, sha256: string, ext: string): string => `${projectBlobPrefix(projectId)}/models/${sha256}.${ext}`;

export const versionPrefix = (projectId: number, number: number): string => `${projectBlobPrefix(projectId)}/versions/${number}`;

export const versionFileKey = (prefix: string, split: string, filename: string): string => `${prefix}/${split}/${filename}`;
