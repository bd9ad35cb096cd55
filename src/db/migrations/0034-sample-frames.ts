import type { Kysely } from 'kysely';

/**
 * A video sample sent to an image project as frames (issue 26): the video row it becomes keeps the sample it came
 * from, the clip of it that was decoded (seconds from the start; null: the whole video) and the sample's time
 * segments (JSON text `[{start_s, end_s, label}]`), which the decoding turns into per-frame classifications.
 */
export function sampleFrames() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('videos').addColumn('range_start_s', 'double precision').execute();
      await db.schema.alterTable('videos').addColumn('range_end_s', 'double precision').execute();
      await db.schema.alterTable('videos').addColumn('source_sample_id', 'integer', (c) => c.references('samples.id').onDelete('set null')).execute();
      await db.schema.alterTable('videos').addColumn('segments', 'text').execute();
    },
  };
}
