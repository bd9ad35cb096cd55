import type { Kysely } from 'kysely';

/**
 * A quality-control sample task and a ground-truth sample keep every class of a multi-label answer and the value
 * (tabular regression target, audio transcript, LLM rating/preference) as the samples table does (issue 29): `labels`
 * JSON text of every class name when there are several, `value` JSON text.
 */
export function qcSampleValues() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const table of ['qc_sample_tasks', 'qc_sample_ground_truth']) {
        await db.schema.alterTable(table).addColumn('labels', 'text').execute();
        await db.schema.alterTable(table).addColumn('value', 'text').execute();
      }
    },
  };
}
