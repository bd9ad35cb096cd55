import { setTimeout as sleep } from 'node:timers/promises';
import { TooManyRequestsError } from '../../http/errors.js';

/** The throttle's time; tests pass a fake one so that waits cost nothing. */
export interface LoginClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: LoginClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

export interface LoginPolicy {
  /** Failures in a row one address may make for one account before each further try must wait. */
  readonly freeFailures: number;
  /** The longest such wait. */
  readonly maxDelayMs: number;
  /** Failures of an account from all addresses after which every attempt on it is slowed down (never refused). */
  readonly accountCeiling: number;
  /** That slow-down, taken before the password is checked. */
  readonly slowMs: number;
  /** Failures are forgotten this long after the key's last one. */
  readonly memoryMs: number;
  /** The most keys remembered per log; the longest-quiet ones are forgotten first. */
  readonly maxEntries: number;
}

/** The policy README.md documents, scaled by AUTH_ATTEMPTS_PER_MINUTE (30: 6 free failures, slowed after 30). */
export function loginPolicy(attemptsPerMinute: number): LoginPolicy {
  const freeFailures = Math.max(1, Math.floor(attemptsPerMinute / 5));
  return { freeFailures, maxDelayMs: 60_000, accountCeiling: 5 * freeFailures, slowMs: 1_000, memoryMs: 15 * 60_000, maxEntries: 100_000 };
}

/**
 * Failed logins, answered without ever locking the owner out (OWASP's authentication guidance):
 * - per (account, client address), a growing delay: after `freeFailures` failures in a row, that address must wait
 *   1 s, 2 s, 4 s… (at most `maxDelayMs`) after its last failure, or it is 429 with Retry-After and not checked.
 *   A stranger's failures therefore stop only the stranger, never the owner at another address; a success clears them.
 * - per account, over all addresses: past `accountCeiling` failures, every attempt waits `slowMs` before its password
 *   is checked, so guessing from many addresses is slowed while a correct password still gets in.
 * In memory, like the per-address RateLimiter: each API process throttles on its own.
 */
export class LoginThrottle {
  private readonly pairs: FailureLog;
  private readonly accounts: FailureLog;

  constructor(
    private readonly policy: LoginPolicy,
    private readonly clock: LoginClock = systemClock,
  ) {
    this.pairs = new FailureLog(policy.memoryMs, policy.maxEntries);
    this.accounts = new FailureLog(policy.memoryMs, policy.maxEntries);
  }

  /**
   * Admits one attempt before its password is checked: 429 while the pair waits, the slow-down when the account is
   * over its ceiling. The attempt counts as a failure of its pair until `succeeded`, so parallel guesses from one
   * address cannot all slip through before the first of them fails.
   */
  async admit(account: string, address: string): Promise<void> {
    const pair = pairKey(account, address);
    const now = this.clock.now();
    const wait = this.pairWaitMs(pair, now);
    if (wait > 0) {
      const retryAfter = Math.max(1, Math.ceil(wait / 1000));
      throw new TooManyRequestsError(`Too many failed logins for this account from your address; try again in ${retryAfter} s`, retryAfter);
    }
    this.pairs.add(pair, now);
    if ((this.accounts.get(account, now)?.count ?? 0) >= this.policy.accountCeiling) await this.clock.sleep(this.policy.slowMs);
  }

  failed(account: string): void {
    this.accounts.add(account, this.clock.now());
  }

  /** A success clears its own address's failures only: the account's count still slows guessers elsewhere. */
  succeeded(account: string, address: string): void {
    this.pairs.delete(pairKey(account, address));
  }

  private pairWaitMs(pair: string, now: number): number {
    const entry = this.pairs.get(pair, now);
    if (!entry || entry.count < this.policy.freeFailures) return 0;
    return entry.last + Math.min(this.policy.maxDelayMs, 1000 * 2 ** (entry.count - this.policy.freeFailures)) - now;
  }
}

/** An address has no spaces, so this key is unambiguous whatever the e-mail holds. */
function pairKey(account: string, address: string): string {
  return `${address} ${account}`;
}

/**
 * Failure counts per key in the order of their last failure (a Map keeps insertion order and each failure re-inserts
 * its key), so the stale and the longest-quiet keys are always at the front and are dropped from there.
 */
class FailureLog {
  private readonly entries = new Map<string, { count: number; last: number }>();

  constructor(
    private readonly memoryMs: number,
    private readonly maxEntries: number,
  ) {}

  get(key: string, now: number): { count: number; last: number } | undefined {
    const entry = this.entries.get(key);
    return entry && now - entry.last <= this.memoryMs ? entry : undefined;
  }

  add(key: string, now: number): void {
    const count = (this.get(key, now)?.count ?? 0) + 1;
    this.entries.delete(key);
    this.entries.set(key, { count, last: now });
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && now - entry.last <= this.memoryMs) break;
      this.entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
