import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { UserOut } from '../auth/auth.schemas.js';
import { hashToken, newTokenSecret } from '../auth/tokens.logic.js';
import type { InvitationsRepository } from './invitations.repository.js';
import {
  toInvitationOut,
  type InvitationAccept,
  type InvitationAcceptedOut,
  type InvitationCreate,
  type InvitationCreatedOut,
  type InvitationListedOut,
  type InvitationRow,
  type InvitationPreviewOut,
} from './invitations.schemas.js';

/** What accepting needs from the accounts side: make an account, then a login session for it. */
export interface Accounts {
  register(input: { email: string; password: string; display_name?: string }, ip: string): Promise<UserOut>;
  login(email: string, password: string, ip: string): Promise<{ token: string; token_type: 'bearer'; expires_at: string; user: UserOut }>;
}

const DAY_MS = 86_400_000;
const GONE = 'This invitation link is unknown, already used or expired; ask for a new one';
/** The sealed secret is bound to its row's hash: copied into another invitation's row, it does not open. */
const sealContext = (tokenHash: string) => `invitation-token:${tokenHash}`;

/**
 * Invitations let a project admin bring in someone who has no account yet: the link (returned to the inviter, no
 * e-mail is sent) creates the account with the invited address and joins the project with the role. Single use;
 * expires.
 */
export class InvitationsService {
  constructor(
    private readonly invitations: InvitationsRepository,
    private readonly access: ProjectAccess,
    private readonly accounts: Accounts,
    /** Keeps each link's secret encrypted so the list can show it again; null (no SECRETS_KEY): links are shown once. */
    private readonly secrets: SecretBox | null,
  ) {}

  async create(caller: Caller, projectId: number, input: InvitationCreate): Promise<InvitationCreatedOut> {
    await this.access.project(caller, projectId, 'project.members');
    const email = input.email.trim().toLowerCase();
    if (await this.invitations.emailHasAccount(email)) {
      throw new ConflictError(`${email} already has an account: add them as a member instead (POST /api/projects/${projectId}/members)`);
    }
    const token = newTokenSecret().replace(/^vrs_/, '');
    const now = new Date();
    const tokenHash = hashToken(token);
    const row = await this.invitations.insert({
      project_id: projectId,
      email,
      role: input.role,
      token_hash: tokenHash,
      token_sealed: this.secrets?.seal(token, sealContext(tokenHash)) ?? null,
      invited_by: caller.userId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (input.expires_in_days ?? 7) * DAY_MS).toISOString(),
      accepted_at: null,
      accepted_by: null,
    });
    return { ...toInvitationOut(row), token, url: `/invite/${token}` };
  }

  /** Only for those who manage members: a pending invitation's link, opened from its sealed secret. */
  async list(caller: Caller, projectId: number): Promise<InvitationListedOut[]> {
    await this.access.project(caller, projectId, 'project.members');
    const now = new Date().toISOString();
    return (await this.invitations.list(projectId)).map((row) => {
      const out = toInvitationOut(row, now);
      return { ...out, url: out.status === 'pending' ? this.link(row) : null };
    });
  }

  /** The link of a row whose secret was sealed; null when none was, or it does not open with this key (rotated). */
  private link(row: InvitationRow): string | null {
    if (!row.token_sealed || !this.secrets) return null;
    try {
      return `/invite/${this.secrets.open(row.token_sealed, sealContext(row.token_hash))}`;
    } catch {
      return null;
    }
  }

  async revoke(caller: Caller, id: number): Promise<void> {
    const row = await this.invitations.find(id);
    await this.access.project(caller, row?.project_id ?? 0, 'project.members').catch((err) => {
      throw err instanceof NotFoundError ? NotFoundError.of('Invitation', id) : err;
    });
    await this.invitations.delete(id);
  }

  /** What the invitation page shows before the invitee chooses a password (public: the link is the credential). */
  async preview(token: string): Promise<InvitationPreviewOut> {
    const row = await this.invitations.findByHash(hashToken(token));
    if (!row || row.accepted_at || row.expires_at <= new Date().toISOString()) throw new NotFoundError(GONE);
    return { email: row.email, role: row.role, project_name: row.project_name, expires_at: row.expires_at };
  }

  async accept(token: string, input: InvitationAccept, ip: string): Promise<InvitationAcceptedOut> {
    const row = await this.invitations.findByHash(hashToken(token));
    const now = new Date().toISOString();
    if (!row || !(await this.invitations.claim(row.id, now))) throw new NotFoundError(GONE);
    let user: UserOut;
    try {
      user = await this.accounts.register({ email: row.email, password: input.password, display_name: input.display_name }, ip);
    } catch (err) {
      // The account could not be made (the address registered meanwhile, too many attempts): the link stays usable.
      await this.invitations.unclaim(row.id);
      throw err;
    }
    await this.invitations.join(row, user.id, now);
    this.access.forget(row.project_id);
    const session = await this.accounts.login(row.email, input.password, ip);
    return { ...session, project_id: row.project_id };
  }
}
