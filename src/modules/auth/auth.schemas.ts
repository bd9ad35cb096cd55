import { Type, type Static } from 'typebox';
import { StringEnum } from '../../http/schemas.js';
import type { UserRow, TokenRow } from './auth.repository.js';

export const RegisterBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Type.String({ minLength: 8, maxLength: 256 }),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
  },
  { additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const LoginBody = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 256 }),
});
export type LoginBody = Static<typeof LoginBody>;

export const UserOut = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    display_name: Type.String(),
    is_admin: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
  },
);
export type UserOut = Static<typeof UserOut>;

export const LoginOut = Type.Object({
  token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_at: Type.String({ format: 'date-time' }),
  user: UserOut,
});

const TokenScopeSchema = StringEnum(['read-only', 'read-write'] as const, {
  description: '`read-only` tokens get 403 on every request but GET, HEAD and OPTIONS (default `read-write`)',
});

export const TokenCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    scope: Type.Optional(TokenScopeSchema),
  },
  { additionalProperties: false },
);
export type TokenCreateBody = Static<typeof TokenCreateBody>;

export const TokenOut = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    scope: TokenScopeSchema,
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
);
export type TokenOut = Static<typeof TokenOut>;

export const TokenCreatedOut = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  token: Type.String({ description: 'The secret; shown only in this response.' }),
  scope: TokenScopeSchema,
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function toUserOut(row: UserRow): UserOut {
  return { id: row.id, email: row.email, display_name: row.display_name, is_admin: row.is_admin === 1, created_at: row.created_at };
}

export function toTokenOut(row: TokenRow): TokenOut {
  return { id: row.id, name: row.name, scope: row.scope, created_at: row.created_at, expires_at: row.expires_at, last_used_at: row.last_used_at };
}
