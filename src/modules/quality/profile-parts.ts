import { PROJECT_PART } from '../../db/migrations/0019-project-revision-parts.js';
import type { ProjectRevisionsRepository } from './project-revisions.repository.js';
import { emptyImagesPart, type ImagesPart } from './profile.repository.js';

/** Projects whose parts are kept. */
const CAPACITY = 32;
/** Runs of stale image parts computed one query set each; more runs are computed as one span. */
const MAX_RUNS = 8;

/** How a project's parts are computed. */
export interface PartSource<P> {
  /** The project part (classes, samples). */
  project(projectId: number): Promise<P>;
  /** The image parts `first`…`last`; a part without images may be left out. */
  images(projectId: number, first: number, last: number): Promise<Map<number, ImagesPart>>;
}

interface Kept<T> {
  revision: number;
  value: T;
}

/**
 * The parts a project's profile is summed from, each kept with the data revision of its part (migration 0019) and
 * handed out while that revision is the current one: after a change only the parts it touched are computed again
 * (a thousand images' worth each), not the project's million annotations. A part is kept only when its revision read
 * before computing it is the one read after (no commit touched the part meanwhile), so a kept part is exactly the
 * data of its revision.
 */
export class ProfileParts<P> {
  private readonly projects = new Map<number, { project?: Kept<P>; images: Map<number, Kept<ImagesPart>> }>();

  constructor(
    private readonly revisions: ProjectRevisionsRepository,
    private readonly source: PartSource<P>,
  ) {}

  async get(projectId: number): Promise<{ project: P; images: ImagesPart[] }> {
    const before = await this.revisions.parts(projectId);
    const kept = this.projects.get(projectId) ?? { images: new Map<number, Kept<ImagesPart>>() };
    this.projects.delete(projectId);
    const projectRevision = before.get(PROJECT_PART)!;
    const imageParts = [...before.keys()].filter((p) => p !== PROJECT_PART).sort((a, b) => a - b);
    const stale = imageParts.filter((p) => kept.images.get(p)?.revision !== before.get(p));
    const [project, computed] = await Promise.all([
      kept.project?.revision === projectRevision ? kept.project.value : this.source.project(projectId),
      this.computeImages(projectId, imageParts, stale),
    ]);

    const after = await this.revisions.parts(projectId);
    if (after.get(PROJECT_PART) === projectRevision) kept.project = { revision: projectRevision, value: project };
    const images: ImagesPart[] = [];
    const keptImages = new Map<number, Kept<ImagesPart>>();
    for (const p of imageParts) {
      const revision = before.get(p)!;
      const fresh = computed.has(p);
      const value = fresh ? computed.get(p)! : kept.images.get(p)!.value;
      images.push(value);
      if (!fresh || after.get(p) === revision) keptImages.set(p, { revision, value });
    }
    kept.images = keptImages;
    this.projects.set(projectId, kept);
    if (this.projects.size > CAPACITY) this.projects.delete(this.projects.keys().next().value!);
    return { project, images };
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
