import type { Db } from '../../db/database.js';
import type { OrgRole } from '../../access/roles.js';
import type { OrgMemberOut, OrgOut } from './orgs.schemas.js';

export class OrgsRepository {
  constructor(private readonly db: Db) {}

  /** Organizations the user belongs to, with their role; every organization when `userId` is null. */
  async list(userId: number | null, viewerId: number): Promise<OrgOut[]> {
    let query = this.db
      .selectFrom('orgs')
      .leftJoin('org_members', (join) => join.onRef('org_members.org_id', '=', 'orgs.id').on('org_members.user_id', '=', viewerId))
      .select(['orgs.id', 'orgs.name', 'orgs.created_at', 'org_members.role'])
      .orderBy('orgs.id');
    if (userId !== null) query = query.where('org_members.user_id', '=', userId);
    return query.execute();
  }

  /** Creates the organization with its creator as owner, in one transaction. */
  create(name: string, ownerId: number, now: string) {
    return this.db.transaction().execute(async (tx) => {
      const org = await tx.insertInto('orgs').values({ name, created_by: ownerId, created_at: now }).returningAll().executeTakeFirstOrThrow();
      await tx.insertInto('org_members').values({ org_id: org.id, user_id: ownerId, role: 'owner', created_at: now }).execute();
      return org;
    });
  }

  members(orgId: number): Promise<OrgMemberOut[]> {
    return this.memberQuery(orgId).orderBy('org_members.created_at').orderBy('users.id').execute();
  }

  member(orgId: number, userId: number): Promise<OrgMemberOut | undefined> {
    return this.memberQuery(orgId).where('org_members.user_id', '=', userId).executeTakeFirst();
  }

  async addMember(orgId: number, userId: number, role: OrgRole, now: string): Promise<void> {
    await this.db.insertInto('org_members').values({ org_id: orgId, user_id: userId, role, created_at: now }).execute();
  }

  /**
   * Changes a role or removes a member, refusing to leave the organization without an owner. The organization's
   * row is locked first, so two concurrent demotions cannot both pass.
   */
  changeMember(orgId: number, userId: number, role: OrgRole | null): Promise<'done' | 'missing' | 'last-owner'> {
    return this.db.transaction().execute(async (tx) => {
      // A no-op write locks the organization's row on both dialects, serializing concurrent member changes.
      await tx.updateTable('orgs').set((eb) => ({ name: eb.ref('name') })).where('id', '=', orgId).execute();
      const owners = await tx.selectFrom('org_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').execute();
      const current = await tx.selectFrom('org_members').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
      if (!current) return 'missing';
      if (current.role === 'owner' && role !== 'owner' && owners.length <= 1) return 'last-owner';
      if (role === null) await tx.deleteFrom('org_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      else await tx.updateTable('org_members').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      return 'done';
    });
  }

  private memberQuery(orgId: number) {
    return this.db
      .selectFrom('org_members')
      .innerJoin('users', 'users.id', 'org_members.user_id')
      .select(['users.id as user_id', 'users.email', 'users.display_name', 'org_members.role', 'org_members.created_at'])
      .where('org_members.org_id', '=', orgId);
  }
}
