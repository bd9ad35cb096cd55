import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { InvitationsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { LoginOut } from '../auth/auth.schemas.js';
import { MEMBER_ROLES } from '../members/members.schemas.js';

export const InvitationCreate = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    role: StringEnum(MEMBER_ROLES, { description: 'The role the new account gets in the project' }),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 7, description: 'Default 7' })),
  },
  { additionalProperties: false },
);
export type InvitationCreate = Static<typeof InvitationCreate>;

const InvitationStatus = StringEnum(['pending', 'accepted', 'expired'] as const);

export const InvitationOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  email: Type.String(),
  role: StringEnum(MEMBER_ROLES),
  status: InvitationStatus,
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: Nullable(Timestamp),
});
export type InvitationOut = Static<typeof InvitationOut>;

/** A listed invitation: a pending one's link again, for the project's admins to copy. */
export const InvitationListedOut = Type.Object({
  ...InvitationOut.properties,
  url: Nullable(
    Type.String({
      description:
        'A pending invitation\'s link (relative to the instance), to copy again; null once used or expired, and where it cannot be ' +
        'shown again: the server has no SECRETS_KEY to keep it encrypted, or the invitation predates that (then its link was shown once)',
    }),
  ),
});
export type InvitationListedOut = Static<typeof InvitationListedOut>;

export const InvitationCreatedOut = Type.Object({
  ...InvitationOut.properties,
  token: Type.String({ description: 'The secret of the link (stored hashed, and encrypted with SECRETS_KEY where the server has one)' }),
  url: Type.String({ description: 'The page that accepts it, relative to the instance: share it with the invitee (no e-mail is sent)' }),
});
export type InvitationCreatedOut = Static<typeof InvitationCreatedOut>;

export const InvitationPreviewOut = Type.Object({
  email: Type.String(),
  role: StringEnum(MEMBER_ROLES),
  project_name: Type.String(),
  expires_at: Timestamp,
});
export type InvitationPreviewOut = Static<typeof InvitationPreviewOut>;

export const InvitationAccept = Type.Object(
  {
    password: Type.String({ minLength: 8, maxLength: 256 }),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
  },
  { additionalProperties: false },
);
export type InvitationAccept = Static<typeof InvitationAccept>;

export const InvitationAcceptedOut = Type.Object({ ...LoginOut.properties, project_id: Type.Integer() });
export type InvitationAcceptedOut = Static<typeof InvitationAcceptedOut>;

export const TokenParams = Type.Object({ token: Type.String({ minLength: 10, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) });
export const InvitationParams = Type.Object({ id: Id });

export type InvitationRow = Selectable<InvitationsTable>;

export function toInvitationOut(row: InvitationRow, now = new Date().toISOString()): InvitationOut {
  return {
    id: row.id,
    project_id: row.project_id,
    email: row.email,
    role: row.role,
    status: row.accepted_at ? 'accepted' : row.expires_at <= now ? 'expired' : 'pending',
    created_at: row.created_at,
    expires_at: row.expires_at,
    accepted_at: row.accepted_at,
  };
}
