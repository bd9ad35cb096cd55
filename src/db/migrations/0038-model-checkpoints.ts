import type { Kysely } from 'kysely';

/**
 * A model Versa trained keeps its trainer checkpoint (weights/best.pt) in the store beside its ONNX file (issue 27),
 * so a run on any worker can fine-tune from it: before, the checkpoint stayed in the run folder of the worker that
 * trained it.
 */
export function modelCheckpoints() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('models').addColumn('checkpoint_key', 'varchar(512)').execute();
    },
  };
}
