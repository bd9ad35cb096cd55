import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * The review step of migration 0049 on sample tasks (issue 29): a sample task carries where its review stands
 * (`review_state`, `review_comment`, `review_round`, as qc_tasks) and `qc_sample_task_reviews` records every decision
 * with the answer it was made on (class or classes, spans, value). Sample tasks already submitted wait for review.
 */
export function qcSampleTaskReviews(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('qc_sample_tasks').addColumn('review_state', 'text').execute();
      await db.schema.alterTable('qc_sample_tasks').addColumn('review_comment', 'text').execute();
      await db.schema.alterTable('qc_sample_tasks').addColumn('review_round', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.updateTable('qc_sample_tasks').set({ review_state: 'pending' }).where('status', '=', 'submitted').execute();
      await db.schema.createIndex('qc_sample_tasks_review').on('qc_sample_tasks').columns(['project_id', 'review_state', 'id']).execute();
      await withIdColumn(db.schema.createTable('qc_sample_task_reviews'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('task_id', 'integer', (c) => c.notNull().references('qc_sample_tasks.id').onDelete('cascade'))
        .addColumn('sample_id', 'integer', (c) => c.notNull().references('samples.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('comment', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('labels', 'text')
        .addColumn('spans', 'text')
        .addColumn('value', 'text')
        .addColumn('reviewed_by', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_sample_task_reviews_project').on('qc_sample_task_reviews').columns(['project_id', 'user_id', 'id']).execute();
      await db.schema.createIndex('qc_sample_task_reviews_task').on('qc_sample_task_reviews').columns(['task_id', 'id']).execute();
    },
  };
}
