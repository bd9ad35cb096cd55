import { ForbiddenError, NotFoundError } from '../http/errors.js';
import type { AccessRepository } from './access.repository.js';
import type { Caller } from './caller.js';
import type { OrgRole } from './roles.js';

/** What an organization role may do there. */
export type OrgPermission = 'org.read' | 'org.manage' | 'org.owners';

const ORG_PERMISSIONS: Record<OrgRole, readonly OrgPermission[]> = {
  owner: ['org.read', 'org.manage', 'org.owners'],
  admin: ['org.read', 'org.manage'],
  member: ['org.read'],
};

/**
 * Permission checks for organizations, beside ProjectAccess. An organization the caller does not belong to is not
 * found (404); instance admins act as owners everywhere.
 */
export class OrgAccess {
  constructor(private readonly repository: AccessRepository) {}

  async roleOf(caller: Caller, orgId: number): Promise<OrgRole | null> {
    if (caller.isAdmin) return 'owner';
    return this.repository.orgRole(caller.userId, orgId);
  }

  /** Loads an organization the caller holds `permission` in (404 when missing or not theirs, 403 when not allowed). */
  async org(caller: Caller, orgId: number, permission: OrgPermission) {
    const org = await this.repository.findOrg(orgId);
    const role = await this.check(caller, orgId, org !== undefined, permission);
    return { org: org!, role };
  }

  /** Throws unless the caller's role in the (existing) organization allows `permission`; returns the role. */
  async check(caller: Caller, orgId: number, exists: boolean, permission: OrgPermission): Promise<OrgRole> {
    const role = exists ? await this.roleOf(caller, orgId) : null;
    if (!role) throw NotFoundError.of('Organization', orgId);
    if (!ORG_PERMISSIONS[role].includes(permission)) {
      throw new ForbiddenError(`Your role (${role}) in organization ${orgId} does not allow ${permission}`);
    }
    return role;
  }
}
