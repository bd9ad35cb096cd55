import type { TestApp } from './test-app.js';

let seq = 0;

/**
 * Inserts an image row straight into the database (no upload, no blob), for tests of what hangs off images:
 * classes, annotations. Returns its id.
 */
export async function insertImageRow(t: TestApp, projectId: number, size: { width: number; height: number } = { width: 640, height: 480 }): Promise<number> {
  const n = ++seq;
  const row = await t.versa.deps.db
    .insertInto('images')
    .values({
      project_id: projectId,
      filename: `row-${n}.jpg`,
      original_name: `row-${n}.jpg`,
      width: size.width,
      height: size.height,
      split: null,
      sha256: `sha-${n}`,
      mime_type: 'image/jpeg',
      size_bytes: 1,
      blob_key: `test/${n}`,
      thumbnail_key: `test/${n}.webp`,
      created_at: new Date().toISOString(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
