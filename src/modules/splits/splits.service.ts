import { randomInt } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ValidationError } from '../../http/errors.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import {
  assignGrouped, assignGroups, assignRandom, assignStratified, assignStratifiedUnits, nearDuplicateGroups, videoUnits, withVideosTogether, zeroCounts, type SplitCounts, type SplitPercentages,
} from './assign.logic.js';
import type { SplitName } from '../../lib/vocabulary.js';
import { dHash, hashHalves, NEAR_DUPLICATE_MAX_DISTANCE } from '../../imaging/perceptual-hash.js';
import type { SplitsRepository } from './splits.repository.js';
import type { SplitCountsOut, SplitQuery, SplitResultOut, SplitStrategy } from './splits.schemas.js';
import { forEachConcurrently } from '../../lib/batches.js';

/** Images hashed at once when the dHash cache is cold (each decode keeps a core busy). */
const HASH_CONCURRENCY = 2;

/** A seed for callers who give none: 32 bits, recorded in the answer so the split can be repeated. */
export const randomSeed = (): number => randomInt(0, 2 ** 32);

/** `{train, valid, test}` must add up to 100; the issue points at `loc`. */
export function checkPercentages(percentages: SplitPercentages, loc: (string | number)[]): void {
  const sum = percentages.train + percentages.valid + percentages.test;
  if (sum !== 100) throw ValidationError.at(loc, `train + valid + test must be 100, got ${sum}`);
}

export class SplitsService {
  constructor(
    private readonly splits: SplitsRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    /** A split touches every image: another user's lock on any of them refuses it. */
    private readonly locks: LockGuard,
  ) {}

  async counts(caller: Caller, projectId: number): Promise<SplitCountsOut> {
    await this.access.project(caller, projectId, 'project.read');
    const { unassigned, ...counts } = await this.splits.counts(projectId);
    return { counts, unassigned, total: counts.train + counts.valid + counts.test + unassigned };
  }

  /**
   * Reassigns every image of the project to a split. When another user holds a lock on any image of the project the
   * request is refused (409 naming the images and holders) and no split changes. The check comes right before the
   * batched write, which never holds one long transaction; a lock taken during the write does not stop it (a split
   * is image metadata the editor does not write, so no edit is lost).
   */
  async split(caller: Caller, projectId: number, query: SplitQuery): Promise<SplitResultOut> {
    const percentages = { train: query.train, valid: query.valid, test: query.test };
    checkPercentages(percentages, ['query']);
    await this.access.project(caller, projectId, 'versions.write');
    const strategy: SplitStrategy = query.strategy ?? 'random';
    const seed = query.seed ?? randomSeed();

    let assignment: Map<number, SplitName>;
    const result: SplitResultOut = { counts: zeroCounts(), seed, strategy };
    // A video's frames go to one split whatever the strategy (issue 26); a project without videos splits as before.
    const videoOf = await this.splits.videoOf(projectId);
    if (strategy === 'stratified') {
      const classes = await this.splits.imageClassNames(projectId);
      const ids = await this.splits.imageIds(projectId);
      const items = ids.map((id) => ({ id, labels: classes.get(id) ?? [] }));
      assignment = videoOf.size === 0 ? assignStratified(items, percentages, seed) : assignStratifiedUnits(items, videoOf, percentages, seed);
      result.per_class = perClass(classes, assignment);
    } else if (strategy === 'grouped') {
      const hashed = await this.hashes(projectId);
      const grouped = videoOf.size === 0
        ? assignGrouped(hashed, percentages, seed, NEAR_DUPLICATE_MAX_DISTANCE)
        : assignGroups(withVideosTogether(nearDuplicateGroups(hashed, NEAR_DUPLICATE_MAX_DISTANCE), videoOf), percentages, seed, 'split-grouped');
      assignment = grouped.assignment;
      result.groups = grouped.groups.filter((g) => g.length > 1).length;
    } else {
      const ids = await this.splits.imageIds(projectId);
      assignment = videoOf.size === 0 ? assignRandom(ids, percentages, seed) : assignGroups(videoUnits(ids, videoOf), percentages, seed, 'split-random').assignment;
    }
    await this.locks.assertNoneLocked(caller, { projectId });
    await this.splits.assign(projectId, assignment);
    for (const split of assignment.values()) result.counts[split]++;
    return result;
  }

  /** Every image's dHash, computing and caching the ones missing from the cache. */
  private async hashes(projectId: number): Promise<{ id: number; hash: [number, number] }[]> {
    const images = await this.splits.imagesWithHashes(projectId);
    const missing = images.filter((image) => image.dhash === null);
    const computed: { image_id: number; sha256: string; dhash: string }[] = [];
    await forEachConcurrently(missing, HASH_CONCURRENCY, async (image) => {
      const hash = await dHash(await this.blobs.get(image.blob_key));
      image.dhash = hash;
      computed.push({ image_id: image.id, sha256: image.sha256, dhash: hash });
    });
    if (computed.length > 0) await this.splits.cacheHashes(computed);
    return images.map((image) => ({ id: image.id, hash: hashHalves(image.dhash!) }));
  }
}

function perClass(classes: Map<number, string[]>, assignment: Map<number, SplitName>): Record<string, SplitCounts> {
  const out: Record<string, SplitCounts> = {};
  for (const [imageId, names] of classes) {
    const split = assignment.get(imageId);
    if (!split) continue;
    for (const name of names) (out[name] ??= zeroCounts())[split]++;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
