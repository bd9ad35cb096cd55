/**
 * Greedy k-centre (Sener & Savarese 2018, "core-set"): each pick is the candidate farthest from every centre so
 * far (the labelled images, then the picks), so the picks cover the candidates' spread instead of piling up where
 * images look alike. Without labelled centres the first pick is the candidate farthest from the candidates' mean.
 * With `weights` each pick maximises weight × distance instead (uncertainty-weighted core-set: unsure images first,
 * but not two alike; without labelled images the most unsure comes first). The order of picks does not depend on
 * how many are asked for, so pages agree.
 * O(picks × candidates × dimensions).
 */
export interface KCentrePick {
  index: number;
  /** Distance to the nearest centre when it was picked. */
  distance: number;
}

export function kCentreGreedy(candidates: readonly Float32Array[], centres: readonly Float32Array[], picks: number, weights?: readonly number[]): KCentrePick[] {
  const nearest = new Float64Array(candidates.length).fill(Infinity);
  // Weighted and without labelled images, the first pick is simply the heaviest (nothing to be far from yet).
  const seeds = centres.length > 0 ? centres : candidates.length > 0 && !weights ? [mean(candidates)] : [];
  for (const centre of seeds) for (let i = 0; i < candidates.length; i++) nearest[i] = Math.min(nearest[i], distance(candidates[i], centre));
  const out: KCentrePick[] = [];
  const taken = new Uint8Array(candidates.length);
  const gain = (i: number) => (nearest[i] === Infinity ? 1 : nearest[i]) * (weights?.[i] ?? 1);
  while (out.length < Math.min(picks, candidates.length)) {
    let best = -1;
    for (let i = 0; i < candidates.length; i++) if (!taken[i] && (best < 0 || gain(i) > gain(best))) best = i;
    out.push({ index: best, distance: nearest[best] });
    taken[best] = 1;
    for (let i = 0; i < candidates.length; i++) if (!taken[i]) nearest[i] = Math.min(nearest[i], distance(candidates[i], candidates[best]));
  }
  return out;
}

function distance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) sum += ((a[i] ?? 0) - (b[i] ?? 0)) ** 2;
  return Math.sqrt(sum);
}

function mean(vectors: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(Math.max(...vectors.map((v) => v.length)));
  for (const v of vectors) for (let i = 0; i < v.length; i++) out[i] += v[i] / vectors.length;
  return out;
}
