import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.js';

export const LockOut = Type.Object({
  image_id: Type.Integer(),
  user_id: Type.Integer(),
  email: Type.String({ description: 'The holder' }),
  display_name: Type.String(),
  acquired_at: Timestamp,
  expires_at: Timestamp,
});
export type LockOut = Static<typeof LockOut>;

export const LockOrNull = Nullable(LockOut);

export const LockReleaseQuery = Type.Object({
  force: Type.Optional(Type.Boolean({ default: false, description: "Break another user's lock (project admins)" })),
});
