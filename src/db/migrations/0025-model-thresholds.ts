import type { Kysely } from 'kysely';

/**
 * Promoting a trained model records, per class name, the confidence threshold that maximised F1 on its run's
 * evaluation split (issue 28); auto-annotate uses them when a request names no confidence. JSON text, null until then.
 */
export function modelThresholds() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('models').addColumn('class_thresholds', 'text').execute();
    },
  };
}
