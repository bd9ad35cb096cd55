import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Object tracks over a video's frames (issue 26): one identity (class, attributes) made of keyframes, one per frame at
 * most, each a shape of one annotation type with its `outside` and `occluded` flags; frames between keyframes are
 * interpolated when read, never stored.
 */
export function tracks(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('tracks'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('video_id', 'integer', (c) => c.notNull().references('videos.id').onDelete('cascade'))
        .addColumn('class_id', 'integer', (c) => c.notNull().references('classes.id'))
        .addColumn('attributes', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tracks_video_id').on('tracks').columns(['video_id', 'id']).execute();
      await db.schema.createIndex('tracks_class_id').on('tracks').column('class_id').execute();
      await db.schema
        .createTable('track_keyframes')
        .addColumn('track_id', 'integer', (c) => c.notNull().references('tracks.id').onDelete('cascade'))
        .addColumn('frame', 'integer', (c) => c.notNull())
        .addColumn('annotation_type', 'text', (c) => c.notNull())
        .addColumn('geometry', 'text', (c) => c.notNull())
        .addColumn('outside', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('occluded', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('track_keyframes_pk', ['track_id', 'frame'])
        .execute();
    },
  };
}
