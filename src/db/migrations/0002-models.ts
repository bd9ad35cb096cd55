import { sql, type Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/** The model registry and each model's lifecycle history. */
export function models(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('models'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('task', 'text', (c) => c.notNull())
        .addColumn('input_width', 'integer')
        .addColumn('input_height', 'integer')
        .addColumn('class_names', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('lifecycle', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('path', 'text')
        .addColumn('blob_key', 'text')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('models_project_name', ['project_id', 'name'])
        .addUniqueConstraint('models_project_sha256', ['project_id', 'sha256'])
        .execute();
      // At most one production model per project and task, even under concurrent promotions.
      await db.schema
        .createIndex('models_one_production')
        .on('models')
        .columns(['project_id', 'task'])
        .unique()
        .where(sql.ref('lifecycle'), '=', 'production')
        .execute();

      await withIdColumn(db.schema.createTable('model_lifecycle_events'), dialect)
        .addColumn('model_id', 'integer', (c) => c.notNull().references('models.id').onDelete('cascade'))
        .addColumn('from_lifecycle', 'text')
        .addColumn('to_lifecycle', 'text', (c) => c.notNull())
        .addColumn('changed_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('changed_at', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .execute();
      await db.schema.createIndex('model_lifecycle_events_model').on('model_lifecycle_events').columns(['model_id', 'id']).execute();
    },
  };
}
