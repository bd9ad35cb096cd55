import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Videos of an image project (issue 26): the uploaded file (a blob), what ffprobe read of it, and its decoding state;
 * its frames are images that name their video, frame number (0-based) and timestamp.
 */
export function videos(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('videos'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('fps', 'double precision', (c) => c.notNull())
        .addColumn('frame_count', 'integer', (c) => c.notNull())
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('duration_s', 'double precision', (c) => c.notNull())
        .addColumn('start_s', 'double precision', (c) => c.notNull())
        .addColumn('step', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('job_id', 'integer')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('videos_project_id').on('videos').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('videos_status').on('videos').column('status').execute();
      await db.schema.alterTable('images').addColumn('video_id', 'integer', (c) => c.references('videos.id').onDelete('set null')).execute();
      await db.schema.alterTable('images').addColumn('frame', 'integer').execute();
      await db.schema.alterTable('images').addColumn('timestamp_s', 'double precision').execute();
      await db.schema.createIndex('images_video_frame').on('images').columns(['video_id', 'frame']).execute();
    },
  };
}
