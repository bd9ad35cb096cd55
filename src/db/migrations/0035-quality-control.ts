import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Labelling quality control (issue 29): a project's settings (overlap, ground-truth share, agreement threshold, who
 * sees scores, whether ground truth may train), its ground-truth images with the reviewed labels frozen when they
 * were marked, each annotator's own version of an image dealt to them (overlap and ground-truth images alike: the
 * same table, so nothing tells them apart), and the record of every consensus decision.
 */
export function qualityControl(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('qc_settings')
        .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
        .addColumn('overlap', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('ground_truth_share', 'real', (c) => c.notNull().defaultTo(0))
        .addColumn('agreement_threshold', 'real', (c) => c.notNull().defaultTo(0.7))
        .addColumn('annotators_see_scores', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('ground_truth_in_training', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('qc_ground_truth')
        .addColumn('image_id', 'integer', (c) => c.primaryKey().references('images.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('shapes', 'text', (c) => c.notNull())
        .addColumn('marked_by', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_ground_truth_project').on('qc_ground_truth').columns(['project_id', 'image_id']).execute();
      await withIdColumn(db.schema.createTable('qc_tasks'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('shapes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('active_ms', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('saves', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('submitted_at', 'text')
        .execute();
      await db.schema.createIndex('qc_tasks_image_user').on('qc_tasks').columns(['image_id', 'user_id']).unique().execute();
      await db.schema.createIndex('qc_tasks_project_user').on('qc_tasks').columns(['project_id', 'user_id', 'id']).execute();
      await withIdColumn(db.schema.createTable('qc_decisions'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('picked_user_id', 'integer')
        .addColumn('agreement', 'real')
        .addColumn('before', 'text', (c) => c.notNull())
        .addColumn('after', 'text', (c) => c.notNull())
        .addColumn('decided_by', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_decisions_image').on('qc_decisions').columns(['project_id', 'image_id', 'id']).execute();
    },
  };
}
