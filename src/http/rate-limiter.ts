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
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one hit for `key`; throws 429 with Retry-After once the window's limit is used up. */
  hit(key: string, now = Date.now()): void {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      window = { start: now, count: 0 };
      // Re-inserted, so the map stays in order of window start and the stale windows are at its front.
      this.windows.delete(key);
      this.windows.set(key, window);
      this.sweep(now);
    }
    window.count++;
    if (window.count > this.limit) this.refuse(window.start, now);
  }

  private refuse(windowStart: number, now: number): never {
    const retryAfter = Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000));
    throw new TooManyRequestsError(`Too many ${this.what}; try again in ${retryAfter} s`, retryAfter);
  }

  /** Drops ended windows, and the oldest ones past `maxKeys`, so that many addresses cannot grow memory unbounded. */
  private sweep(now: number): void {
    for (const [key, window] of this.windows) {
      if (this.windows.size <= this.maxKeys && now - window.start < this.windowMs) break;
      this.windows.delete(key);
    }
  }
}
