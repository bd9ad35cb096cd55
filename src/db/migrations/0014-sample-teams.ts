import type { Kysely } from 'kysely';

/**
 * Samples take part in teams as images do: an assignee (one per sample, so a column rather than a table), and the
 * last review decision beside the review state the samples table already has. Both listings filter by them.
 */
export function sampleTeams() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('samples').addColumn('assignee_id', 'integer', (c) => c.references('users.id').onDelete('set null')).execute();
      await db.schema.alterTable('samples').addColumn('review_comment', 'text').execute();
      await db.schema.alterTable('samples').addColumn('reviewed_by', 'integer', (c) => c.references('users.id').onDelete('set null')).execute();
      await db.schema.alterTable('samples').addColumn('reviewed_at', 'text').execute();
      await db.schema.createIndex('samples_project_assignee_id').on('samples').columns(['project_id', 'assignee_id', 'id']).execute();
      await db.schema.createIndex('samples_project_review_id').on('samples').columns(['project_id', 'review_state', 'id']).execute();
    },
  };
}
