import type { Kysely } from 'kysely';

/**
 * Versions freeze video frames (issue 26): a snapshot row keeps the video its image is a frame of and the frame
 * number, and an output keeps them when it is its source's only output (no augmented copies, no tiles), so a
 * version's export writes its frames as video and its tracks as tracks however the project changes since.
 */
export function versionFrames() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const table of ['version_sources', 'version_images']) {
        await db.schema.alterTable(table).addColumn('video_id', 'integer').execute();
        await db.schema.alterTable(table).addColumn('frame', 'integer').execute();
      }
    },
  };
}
