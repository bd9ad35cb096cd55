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
