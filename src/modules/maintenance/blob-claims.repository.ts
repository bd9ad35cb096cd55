import type { Db } from '../../db/database.js';
import type { ClaimKind, ClaimLedger } from '../../storage/blob-claims.js';

/**
 * The claims on content-addressed blobs, in the database so that every process sees every other's (migration 0046;
 * src/storage/blob-claims.ts says how writers and deleters use them). Each call is its own statement, committed when
 * it returns: that order is what the protocol rests on.
 */
export class BlobClaimsRepository implements ClaimLedger {
  constructor(private readonly db: Db) {}

  async add(holder: string, kind: ClaimKind, keys: string[], expiresMs: number): Promise<void> {
    const unique = [...new Set(keys)];
    if (unique.length === 0) return;
    await this.db
      .insertInto('blob_claims')
      .values(unique.map((blob_key) => ({ blob_key, holder, kind, expires_ms: expiresMs })))
      .onConflict((oc) => oc.columns(['blob_key', 'holder']).doNothing())
      .execute();
  }

  async claimedByOthers(holder: string, kind: ClaimKind, keys: string[], nowMs: number): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('blob_claims')
      .select('blob_key')
      .where('blob_key', 'in', [...new Set(keys)])
      .where('kind', '=', kind)
      .where('holder', '!=', holder)
      .where('expires_ms', '>', nowMs)
      .execute();
    return new Set(rows.map((row) => row.blob_key));
  }

  async remove(holder: string, expiredBeforeMs: number): Promise<void> {
    await this.db.deleteFrom('blob_claims').where((eb) => eb.or([eb('holder', '=', holder), eb('expires_ms', '<', expiredBeforeMs)])).execute();
  }
}
