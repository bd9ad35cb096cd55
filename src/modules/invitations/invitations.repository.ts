import type { Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { InvitationsTable } from '../../db/schema.js';
import type { InvitationRow } from './invitations.schemas.js';

export class InvitationsRepository {
  constructor(private readonly db: Db) {}

  insert(values: Omit<Insertable<InvitationsTable>, 'id'>): Promise<InvitationRow> {
    return this.db.insertInto('invitations').values(values).returningAll().executeTakeFirstOrThrow();
  }

  list(projectId: number): Promise<InvitationRow[]> {
    return this.db.selectFrom('invitations').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(500).execute();
  }

  find(id: number): Promise<InvitationRow | undefined> {
    return this.db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The invitation of a link, with its project's name. */
  findByHash(tokenHash: string): Promise<(InvitationRow & { project_name: string }) | undefined> {
    return this.db
      .selectFrom('invitations')
      .innerJoin('projects', 'projects.id', 'invitations.project_id')
      .selectAll('invitations')
      .select('projects.name as project_name')
      .where('invitations.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /** Marks a pending, unexpired invitation used; false when another request used it first or it expired. */
  async claim(id: number, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('invitations')
      .set({ accepted_at: now })
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async unclaim(id: number): Promise<void> {
    await this.db.updateTable('invitations').set({ accepted_at: null }).where('id', '=', id).execute();
  }

  /** The account joins the project with the invitation's role, and the invitation records who used it. */
  async join(invitation: InvitationRow, userId: number, now: string, db: Executor = this.db): Promise<void> {
    await db.insertInto('project_members').values({ project_id: invitation.project_id, user_id: userId, role: invitation.role, created_at: now }).execute();
    await db.updateTable('invitations').set({ accepted_by: userId }).where('id', '=', invitation.id).execute();
  }

  async delete(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('invitations').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async emailHasAccount(email: string): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;
  }

  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
