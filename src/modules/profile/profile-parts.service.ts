import { PROJECT_PART } from '../../db/migrations/0019-project-revision-parts.js';
import type { ProfilePartsRepository } from './profile-parts.repository.js';
import type { ProjectRevisionsRepository } from './project-revisions.repository.js';
import { emptyImagesPart, type ImagesPart } from './profile.repository.js';

/** Projects whose parts are kept. */
const CAPACITY = 32;
/** The stored parts' layout: parts stored in another (older) one are computed again. 2: attributes and keypoints. */
const PARTS_FORMAT = 2;
/** Runs of stale image parts computed one query set each; more runs are computed as one span. */
const MAX_RUNS = 8;

/** How a project's parts are computed. */
export interface PartSource<P> {
  /** The project part (classes, samples). */
  project(projectId: number): Promise<P>;
  /** The image parts `first`…`last`; a part without images may be left out. */
  images(projectId: number, first: number, last: number): Promise<Map<number, ImagesPart>>;
}

interface Kept {
  revision: number;
  /** The project part's P, or an image part. */
  value: unknown;
}

/**
 * The parts a project's profile is summed from, each kept with the data revision of its part (migration 0019) and
 * handed out while that revision is the current one: after a change only the parts it touched are computed again
 * (a thousand images' worth each), not the project's million annotations. A part is kept only when its revision read
 * before computing it is the one read after (no commit touched the part meanwhile), so a kept part is exactly the
 * data of its revision. Parts are kept in memory for recently profiled projects and, when a store is given, in the
 * database, where a restarted server finds them.
 */
export class ProfileParts<P> {
  private readonly projects = new Map<number, Map<number, Kept>>();

  constructor(
    private readonly revisions: ProjectRevisionsRepository,
    private readonly source: PartSource<P>,
    private readonly store?: ProfilePartsRepository,
  ) {}

  async get(projectId: number): Promise<{ project: P; images: ImagesPart[] }> {
    const before = await this.revisions.parts(projectId);
    const kept = this.projects.get(projectId) ?? new Map<number, Kept>();
    this.projects.delete(projectId);
    const current = (p: number) => kept.get(p)?.revision === before.get(p);
    const missing = [...before.keys()].filter((p) => !current(p));
    if (this.store && missing.length > 0) {
      for (const row of await this.store.load(projectId, missing)) {
        const body = JSON.parse(row.body) as { format?: number; value: unknown };
        if (row.revision === before.get(row.part) && body.format === PARTS_FORMAT) kept.set(row.part, { revision: row.revision, value: body.value });
      }
    }
    const imageParts = [...before.keys()].filter((p) => p !== PROJECT_PART).sort((a, b) => a - b);
    const fresh: Map<number, unknown> = await this.computeImages(projectId, imageParts, imageParts.filter((p) => !current(p)));
    if (!current(PROJECT_PART)) fresh.set(PROJECT_PART, await this.source.project(projectId));

    // Nothing computed, nothing to check: the kept parts are the revisions read before.
    const after = fresh.size > 0 ? await this.revisions.parts(projectId) : before;
    const unchanged = [...fresh].filter(([p]) => after.get(p) === before.get(p));
    for (const [p] of fresh) kept.delete(p);
    for (const [p, value] of unchanged) kept.set(p, { revision: before.get(p)!, value });
    for (const p of kept.keys()) if (!before.has(p)) kept.delete(p);
    this.projects.set(projectId, kept);
    if (this.projects.size > CAPACITY) this.projects.delete(this.projects.keys().next().value!);
    // Only a cache: a failed write (the project deleted meanwhile) loses nothing.
    await this.store?.save(projectId, unchanged.map(([part, value]) => ({ part, revision: before.get(part)!, body: JSON.stringify({ format: PARTS_FORMAT, value }) }))).catch(() => undefined);
    const value = (p: number) => (fresh.has(p) ? fresh.get(p) : kept.get(p)!.value);
    return { project: value(PROJECT_PART) as P, images: imageParts.map((p) => value(p) as ImagesPart) };
  }

  /** The stale parts, a query set per span of partSpans. */
  private async computeImages(projectId: number, parts: number[], stale: number[]): Promise<Map<number, ImagesPart>> {
    const computed = new Map<number, ImagesPart>();
    for (const [first, last] of partSpans(parts, new Set(stale))) {
      for (const [p, part] of await this.source.images(projectId, first, last)) computed.set(p, part);
    }
    for (const p of stale) if (!computed.has(p)) computed.set(p, emptyImagesPart());
    return computed;
  }
}

/**
 * The spans [first, last] of parts to compute for the stale ones: runs of stale parts adjacent in the project's
 * sorted `parts` (whatever lies between two of them holds none of the project's images); more than MAX_RUNS runs
 * become one span from the first stale part to the last. Spans are not cut further: on PostgreSQL each span's joins
 * read the annotations once, so one span computes a whole project faster than several in parallel (1.05 s against
 * 1.5 s for four, 100k images).
 */
export function partSpans(parts: number[], stale: Set<number>): [number, number][] {
  // Runs as [first, last] indexes into `parts`.
  const runs: [number, number][] = [];
  for (let i = 0; i < parts.length; i++) {
    if (!stale.has(parts[i])) continue;
    if (i > 0 && stale.has(parts[i - 1])) runs[runs.length - 1][1] = i;
    else runs.push([i, i]);
  }
  const spans = runs.length > MAX_RUNS ? [[runs[0][0], runs[runs.length - 1][1]]] : runs;
  return spans.map(([first, last]) => [parts[first], parts[last]]);
}
