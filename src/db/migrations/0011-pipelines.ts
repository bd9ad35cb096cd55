import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Pipelines (a DAG of plugin steps, per project or global), their runs (per-step status and outputs), and what each
 * run wrote (annotations, reviews, versions, exports), so a run's effects can be reviewed or undone by its id.
 */
export function pipelines(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('pipelines'), dialect)
        // Null: a global pipeline, run against a project chosen at run time.
        .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('definition', 'text', (c) => c.notNull())
        // The YAML text it was saved from (comments kept), while it still reads back to `definition`.
        .addColumn('yaml_source', 'text')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pipelines_project').on('pipelines').columns(['project_id', 'id']).execute();

      await withIdColumn(db.schema.createTable('pipeline_runs'), dialect)
        .addColumn('pipeline_id', 'integer', (c) => c.notNull().references('pipelines.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('version_id', 'integer')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('outputs', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('error', 'text')
        .addColumn('progress', 'real', (c) => c.notNull().defaultTo(0))
        .addColumn('eta_seconds', 'real')
        .addColumn('job_id', 'integer')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('pipeline_runs_pipeline').on('pipeline_runs').columns(['pipeline_id', 'id']).execute();

      await db.schema
        .createTable('pipeline_run_writes')
        .addColumn('run_id', 'integer', (c) => c.notNull().references('pipeline_runs.id').onDelete('cascade'))
        .addColumn('step_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('object_id', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('pipeline_run_writes_run').on('pipeline_run_writes').columns(['run_id', 'kind']).execute();
      await db.schema.createIndex('pipeline_run_writes_object').on('pipeline_run_writes').columns(['kind', 'object_id']).execute();
    },
  };
}
