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
}

/** Where failures are counted: the database (login-failures.repository.ts), shared by every API process. */
export interface FailureLog {
  take(key: string, now: number, sinceMs: number, waitOf: (entry: { count: number; last: number } | undefined) => number): Promise<number>;
  get(key: string, sinceMs: number): Promise<{ count: number; last: number } | undefined>;
  add(key: string, now: number, sinceMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The policy README.md documents, scaled by AUTH_ATTEMPTS_PER_MINUTE (30: 6 free failures, slowed after 30). */
export function loginPolicy(attemptsPerMinute: number): LoginPolicy {
  const freeFailures = Math.max(1, Math.floor(attemptsPerMinute / 5));
  return { freeFailures, maxDelayMs: 60_000, accountCeiling: 5 * freeFailures, slowMs: 1_000, memoryMs: 15 * 60_000 };
}

/**
 * Failed logins, answered without ever locking the owner out (OWASP's authentication guidance):
 * - per (account, client address), a growing delay: after `freeFailures` failures in a row, that address must wait
 *   1 s, 2 s, 4 s… (at most `maxDelayMs`) after its last failure, or it is 429 with Retry-After and not checked.
 *   A stranger's failures therefore stop only the stranger, never the owner at another address; a success clears them.
 * - per account, over all addresses: past `accountCeiling` failures, every attempt waits `slowMs` before its password
 *   is checked, so guessing from many addresses is slowed while a correct password still gets in.
 * The counts live in the database, so every API process behind a load balancer throttles alike (pairs and accounts
 * are told apart by a prefix: an account key has no address).
 */
export class LoginThrottle {
  constructor(
    private readonly policy: LoginPolicy,
    private readonly failures: FailureLog,
    private readonly clock: LoginClock = systemClock,
  ) {}

  /**
   * Admits one attempt before its password is checked: 429 while the pair waits, the slow-down when the account is
   * over its ceiling. The attempt counts as a failure of its pair until `succeeded`, so parallel guesses from one
   * address cannot all slip through before the first of them fails.
   */
  async admit(account: string, address: string): Promise<void> {
    const pair = pairKey(account, address);
    const now = this.clock.now();
    const since = now - this.policy.memoryMs;
    const wait = await this.failures.take(pair, now, since, (entry) => this.waitMs(entry, now));
    if (wait > 0) {
      const retryAfter = Math.max(1, Math.ceil(wait / 1000));
      throw new TooManyRequestsError(`Too many failed logins for this account from your address; try again in ${retryAfter} s`, retryAfter);
    }
    if (((await this.failures.get(accountKey(account), since))?.count ?? 0) >= this.policy.accountCeiling) await this.clock.sleep(this.policy.slowMs);
  }

  async failed(account: string): Promise<void> {
    const now = this.clock.now();
    await this.failures.add(accountKey(account), now, now - this.policy.memoryMs);
  }

  /** A success clears its own address's failures only: the account's count still slows guessers elsewhere. */
  async succeeded(account: string, address: string): Promise<void> {
    await this.failures.delete(pairKey(account, address));
  }

  private waitMs(entry: { count: number; last: number } | undefined, now: number): number {
    if (!entry || entry.count < this.policy.freeFailures) return 0;
    return entry.last + Math.min(this.policy.maxDelayMs, 1000 * 2 ** (entry.count - this.policy.freeFailures)) - now;
  }
}

/** An address has no spaces, so these keys are unambiguous whatever the e-mail holds. */
function pairKey(account: string, address: string): string {
  return `${address} ${account}`;
}

function accountKey(account: string): string {
  return `* ${account}`;
}
