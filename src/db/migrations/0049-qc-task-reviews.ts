import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * A review step on quality-control task submissions (issue 29). A task carries where its review stands
 * (`review_state`: null while never submitted, `pending` once submitted or resubmitted, `accepted`, or
 * `changes_requested` — then the task is open again with its annotator) with the last reviewer's comment, and
 * `qc_task_reviews` records every decision with the version it was made on, as `qc_decisions` records consensus.
 * Tasks already submitted wait for review.
 */
export function qcTaskReviews(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('qc_tasks').addColumn('review_state', 'text').execute();
      await db.schema.alterTable('qc_tasks').addColumn('review_comment', 'text').execute();
      await db.schema.alterTable('qc_tasks').addColumn('review_round', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.updateTable('qc_tasks').set({ review_state: 'pending' }).where('status', '=', 'submitted').execute();
      await db.schema.createIndex('qc_tasks_review').on('qc_tasks').columns(['project_id', 'review_state', 'id']).execute();
      await withIdColumn(db.schema.createTable('qc_task_reviews'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('task_id', 'integer', (c) => c.notNull().references('qc_tasks.id').onDelete('cascade'))
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('comment', 'text', (c) => c.notNull())
        .addColumn('shapes', 'text', (c) => c.notNull())
        .addColumn('reviewed_by', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_task_reviews_project').on('qc_task_reviews').columns(['project_id', 'user_id', 'id']).execute();
      await db.schema.createIndex('qc_task_reviews_task').on('qc_task_reviews').columns(['task_id', 'id']).execute();
    },
  };
}
