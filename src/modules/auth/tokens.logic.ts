import { createHash, randomBytes } from 'node:crypto';

/** A fresh bearer secret. Only its hash is stored. */
export function newTokenSecret(): string {
  return `vrs_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
