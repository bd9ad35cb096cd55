import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ROLE_CATALOG } from '../../access/roles.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { MembersRepository, UserRef } from './members.repository.js';
import type { MemberCreate, MemberOut, MemberUpdate, MyAccessOut } from './members.schemas.js';

export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly access: ProjectAccess,
  ) {}

  roles() {
    return ROLE_CATALOG.map((role) => ({ name: role.name, description: role.description, permissions: [...role.permissions] }));
  }

  /** The caller's own role in the project and what it permits: pages hide or disable what the caller cannot do. */
  async myAccess(caller: Caller, projectId: number): Promise<MyAccessOut> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const role = (await this.access.roleOf(caller, project))!;
    return { role, permissions: [...(ROLE_CATALOG.find((r) => r.name === role)?.permissions ?? [])] };
  }

  /**
   * The owner first, then the members in the order they joined, then the admins through the project's organization.
   * Anyone who sees the project sees who works on it.
   */
  async list(caller: Caller, projectId: number): Promise<MemberOut[]> {
    const project = await this.access.project(caller, projectId, 'project.read');
    const owner = await this.members.findUserById(project.owner_id);
    const members = (await this.members.list(projectId)).map((m) => ({ ...m, source: 'member' as const }));
    // Admins through the project's organization are listed too, with that source: access nobody can see is access
    // nobody revokes. One who is also a member appears twice (both grants exist; the stronger one applies).
    const derived = project.org_id === null ? [] : (await this.members.orgAdmins(project.org_id)).filter((m) => m.user_id !== project.owner_id);
    return [
      ...(owner ? [{ user_id: owner.id, email: owner.email, display_name: owner.display_name, role: 'owner' as const, created_at: project.created_at, source: 'owner' as const }] : []),
      ...members,
      ...derived,
    ];
  }

  async add(caller: Caller, projectId: number, input: MemberCreate): Promise<MemberOut> {
    const project = await this.access.project(caller, projectId, 'project.members');
    const user = await this.userOf(input);
    if (user.id === project.owner_id) throw new ConflictError(`User ${user.id} owns project ${projectId}`);
    try {
      await this.members.insert(projectId, user.id, input.role, new Date().toISOString());
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`User ${user.id} is already a member of project ${projectId}; change the role with PATCH`);
      throw err;
    }
    this.access.forget(projectId);
    return (await this.members.find(projectId, user.id))!;
  }

  async changeRole(caller: Caller, projectId: number, userId: number, input: MemberUpdate): Promise<MemberOut> {
    const project = await this.access.project(caller, projectId, 'project.members');
    if (userId === project.owner_id) throw new ConflictError("The owner's role cannot be changed");
    if (!(await this.members.updateRole(projectId, userId, input.role))) throw NotFoundError.of('Member', userId);
    this.access.forget(projectId);
    return (await this.members.find(projectId, userId))!;
  }

  /** Admins remove members; any member may leave. Their assignments and locks in the project go with them. */
  async remove(caller: Caller, projectId: number, userId: number): Promise<void> {
    const project = await this.access.project(caller, projectId, userId === caller.userId ? 'project.read' : 'project.members');
    if (userId === project.owner_id) throw new ConflictError('The owner cannot be removed from the project');
    if (!(await this.members.remove(projectId, userId))) throw NotFoundError.of('Member', userId);
    this.access.forget(projectId);
  }

  private async userOf(input: MemberCreate): Promise<UserRef> {
    if ((input.email === undefined) === (input.user_id === undefined)) {
      throw ValidationError.at(['body'], 'Send exactly one of email and user_id');
    }
    if (input.user_id !== undefined) {
      const user = await this.members.findUserById(input.user_id);
      if (!user) throw ValidationError.at(['body', 'user_id'], `User ${input.user_id} not found`);
      return user;
    }
    const user = await this.members.findUserByEmail(input.email!.trim().toLowerCase());
    if (!user) throw ValidationError.at(['body', 'email'], `No account with email ${input.email}`);
    return user;
  }
}
