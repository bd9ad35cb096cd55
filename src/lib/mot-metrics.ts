/**
 * Multi-object tracking metrics: CLEAR MOT (MOTA, MOTP, ID switches, false positives, misses; Bernardin & Stiefelhagen
 * 2008) and the identity measures (IDF1, IDP, IDR; Ristani et al. 2016), computed as py-motmetrics does with box IoU
 * as the distance. Pure: boxes in, figures out.
 */
import { assign, FORBIDDEN } from './assignment.js';

export interface MotBox {
  frame: number;
  /** The object's identity (ground truth) or the track's (hypothesis). */
  id: number | string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** When given, a ground-truth box matches only hypotheses of the same class. */
  classKey?: number | string;
}

export interface MotMetrics {
  /** 1 − (misses + false positives + ID switches) / ground-truth boxes; may be negative. */
  mota: number;
  /** Mean IoU of the matched pairs (py-motmetrics reports 1 − this as its distance MOTP). */
  motp: number;
  idf1: number;
  idp: number;
  idr: number;
  /** A ground-truth object matched to another hypothesis than at its previous match. */
  idSwitches: number;
  falsePositives: number;
  misses: number;
  matches: number;
  gtBoxes: number;
  hypBoxes: number;
  gtIds: number;
  hypIds: number;
}

export function boxIou(a: Pick<MotBox, 'x' | 'y' | 'width' | 'height'>, b: Pick<MotBox, 'x' | 'y' | 'width' | 'height'>): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.width * a.height + b.width * b.height - inter;
  return union <= 0 ? 0 : inter / union;
}

function byFrame(boxes: readonly MotBox[]): Map<number, MotBox[]> {
  const frames = new Map<number, MotBox[]>();
  for (const box of boxes) {
    const list = frames.get(box.frame);
    if (list) list.push(box);
    else frames.set(box.frame, [box]);
  }
  return frames;
}

const idKey = (id: number | string) => `${typeof id}:${id}`;

/** One frame's pairing: object i ↔ hypothesis `matched[i]` (−1: missed), and the ID switches it makes. */
function matchFrame(objects: readonly MotBox[], hypotheses: readonly MotBox[], ious: number[][], lastMatch: Map<string, string>, minIou: number): { matched: number[]; switches: number } {
  const matched = new Array<number>(objects.length).fill(-1);
  const hypMatched = new Array<boolean>(hypotheses.length).fill(false);
  // Continuity first: an object keeps the hypothesis it last matched when they still overlap enough.
  objects.forEach((o, i) => {
    const previous = lastMatch.get(idKey(o.id));
    if (previous === undefined) return;
    const j = hypotheses.findIndex((h, k) => !hypMatched[k] && idKey(h.id) === previous && ious[i][k] >= minIou);
    if (j !== -1) {
      matched[i] = j;
      hypMatched[j] = true;
    }
  });
  const freeObjects = objects.map((_, i) => i).filter((i) => matched[i] === -1);
  const freeHyps = hypotheses.map((_, j) => j).filter((j) => !hypMatched[j]);
  const cost = freeObjects.map((i) => freeHyps.map((j) => (ious[i][j] >= minIou ? 1 - ious[i][j] : FORBIDDEN)));
  let switches = 0;
  for (const [r, c] of assign(cost)) {
    const i = freeObjects[r];
    const j = freeHyps[c];
    const previous = lastMatch.get(idKey(objects[i].id));
    if (previous !== undefined && previous !== idKey(hypotheses[j].id)) switches++;
    matched[i] = j;
  }
  return { matched, switches };
}

/**
 * Identity true positives: ground-truth and hypothesis identities paired once, for the most frames matched. Only
 * identities that ever overlap take part (the rest stay unpaired either way), and every cost is ≤ 0, so the plain
 * rectangular assignment (no stand-ins) finds the optimum. `overlap`: gt identity → hypothesis identity → frames.
 */
function identityTruePositives(overlap: Map<number, Map<number, number>>): number {
  const rows = [...overlap.keys()];
  const cols = [...new Set(rows.flatMap((i) => [...overlap.get(i)!.keys()]))];
  const weights = rows.map((i) => cols.map((j) => -(overlap.get(i)!.get(j) ?? 0)));
  return -assign(weights).reduce((sum, [r, c]) => sum + weights[r][c], 0);
}

function countOverlap(overlap: Map<number, Map<number, number>>, gtId: number, hypId: number): void {
  const row = overlap.get(gtId) ?? new Map<number, number>();
  row.set(hypId, (row.get(hypId) ?? 0) + 1);
  overlap.set(gtId, row);
}

/** Numbers each distinct identity in order of appearance and counts its boxes. */
class Identities {
  private readonly index = new Map<string, number>();
  readonly counts: number[] = [];
  of(id: number | string): number {
    const key = idKey(id);
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.counts.length;
      this.index.set(key, i);
      this.counts.push(0);
    }
    this.counts[i]++;
    return i;
  }
}

/**
 * The metrics of `hyp` against `gt`: a pair matches on a frame where its IoU reaches `minIou` (0.5, MOTChallenge's
 * threshold) and the classes agree. Per frame, a ground-truth object keeps its previous hypothesis where that still
 * matches; the rest are paired by a Hungarian match (most pairs, then least 1 − IoU). IDF1 pairs whole identities
 * once, maximising the frames on which paired identities match.
 */
export function motMetrics(gt: readonly MotBox[], hyp: readonly MotBox[], minIou = 0.5): MotMetrics {
  const gtFrames = byFrame(gt);
  const hypFrames = byFrame(hyp);
  const frames = [...new Set([...gtFrames.keys(), ...hypFrames.keys()])].sort((a, b) => a - b);
  const lastMatch = new Map<string, string>();
  const gtIds = new Identities();
  const hypIds = new Identities();
  /** Frames on which ground-truth identity i and hypothesis identity j overlap enough. */
  const overlap = new Map<number, Map<number, number>>();
  let misses = 0, falsePositives = 0, switches = 0, matches = 0, iouSum = 0;
  for (const frame of frames) {
    const objects = gtFrames.get(frame) ?? [];
    const hypotheses = hypFrames.get(frame) ?? [];
    const oi = objects.map((o) => gtIds.of(o.id));
    const hi = hypotheses.map((h) => hypIds.of(h.id));
    const ious = objects.map((o) => hypotheses.map((h) => (o.classKey !== undefined && h.classKey !== undefined && o.classKey !== h.classKey ? 0 : boxIou(o, h))));
    ious.forEach((row, i) => row.forEach((iou, j) => iou >= minIou && countOverlap(overlap, oi[i], hi[j])));
    const frameMatch = matchFrame(objects, hypotheses, ious, lastMatch, minIou);
    switches += frameMatch.switches;
    frameMatch.matched.forEach((j, i) => {
      if (j === -1) return void misses++;
      matches++;
      iouSum += ious[i][j];
      lastMatch.set(idKey(objects[i].id), idKey(hypotheses[j].id));
    });
    falsePositives += hypotheses.length - frameMatch.matched.filter((j) => j !== -1).length;
  }
  const idtp = identityTruePositives(overlap);
  const gtBoxes = gt.length;
  const hypBoxes = hyp.length;
  return {
    mota: gtBoxes === 0 ? 0 : 1 - (misses + falsePositives + switches) / gtBoxes,
    motp: matches === 0 ? 0 : iouSum / matches,
    idf1: gtBoxes + hypBoxes === 0 ? 0 : (2 * idtp) / (gtBoxes + hypBoxes),
    idp: hypBoxes === 0 ? 0 : idtp / hypBoxes,
    idr: gtBoxes === 0 ? 0 : idtp / gtBoxes,
    idSwitches: switches,
    falsePositives,
    misses,
    matches,
    gtBoxes,
    hypBoxes,
    gtIds: gtIds.counts.length,
    hypIds: hypIds.counts.length,
  };
}
