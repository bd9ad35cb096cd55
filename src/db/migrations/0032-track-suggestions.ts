import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Tracks a detector and the tracker proposed over a video's frames (issue 26), waiting for a person to accept (it
 * becomes a track with keyframes) or reject (it goes) each one. Apart from `tracks`, so nothing that reads tracks
 * (frames' shapes, exports, versions) sees a proposal. `boxes` is JSON text: `[[frame, x, y, width, height, score], …]`
 * by frame, the frames where a detection matched the track.
 */
export function trackSuggestions(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('track_suggestions'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('video_id', 'integer', (c) => c.notNull().references('videos.id').onDelete('cascade'))
        .addColumn('class_id', 'integer', (c) => c.notNull().references('classes.id').onDelete('cascade'))
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('score', 'real', (c) => c.notNull())
        .addColumn('first_frame', 'integer', (c) => c.notNull())
        .addColumn('last_frame', 'integer', (c) => c.notNull())
        .addColumn('boxes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('track_suggestions_video_id').on('track_suggestions').columns(['video_id', 'id']).execute();
      await db.schema.createIndex('track_suggestions_class_id').on('track_suggestions').column('class_id').execute();
    },
  };
}
