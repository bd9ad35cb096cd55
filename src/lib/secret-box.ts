import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Secrets stored in the database (a project storage's S3 credentials), encrypted at rest with the operator's
 * SECRETS_KEY: AES-256-GCM, a fresh 96-bit nonce per value, and `context` (what the value is for) bound in as
 * associated data, so a ciphertext copied into another column does not decrypt. The text is
 * `v1.{nonce}.{tag}.{ciphertext}` (base64url), versioned so that another scheme can be added beside it later.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a SecretBox key is 32 bytes');
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, nonce, cipher.getAuthTag(), body].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** The plaintext; throws when the text was not sealed with this key and context (or was altered). */
  open(sealed: string, context: string): string {
    const [version, nonce, tag, body] = sealed.split('.');
    if (version !== VERSION || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
