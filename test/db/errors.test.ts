import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle } from '../../src/db/database.js';
import { DatabaseConflictError, ForeignKeyViolationError, UniqueViolationError } from '../../src/db/errors.js';
import { transactionsOf } from '../../src/db/transactions.js';
import { openTestDatabase } from '../helpers/test-app.js';

// Constraint failures of both dialects arrive as typed errors (src/db/errors.ts), in plain queries and transactions.
describe('database error translation', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'versa-db-errors-'));
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  const user = (email: string) => ({ email, password_hash: 'x', display_name: 'x', is_admin: 0, created_at: new Date().toISOString() });

  before(async () => ({ database, drop } = await openTestDatabase(dataDir)));
  after(async () => {
    await database.close();
    await drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('turns a unique violation into UniqueViolationError, keeping the driver code', async () => {
    await database.db.insertInto('users').values(user('a@example.com')).execute();
    const err = await database.db.insertInto('users').values(user('a@example.com')).execute().catch((e: unknown) => e);
    assert.ok(err instanceof UniqueViolationError, String(err));
    assert.ok(err instanceof DatabaseConflictError);
    assert.match(err.code, /^(SQLITE_CONSTRAINT_UNIQUE|23505)$/);
  });

  it('turns a foreign-key violation inside a transaction into ForeignKeyViolationError, and rolls back', async () => {
    const before = await database.db.selectFrom('users').select('id').execute();
    const err = await transactionsOf(database.db)
      .run(async (tx) => {
        await tx.insertInto('users').values(user('b@example.com')).execute();
        const now = new Date().toISOString();
        await tx
          .insertInto('projects')
          .values({ name: 'p', owner_id: 999_999, description: '', project_type: 'object-detection', location: '', created_at: now, updated_at: now })
          .execute();
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof ForeignKeyViolationError, String(err));
    assert.equal((await database.db.selectFrom('users').select('id').execute()).length, before.length);
  });

  it('leaves other errors alone', async () => {
    const err = await database.db.selectFrom('no_such_table' as never).selectAll().execute().catch((e: unknown) => e);
    assert.ok(err instanceof Error && !(err instanceof DatabaseConflictError));
  });
});
