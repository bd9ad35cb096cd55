import { createHash, timingSafeEqual } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Metrics } from '../../lib/metrics.js';
import type { ProjectsService } from '../projects/projects.service.js';

export interface ReadinessProbe {
  name: string;
  check(): Promise<void>;
}

export class PlatformService {
  constructor(
    readonly version: string,
    private readonly projects: ProjectsService,
    private readonly probes: readonly ReadinessProbe[],
    readonly metrics: Metrics,
    private readonly metricsToken: string | null,
  ) {}

  /** Whether `secret` is the scrapers' METRICS_TOKEN, compared in constant time (digests: equal lengths whatever is sent). */
  isMetricsToken(secret: string): boolean {
    return this.metricsToken !== null && timingSafeEqual(digest(secret), digest(this.metricsToken));
  }

  async readiness() {
    const checks: Record<string, string> = {};
    let ready = true;
    await Promise.all(
      this.probes.map(async (probe) => {
        try {
          await withTimeout(probe.check(), 2000);
          checks[probe.name] = 'ok';
        } catch (err) {
          ready = false;
          checks[probe.name] = `failed: ${err instanceof Error ? err.message : String(err)}`;
        }
      }),
    );
    return { status: ready ? ('ready' as const) : ('unavailable' as const), checks };
  }

  stats(caller: Caller) {
    return this.projects.stats(caller);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
