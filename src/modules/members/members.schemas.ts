import { Type, type Static } from 'typebox';
import { PERMISSIONS, PROJECT_ROLES } from '../../access/roles.js';
import { Id, StringEnum, Timestamp } from '../../http/schemas.js';

export const RoleOut = Type.Object({
  name: StringEnum(PROJECT_ROLES),
  description: Type.String(),
  permissions: Type.Array(StringEnum(PERMISSIONS)),
});

/** Roles a member can be given; `owner` belongs to the project's creator alone. */
export const MEMBER_ROLES = ['admin', 'reviewer', 'annotator', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
const MemberRoleSchema = StringEnum(MEMBER_ROLES, { description: 'A role from GET /api/identity/roles other than owner' });

export const MemberCreate = Type.Object(
  {
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
    user_id: Type.Optional(Id),
    role: MemberRoleSchema,
  },
  { additionalProperties: false, description: 'The user is named by exactly one of email and user_id' },
);
export type MemberCreate = Static<typeof MemberCreate>;

export const MemberUpdate = Type.Object({ role: MemberRoleSchema }, { additionalProperties: false });
export type MemberUpdate = Static<typeof MemberUpdate>;

export const MemberOut = Type.Object({
  user_id: Type.Integer(),
  email: Type.String(),
  display_name: Type.String(),
  role: StringEnum(PROJECT_ROLES),
  created_at: Timestamp,
  source: Type.Optional(
    StringEnum(['owner', 'member', 'organization'] as const, {
      description: 'Where the access comes from: the project\'s creator, a membership, or the role of an owner/admin of the project\'s organization (listed with `org_id`; removed by moving the project out of it)',
    }),
  ),
  org_id: Type.Optional(Type.Integer()),
});
export type MemberOut = Static<typeof MemberOut>;

export const MemberParams = Type.Object({ id: Id, user_id: Id });

export const MyAccessOut = Type.Object({
  role: StringEnum(PROJECT_ROLES, { description: 'The strongest of membership, organization role and ownership (instance admins: owner)' }),
  permissions: Type.Array(StringEnum(PERMISSIONS)),
});
export type MyAccessOut = Static<typeof MyAccessOut>;
