import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { foundation } from './0001-foundation.js';

/** Every migration, in order. Names are stable forever: they are recorded in the database. */
export function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
  };
}
