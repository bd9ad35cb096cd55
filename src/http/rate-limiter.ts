import { TooManyRequestsError } from './errors.js';

/**
 * Fixed-window counters per key (an IP, an account). In memory, so each API process limits on its own; that bounds
 * guessing per process, which is what the limit is for.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly what: string,
  ) {}

  /** Counts one hit for `key`; throws 429 with Retry-After once the window's limit is used up. */
  hit(key: string, now = Date.now()): void {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size > 50_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count++;
    if (window.count > this.limit) this.refuse(window.start, now);
  }

  /** Throws 429 when `key` has used up its window, without counting a hit. */
  check(key: string, now = Date.now()): void {
    const window = this.windows.get(key);
    if (window && now - window.start < this.windowMs && window.count >= this.limit) this.refuse(window.start, now);
  }

  /** Forgets a key (a successful login clears its account's failures). */
  reset(key: string): void {
    this.windows.delete(key);
  }

  private refuse(windowStart: number, now: number): never {
    const retryAfter = Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000));
    throw new TooManyRequestsError(`Too many ${this.what}; try again in ${retryAfter} s`, retryAfter);
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}

/**
 * Failed logins per account, answered with a growing delay rather than a lockout: after `freeFailures` failures in a
 * row, each further attempt must wait 1 s, 2 s, 4 s… (at most `maxDelayMs`) after the previous failure, or it is 429
 * with Retry-After and not checked at all. Guessing slows to one try per `maxDelayMs`, while the real user, who waits
 * that long at most, always gets in; a success clears the account's failures. In memory, like RateLimiter.
 */
export class LoginBackoff {
  private readonly failures = new Map<string, { count: number; last: number }>();

  constructor(
    private readonly freeFailures: number,
    private readonly maxDelayMs = 60_000,
    /** Failures older than this are forgotten. */
    private readonly memoryMs = 15 * 60_000,
  ) {}

  /** Throws 429 while the account's delay after its last failure runs. */
  check(key: string, now = Date.now()): void {
    const wait = this.waitMs(key, now);
    if (wait > 0) {
      const retryAfter = Math.max(1, Math.ceil(wait / 1000));
      throw new TooManyRequestsError(`Too many failed logins for this account; try again in ${retryAfter} s`, retryAfter);
    }
  }

  failed(key: string, now = Date.now()): void {
    const entry = this.failures.get(key);
    if (!entry || now - entry.last > this.memoryMs) {
      if (this.failures.size > 50_000) this.sweep(now);
      this.failures.set(key, { count: 1, last: now });
    } else {
      entry.count++;
      entry.last = now;
    }
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  private waitMs(key: string, now: number): number {
    const entry = this.failures.get(key);
    if (!entry || entry.count < this.freeFailures || now - entry.last > this.memoryMs) return 0;
    const delay = Math.min(this.maxDelayMs, 1000 * 2 ** (entry.count - this.freeFailures));
    return entry.last + delay - now;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.failures) if (now - entry.last > this.memoryMs) this.failures.delete(key);
  }
}
