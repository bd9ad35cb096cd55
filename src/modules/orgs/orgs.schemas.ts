import { Type, type Static } from 'typebox';
import { ORG_ROLES } from '../../access/roles.js';
import { Id, StringEnum, Timestamp } from '../../http/schemas.js';

const OrgRoleSchema = StringEnum(ORG_ROLES, {
  description: 'owner: manages members (owners too) and the projects; admin: manages members and acts as admin in every project of the organization; member: belongs, with no project rights of its own',
});

export const OrgCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }) }, { additionalProperties: false });
export type OrgCreate = Static<typeof OrgCreate>;

export const OrgOut = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  created_at: Timestamp,
  role: Type.Union([OrgRoleSchema, Type.Null()], { description: 'Your role in it (instance admins who are not members: null)' }),
});
export type OrgOut = Static<typeof OrgOut>;

export const OrgMemberCreate = Type.Object(
  { email: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })), user_id: Type.Optional(Id), role: OrgRoleSchema },
  { additionalProperties: false, description: 'The user is named by exactly one of email and user_id' },
);
export type OrgMemberCreate = Static<typeof OrgMemberCreate>;

export const OrgMemberUpdate = Type.Object({ role: OrgRoleSchema }, { additionalProperties: false });
export type OrgMemberUpdate = Static<typeof OrgMemberUpdate>;

export const OrgMemberOut = Type.Object({
  user_id: Type.Integer(),
  email: Type.String(),
  display_name: Type.String(),
  role: OrgRoleSchema,
  created_at: Timestamp,
});
export type OrgMemberOut = Static<typeof OrgMemberOut>;

export const OrgMemberParams = Type.Object({ id: Id, user_id: Id });
