import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Who is writing or deleting a content-addressed blob right now, across every process that shares the store. Two
 * requests (on one process or two) that store the same bytes write the same key; the one that then fails may remove
 * the file only if no other request still writes it (the other one's row may commit a moment later), and a removal
 * must never run between another writer's write and its row. Rows cover committed writers; claims cover those in
 * flight. The claims live in a ledger every process shares (the database, src/modules/maintenance/
 * blob-claims.repository.ts), and the two sides meet as in Dekker's algorithm, each recording its claim before it
 * reads the other's:
 *
 * - a writer records `write` claims on its keys, then waits while another holder's `delete` claim on one of them is
 *   live (so a removal that began first ends before these bytes are written), then writes, records its row, and
 *   releases;
 * - a removal records `delete` claims, then removes only keys that no row refers to and no other holder's `write`
 *   claim covers.
 *
 * Whatever the interleaving, one of the two sees the other's claim: the writer waits or the removal keeps the file.
 * Claims expire (a crashed holder's stop counting then, and its leftovers go with the sweep's orphans).
 */
export type ClaimKind = 'write' | 'delete';

export interface ClaimLedger {
  /** Records the holder's claims; they are visible to every process when this resolves. */
  add(holder: string, kind: ClaimKind, keys: string[], expiresMs: number): Promise<void>;
  /** Which of `keys` holders other than `holder` claim with `kind`, counting only claims live at `nowMs`. */
  claimedByOthers(holder: string, kind: ClaimKind, keys: string[], nowMs: number): Promise<Set<string>>;
  /** Removes the holder's claims, and every claim expired before `expiredBeforeMs`. */
  remove(holder: string, expiredBeforeMs: number): Promise<void>;
}

export interface ClaimTimes {
  /** How long a write claim counts (a request or job that writes and records blobs must end within it). */
  writeMs: number;
  /** How long a delete claim counts: a writer waits at most this long behind a removal that crashed. */
  deleteMs: number;
  /** How often a writer looks again whether a removal it waits for has ended. */
  pollMs: number;
}

const TIMES: ClaimTimes = { writeMs: 6 * 3600_000, deleteMs: 120_000, pollMs: 20 };

export class BlobClaims {
  constructor(
    private readonly ledger: ClaimLedger,
    private readonly times: ClaimTimes = TIMES,
  ) {}

  /** A request's set of claims: hold keys before writing them, release all when its rows are committed (or not). */
  session(): BlobClaimSession {
    const holder = randomUUID();
    return {
      holder,
      hold: async (keys) => {
        await this.ledger.add(holder, 'write', keys, Date.now() + this.times.writeMs);
        while ((await this.ledger.claimedByOthers(holder, 'delete', keys, Date.now())).size > 0) await sleep(this.times.pollMs);
      },
      release: () => this.ledger.remove(holder, Date.now()),
    };
  }

  /**
   * Removes those of `keys` that no other holder (than `own`, the caller's session, if any) writes, unless `inUse`
   * (asked after the removal's claims are recorded) says a row still refers to their bytes.
   */
  async removeUnlessUsed(keys: string[], inUse: () => Promise<boolean>, remove: (key: string) => Promise<void>, own?: BlobClaimSession): Promise<void> {
    const holder = randomUUID();
    await this.ledger.add(holder, 'delete', keys, Date.now() + this.times.deleteMs);
    try {
      if (await inUse()) return;
      const writing = await this.ledger.claimedByOthers(own?.holder ?? holder, 'write', keys, Date.now());
      await Promise.all(keys.filter((key) => !writing.has(key)).map(remove));
    } finally {
      await this.ledger.remove(holder, Date.now());
    }
  }
}

export interface BlobClaimSession {
  readonly holder: string;
  /** Claims the keys for writing; resolves once no removal of any of them is under way. */
  hold(keys: string[]): Promise<void>;
  release(): Promise<void>;
}
