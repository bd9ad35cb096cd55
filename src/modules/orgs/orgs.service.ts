import type { Caller } from '../../access/caller.js';
import type { OrgAccess } from '../../access/org-access.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { MembersRepository, UserRef } from '../members/members.repository.js';
import type { OrgsRepository } from './orgs.repository.js';
import type { OrgCreate, OrgMemberCreate, OrgMemberOut, OrgMemberUpdate, OrgOut } from './orgs.schemas.js';

export class OrgsService {
  constructor(
    private readonly orgs: OrgsRepository,
    private readonly users: MembersRepository,
    private readonly orgAccess: OrgAccess,
    /** Organization roles grant project roles: every change here makes cached project grants stale. */
    private readonly projectAccess: ProjectAccess,
  ) {}

  list(caller: Caller): Promise<OrgOut[]> {
    return this.orgs.list(caller.isAdmin ? null : caller.userId, caller.userId);
  }

  async create(caller: Caller, input: OrgCreate): Promise<OrgOut> {
    const org = await this.orgs.create(input.name.trim(), caller.userId, new Date().toISOString());
    return { id: org.id, name: org.name, created_at: org.created_at, role: 'owner' };
  }

  async get(caller: Caller, orgId: number): Promise<OrgOut> {
    const { org } = await this.orgAccess.org(caller, orgId, 'org.read');
    const member = await this.orgs.member(orgId, caller.userId);
    return { id: org.id, name: org.name, created_at: org.created_at, role: member?.role ?? null };
  }

  async members(caller: Caller, orgId: number): Promise<OrgMemberOut[]> {
    await this.orgAccess.org(caller, orgId, 'org.read');
    return this.orgs.members(orgId);
  }

  async addMember(caller: Caller, orgId: number, input: OrgMemberCreate): Promise<OrgMemberOut> {
    await this.orgAccess.org(caller, orgId, input.role === 'owner' ? 'org.owners' : 'org.manage');
    const user = await this.userOf(input);
    try {
      await this.orgs.addMember(orgId, user.id, input.role, new Date().toISOString());
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`User ${user.id} is already a member of organization ${orgId}; change the role with PATCH`);
      throw err;
    }
    this.projectAccess.forget();
    return (await this.orgs.member(orgId, user.id))!;
  }

  async changeMember(caller: Caller, orgId: number, userId: number, input: OrgMemberUpdate): Promise<OrgMemberOut> {
    const { role } = await this.orgAccess.org(caller, orgId, 'org.manage');
    const current = await this.orgs.member(orgId, userId);
    if (!current) throw NotFoundError.of('Member', userId);
    if ((current.role === 'owner' || input.role === 'owner') && role !== 'owner') throw new ForbiddenError('Only owners grant or take the owner role');
    await this.settle(await this.orgs.changeMember(orgId, userId, input.role), userId);
    return (await this.orgs.member(orgId, userId))!;
  }

  /** Managers remove members (owners only by owners); anyone may leave, except the last owner. */
  async removeMember(caller: Caller, orgId: number, userId: number): Promise<void> {
    const { role } = await this.orgAccess.org(caller, orgId, userId === caller.userId ? 'org.read' : 'org.manage');
    const current = await this.orgs.member(orgId, userId);
    if (!current) throw NotFoundError.of('Member', userId);
    if (current.role === 'owner' && userId !== caller.userId && role !== 'owner') throw new ForbiddenError('Only owners remove owners');
    await this.settle(await this.orgs.changeMember(orgId, userId, null), userId);
  }

  private async settle(outcome: 'done' | 'missing' | 'last-owner', userId: number): Promise<void> {
    if (outcome === 'missing') throw NotFoundError.of('Member', userId);
    if (outcome === 'last-owner') throw new ConflictError('An organization keeps at least one owner');
    this.projectAccess.forget();
  }

  private async userOf(input: OrgMemberCreate): Promise<UserRef> {
    if ((input.email === undefined) === (input.user_id === undefined)) throw ValidationError.at(['body'], 'Send exactly one of email and user_id');
    if (input.user_id !== undefined) {
      const user = await this.users.findUserById(input.user_id);
      if (!user) throw ValidationError.at(['body', 'user_id'], `User ${input.user_id} not found`);
      return user;
    }
    const user = await this.users.findUserByEmail(input.email!.trim().toLowerCase());
    if (!user) throw ValidationError.at(['body', 'email'], `No account with email ${input.email}`);
    return user;
  }
}
