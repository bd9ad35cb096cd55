/**
 * Split assignment strategies. Pure and deterministic: the same items (in id order), percentages and seed always
 * give the same assignment, because every random choice draws from one seeded PRNG.
 */
import { popcount32 } from '../../imaging/perceptual-hash.js';
import { Random } from '../../lib/random.js';
import { SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';

export type SplitPercentages = Record<SplitName, number>;
export type SplitCounts = Record<SplitName, number>;

export const zeroCounts = (): SplitCounts => ({ train: 0, valid: 0, test: 0 });

/** Whole-item targets for `n` items: floors, then the remainder to the largest fractions (ties in split order). */
export function targetCounts(n: number, percentages: SplitPercentages): SplitCounts {
  const exact = SPLIT_NAMES.map((s) => (n * percentages[s]) / 100);
  const counts = exact.map(Math.floor);
  let left = n - counts.reduce((a, b) => a + b, 0);
  const order = [0, 1, 2].sort((a, b) => exact[b] - counts[b] - (exact[a] - counts[a]) || a - b);
  for (const i of order) {
    if (left === 0) break;
    if (percentages[SPLIT_NAMES[i]] === 0) continue;
    counts[i]++;
    left--;
  }
  return { train: counts[0], valid: counts[1], test: counts[2] };
}

/** Shuffle, then cut at the target counts. */
export function assignRandom(ids: readonly number[], percentages: SplitPercentages, seed: number): Map<number, SplitName> {
  const shuffled = Random.from('split-random', seed).shuffle([...ids]);
  const targets = targetCounts(shuffled.length, percentages);
  const out = new Map<number, SplitName>();
  let at = 0;
  for (const split of SPLIT_NAMES) {
    for (let i = 0; i < targets[split]; i++) out.set(shuffled[at++], split);
  }
  return out;
}

export interface LabelledItem {
  id: number;
  labels: readonly string[];
}

/**
 * Iterative stratification (Sechidis, Tsoumakas & Vlahavas 2011) over each image's set of classes: the rarest
 * label is placed first, each of its images going to the split that still wants most of that label, so every
 * class keeps its proportions as far as whole images allow. Unlabelled images fill what each split still wants.
 */
export function assignStratified(items: readonly LabelledItem[], percentages: SplitPercentages, seed: number): Map<number, SplitName> {
  const open = SPLIT_NAMES.filter((s) => percentages[s] > 0);
  const order = Random.from('split-stratified', seed).shuffle([...items]);
  const byLabel = new Map<string, LabelledItem[]>();
  for (const item of order) {
    for (const label of new Set(item.labels)) {
      const list = byLabel.get(label) ?? [];
      list.push(item);
      byLabel.set(label, list);
    }
  }
  const wantedTotal = new Map(open.map((s) => [s, (items.length * percentages[s]) / 100]));
  const wanted = new Map<string, Map<SplitName, number>>();
  for (const [label, list] of byLabel) wanted.set(label, new Map(open.map((s) => [s, (list.length * percentages[s]) / 100])));

  const out = new Map<number, SplitName>();
  const remaining = new Map([...byLabel].map(([label, list]) => [label, list.length]));
  const place = (item: LabelledItem, split: SplitName) => {
    out.set(item.id, split);
    wantedTotal.set(split, wantedTotal.get(split)! - 1);
    for (const label of new Set(item.labels)) {
      const want = wanted.get(label)!;
      want.set(split, want.get(split)! - 1);
      remaining.set(label, remaining.get(label)! - 1);
    }
  };
  const best = (score: (s: SplitName) => number) =>
    open.reduce((a, b) => (score(b) > score(a) + 1e-9 || (Math.abs(score(b) - score(a)) <= 1e-9 && wantedTotal.get(b)! > wantedTotal.get(a)! + 1e-9) ? b : a));

  for (;;) {
    let label: string | null = null;
    for (const [name, count] of remaining) {
      if (count > 0 && (label === null || count < remaining.get(label)! || (count === remaining.get(label)! && name < label))) label = name;
    }
    if (label === null) break;
    const want = wanted.get(label)!;
    for (const item of byLabel.get(label)!) {
      if (out.has(item.id)) continue;
      place(item, best((s) => want.get(s)!));
    }
  }
  for (const item of order) {
    if (!out.has(item.id)) place(item, best((s) => wantedTotal.get(s)!));
  }
  return out;
}

/** A 64-bit perceptual hash as two unsigned 32-bit halves (fast Hamming distance without BigInt). */
export interface HashedItem {
  id: number;
  hash: readonly [high: number, low: number];
}

/**
 * Near-duplicate groups (Hamming distance ≤ `threshold` between any two linked hashes, transitively, by union-find)
 * are placed whole: groups in seeded random order, largest first, each to the split furthest below its target.
 */
export function assignGrouped(
  items: readonly HashedItem[],
  percentages: SplitPercentages,
  seed: number,
  threshold: number,
): { assignment: Map<number, SplitName>; groups: number[][] } {
  return assignGroups(nearDuplicateGroups(items, threshold), percentages, seed, 'split-grouped');
}

/** Groups placed whole: in seeded random order, largest first, each to the split furthest below its target. */
export function assignGroups(groups: number[][], percentages: SplitPercentages, seed: number, stream = 'split-groups'): { assignment: Map<number, SplitName>; groups: number[][] } {
  const shuffled = Random.from(stream, seed).shuffle(groups);
  shuffled.sort((a, b) => b.length - a.length);
  const targets = targetCounts(shuffled.reduce((n, g) => n + g.length, 0), percentages);
  const open = SPLIT_NAMES.filter((s) => percentages[s] > 0);
  const placed = zeroCounts();
  const assignment = new Map<number, SplitName>();
  for (const group of shuffled) {
    const split = open.reduce((a, b) => (targets[b] - placed[b] > targets[a] - placed[a] ? b : a));
    placed[split] += group.length;
    for (const id of group) assignment.set(id, split);
  }
  return { assignment, groups: shuffled };
}

/**
 * Groups joined wherever a video's frames fall in more than one (issue 26: all frames of a video go to one split, so
 * no split sees frames of a video another split trains on); frames of a video in no group join as one. `videoOf`
 * names the video of each image that is a frame. Each group sorted, in order of its smallest id.
 */
export function withVideosTogether(groups: readonly number[][], videoOf: ReadonlyMap<number, number>): number[][] {
  const parent = groups.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const first = new Map<number, number>();
  groups.forEach((group, i) => {
    for (const id of group) {
      const video = videoOf.get(id);
      if (video === undefined) continue;
      const seen = first.get(video);
      if (seen === undefined) first.set(video, i);
      else {
        const [a, b] = [find(seen), find(i)];
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const merged = new Map<number, number[]>();
  groups.forEach((group, i) => {
    const root = find(i);
    merged.set(root, [...(merged.get(root) ?? []), ...group]);
  });
  return [...merged.values()].map((ids) => ids.sort((a, b) => a - b)).sort((a, b) => a[0] - b[0]);
}

/** Every image alone, except a video's frames, which go together. */
export function videoUnits(ids: readonly number[], videoOf: ReadonlyMap<number, number>): number[][] {
  return withVideosTogether(ids.map((id) => [id]), videoOf);
}

/**
 * Stratification over units (a video's frames are one unit labelled with every class its frames show, any other
 * image its own unit), each unit's split then given to all its images.
 */
export function assignStratifiedUnits(items: readonly LabelledItem[], videoOf: ReadonlyMap<number, number>, percentages: SplitPercentages, seed: number): Map<number, SplitName> {
  const labels = new Map(items.map((i) => [i.id, i.labels]));
  const units = videoUnits(items.map((i) => i.id), videoOf);
  const unitOf = assignStratified(units.map((unit) => ({ id: unit[0], labels: [...new Set(unit.flatMap((id) => labels.get(id) ?? []))] })), percentages, seed);
  const out = new Map<number, SplitName>();
  for (const unit of units) for (const id of unit) out.set(id, unitOf.get(unit[0])!);
  return out;
}

/**
 * A version's splits (issue 26): images with a split keep it, except that a video's frames all go to the split most
 * of its frames with one already have (ties: the earlier split); the others are dealt at random (seeded), a video's
 * frames as one unit. Without videos this is `assignRandom` over the images with no split.
 */
export function assignKeepingVideos(images: readonly { id: number; split: SplitName | null; video_id: number | null }[], percentages: SplitPercentages, seed: number): Map<number, SplitName> {
  const out = new Map<number, SplitName>();
  const votes = new Map<number, SplitCounts>();
  for (const image of images) {
    if (image.split === null) continue;
    out.set(image.id, image.split);
    if (image.video_id !== null) (votes.get(image.video_id) ?? votes.set(image.video_id, zeroCounts()).get(image.video_id)!)[image.split]++;
  }
  const videoSplit = new Map([...votes].map(([video, counts]) => [video, SPLIT_NAMES.reduce((a, b) => (counts[b] > counts[a] ? b : a))]));
  const open: number[] = [];
  const videoOf = new Map<number, number>();
  for (const image of images) {
    const fixed = image.video_id === null ? undefined : videoSplit.get(image.video_id);
    if (fixed) out.set(image.id, fixed);
    else if (image.split === null) {
      open.push(image.id);
      if (image.video_id !== null) videoOf.set(image.id, image.video_id);
    }
  }
  const dealt = videoOf.size === 0 ? assignRandom(open, percentages, seed) : assignGroups(videoUnits(open, videoOf), percentages, seed, 'split-random').assignment;
  for (const [id, split] of dealt) out.set(id, split);
  return out;
}

/** Groups of item ids (each sorted, in order of their smallest id) linked by hashes within `threshold` bits. */
export function nearDuplicateGroups(items: readonly HashedItem[], threshold: number): number[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let i = 0; i < items.length; i++) {
    const [hi, lo] = items[i].hash;
    for (let j = i + 1; j < items.length; j++) {
      const other = items[j].hash;
      if (popcount32(hi ^ other[0]) + popcount32(lo ^ other[1]) <= threshold) {
        const a = find(i);
        const b = find(j);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  }
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) {
    const root = find(i);
    const list = byRoot.get(root) ?? [];
    list.push(items[i].id);
    byRoot.set(root, list);
  }
  return [...byRoot.values()].map((ids) => ids.sort((a, b) => a - b)).sort((a, b) => a[0] - b[0]);
}
