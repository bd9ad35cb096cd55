import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlobClaims, type ClaimKind, type ClaimLedger } from '../../src/storage/blob-claims.js';

/** The ledger in memory (the server's is the database: test/storage/blob-claims-processes.test.ts). */
class MemoryLedger implements ClaimLedger {
  readonly rows: { key: string; holder: string; kind: ClaimKind; expiresMs: number }[] = [];
  async add(holder: string, kind: ClaimKind, keys: string[], expiresMs: number) {
    for (const key of keys) if (!this.rows.some((r) => r.key === key && r.holder === holder)) this.rows.push({ key, holder, kind, expiresMs });
  }
  async claimedByOthers(holder: string, kind: ClaimKind, keys: string[], nowMs: number) {
    return new Set(this.rows.filter((r) => keys.includes(r.key) && r.kind === kind && r.holder !== holder && r.expiresMs > nowMs).map((r) => r.key));
  }
  async remove(holder: string, expiredBeforeMs: number) {
    for (let i = this.rows.length - 1; i >= 0; i--) if (this.rows[i].holder === holder || this.rows[i].expiresMs < expiredBeforeMs) this.rows.splice(i, 1);
  }
}

describe('BlobClaims', () => {
  it('a request may remove a content-addressed file only when no other request is writing it', async () => {
    const ledger = new MemoryLedger();
    const claims = new BlobClaims(ledger);
    const winner = claims.session();
    const loser = claims.session();
    const key = 'projects/1/images/abc.jpg';
    await winner.hold([key]);
    await loser.hold([key, key]);
    const removed: string[] = [];
    const remove = async (k: string) => void removed.push(k);
    await claims.removeUnlessUsed([key], async () => false, remove, loser);
    assert.deepEqual(removed, [], 'the winner still holds it: the loser keeps the file');
    await winner.release();
    await claims.removeUnlessUsed([key], async () => true, remove, loser);
    assert.deepEqual(removed, [], 'a row refers to the bytes');
    await claims.removeUnlessUsed([key], async () => false, remove);
    assert.deepEqual(removed, [], 'a delete outside uploads waits for the loser too');
    await claims.removeUnlessUsed([key], async () => false, remove, loser);
    assert.deepEqual(removed, [key], 'its own claim does not keep the loser from removing what it wrote');
    await loser.release();
    assert.deepEqual(ledger.rows, [], 'released, and the removals took their claims with them');
  });
});
