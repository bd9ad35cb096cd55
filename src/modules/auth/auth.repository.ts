import type { Executor } from '../../db/database.js';
import type { TokensTable, UsersTable } from '../../db/schema.js';
import type { Selectable, Insertable } from 'kysely';

export type UserRow = Selectable<UsersTable>;
export type TokenRow = Selectable<TokensTable>;

export class AuthRepository {
  constructor(private readonly db: Executor) {}

  findUserByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  findUserById(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async countUsers(db: Executor = this.db): Promise<number> {
    const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Takes the instance's one first-admin claim; true for the caller that got it (race-free through the settings key). */
  async claimFirstAdmin(email: string, db: Executor = this.db): Promise<boolean> {
    const claimed = await db
      .insertInto('settings')
      .values({ key: 'first_admin_claimed', value: email })
      .onConflict((oc) => oc.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  insertUser(user: Insertable<UsersTable>, db: Executor = this.db): Promise<UserRow> {
    return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
  }

  insertToken(token: Insertable<TokensTable>): Promise<TokenRow> {
    return this.db.insertInto('tokens').values(token).returningAll().executeTakeFirstOrThrow();
  }

  findTokenWithUser(tokenHash: string) {
    return this.db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .select([
        'tokens.id as token_id',
        'tokens.kind',
        'tokens.expires_at',
        'tokens.scope',
        'users.id as user_id',
        'users.email',
        'users.is_admin',
      ])
      .where('tokens.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  listApiTokens(userId: number): Promise<TokenRow[]> {
    return this.db
      .selectFrom('tokens')
      .selectAll()
      .where('user_id', '=', userId)
      .where('kind', '=', 'api')
      .orderBy('id')
      .execute();
  }

  /** Deletes one of the user's tokens; returns its hash, or undefined when the user has no such token. */
  async deleteToken(userId: number, tokenId: number, kind?: TokenRow['kind']): Promise<string | undefined> {
    let query = this.db.deleteFrom('tokens').where('id', '=', tokenId).where('user_id', '=', userId);
    if (kind) query = query.where('kind', '=', kind);
    const row = await query.returning('token_hash').executeTakeFirst();
    return row?.token_hash;
  }

  touchToken(tokenId: number, at: string): Promise<unknown> {
    return this.db.updateTable('tokens').set({ last_used_at: at }).where('id', '=', tokenId).execute();
  }
}
