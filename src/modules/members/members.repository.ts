import type { Db, Executor } from '../../db/database.js';
import type { MemberOut, MemberRole } from './members.schemas.js';

export interface UserRef {
  id: number;
  email: string;
  display_name: string;
}

export class MembersRepository {
  constructor(private readonly db: Db) {}

  findUserById(id: number): Promise<UserRef | undefined> {
    return this.db.selectFrom('users').select(['id', 'email', 'display_name']).where('id', '=', id).executeTakeFirst();
  }

  findUserByEmail(email: string): Promise<UserRef | undefined> {
    return this.db.selectFrom('users').select(['id', 'email', 'display_name']).where('email', '=', email).executeTakeFirst();
  }

  /** Owners and admins of an organization: each is an admin of the organization's projects. */
  async orgAdmins(orgId: number): Promise<MemberOut[]> {
    const rows = await this.db
      .selectFrom('org_members')
      .innerJoin('users', 'users.id', 'org_members.user_id')
      .select(['users.id as user_id', 'users.email', 'users.display_name', 'org_members.created_at'])
      .where('org_members.org_id', '=', orgId)
      .where('org_members.role', 'in', ['owner', 'admin'])
      .orderBy('users.id')
      .execute();
    return rows.map((row) => ({ ...row, role: 'admin' as const, source: 'organization' as const, org_id: orgId }));
  }

  /** The project's members with their accounts, in the order they joined. */
  async list(projectId: number): Promise<MemberOut[]> {
    return this.db
      .selectFrom('project_members')
      .innerJoin('users', 'users.id', 'project_members.user_id')
      .select(['users.id as user_id', 'users.email', 'users.display_name', 'project_members.role', 'project_members.created_at'])
      .where('project_members.project_id', '=', projectId)
      .orderBy('project_members.created_at')
      .orderBy('users.id')
      .execute();
  }

  find(projectId: number, userId: number): Promise<MemberOut | undefined> {
    return this.db
      .selectFrom('project_members')
      .innerJoin('users', 'users.id', 'project_members.user_id')
      .select(['users.id as user_id', 'users.email', 'users.display_name', 'project_members.role', 'project_members.created_at'])
      .where('project_members.project_id', '=', projectId)
      .where('project_members.user_id', '=', userId)
      .executeTakeFirst();
  }

  async insert(projectId: number, userId: number, role: MemberRole, createdAt: string): Promise<void> {
    await this.db.insertInto('project_members').values({ project_id: projectId, user_id: userId, role, created_at: createdAt }).execute();
  }

  async updateRole(projectId: number, userId: number, role: MemberRole): Promise<boolean> {
    const result = await this.db
      .updateTable('project_members')
      .set({ role })
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Removes a member together with what only a member holds in the project: their assignments and image locks.
   * Returns false when they were not a member.
   */
  remove(projectId: number, userId: number): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await tx.deleteFrom('assignments').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
      await this.releaseLocks(tx, projectId, userId);
      return true;
    });
  }

  private async releaseLocks(tx: Executor, projectId: number, userId: number): Promise<void> {
    await tx
      .deleteFrom('image_locks')
      .where('user_id', '=', userId)
      .where('image_id', 'in', (eb) => eb.selectFrom('images').select('id').where('project_id', '=', projectId))
      .execute();
  }
}
