/**
 * Which content-addressed blobs requests of this process are writing right now. Two requests that store the same
 * bytes write the same key; the one that then fails may remove the file only if no other request still holds it
 * (the other one's row may commit a moment later). Rows cover committed writers, claims cover those in flight.
 */
export class BlobClaims {
  private readonly counts = new Map<string, number>();

  /** Whether a request other than `own` (or any request, without `own`) holds the key. */
  anyHeld(key: string, own?: BlobClaimSession): boolean {
    return own ? own.heldByOthers(key) : (this.counts.get(key) ?? 0) > 0;
  }

  /** A request's set of claims: hold keys before writing them, release all when the request is over. */
  session(): BlobClaimSession {
    const held: string[] = [];
    return {
      hold: (keys) => {
        for (const key of keys) {
          this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
          held.push(key);
        }
      },
      heldByOthers: (key) => (this.counts.get(key) ?? 0) > held.filter((k) => k === key).length,
      release: () => {
        for (const key of held.splice(0)) {
          const count = (this.counts.get(key) ?? 1) - 1;
          if (count <= 0) this.counts.delete(key);
          else this.counts.set(key, count);
        }
      },
    };
  }
}

export interface BlobClaimSession {
  hold(keys: string[]): void;
  /** Whether another request also holds the key (this one's own holds are not counted). */
  heldByOthers(key: string): boolean;
  release(): void;
}
