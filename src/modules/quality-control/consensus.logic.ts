/**
 * Agreement among N annotators on one image and the consensus merge of their shapes (issue 29). Pure.
 *
 * Agreement: every pair of annotators is scored with scoreShapes (one as the reference; F1 and mean IoU are symmetric)
 * and the pairs' figures are averaged: overall F1, mean IoU, and F1 per class (averaged over the pairs where either
 * side has the class).
 *
 * Consensus merge:
 * 1. Objects are grouped across annotators. Annotators are taken by weight (their ground-truth score), heaviest first;
 *    the first one's objects open groups; each next annotator's objects are matched one-to-one (Hungarian, IoU ≥
 *    minIou, class-agnostic) to the groups' first members, and unmatched ones open groups. An annotator gives at most
 *    one object to a group.
 * 2. A group is kept when the weight of its members is more than half of all annotators' weight (a weighted
 *    majority says the object is there).
 * 3. Its class is the weighted majority of its members' classes; a tie goes to the class of the heaviest member among
 *    the tied ones, then to the lowest class id.
 * 4. Its geometry: boxes (unrotated) are the weighted mean of their corners; any other type (polygons, rotated boxes,
 *    ellipses, masks, …) is the weighted medoid: the member with the largest weighted sum of IoU with the others
 *    (polygons with different vertices have no meaningful vertex average). Only members of the group's most common
 *    type (by weight) take part.
 */
import { assign, FORBIDDEN } from '../../lib/assignment.js';
import { DEFAULT_MIN_IOU, iouOf, scoreShapes, tallyF1, tallyShapes, type Shape } from './shape-scores.logic.js';

export interface AnnotatorShapes {
  /** Who drew them (any key: a user id). */
  annotator: number;
  shapes: readonly Shape[];
  /** Weight of this annotator's shapes (their ground-truth F1, say); defaults to 1. Weights ≤ 0 count as 0.01. */
  weight?: number;
}

export interface MergedShape extends Shape {
  /** The annotators whose objects made it, heaviest first. */
  annotators: number[];
  /** Share of all annotators' weight behind the object (0.5 < support ≤ 1). */
  support: number;
}

export interface ImageAgreement {
  annotators: number;
  /** Mean of the pairwise F1; 1 with fewer than two annotators. */
  f1: number;
  mean_iou: number | null;
  per_class: { class_id: number; f1: number }[];
}

const MIN_WEIGHT = 0.01;
const weightOf = (a: AnnotatorShapes) => Math.max(MIN_WEIGHT, a.weight ?? 1);

/** Pairwise agreement of the annotators' versions of one image; `onPair` hears each pair's F1 (versions by index). */
export function imageAgreement<V extends Pick<AnnotatorShapes, 'shapes'>>(
  versions: readonly V[],
  minIou = DEFAULT_MIN_IOU,
  onPair?: (i: number, j: number, f1: number) => void,
): ImageAgreement {
  if (versions.length < 2) return { annotators: versions.length, f1: 1, mean_iou: null, per_class: [] };
  let f1 = 0;
  let pairs = 0;
  let iouSum = 0;
  let matched = 0;
  const perClass = new Map<number, { sum: number; n: number }>();
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      const t = tallyShapes(versions[i].shapes, versions[j].shapes, minIou);
      const pairF1 = tallyF1(t);
      onPair?.(i, j, pairF1);
      f1 += pairF1;
      pairs++;
      iouSum += t.iouSum;
      matched += t.matched;
      for (let k = 0; k < t.classes.length; k++) {
        const e = perClass.get(t.classes[k]);
        if (e) {
          e.sum += tallyF1(t, k);
          e.n++;
        } else perClass.set(t.classes[k], { sum: tallyF1(t, k), n: 1 });
      }
    }
  }
  return {
    annotators: versions.length,
    f1: f1 / pairs,
    mean_iou: matched === 0 ? null : iouSum / matched,
    per_class: [...perClass.entries()].sort((a, b) => a[0] - b[0]).map(([class_id, e]) => ({ class_id, f1: e.sum / e.n })),
  };
}

interface Member {
  annotator: number;
  weight: number;
  shape: Shape;
}

/** The consensus of the annotators' versions of one image. */
export function mergeConsensus(versions: readonly AnnotatorShapes[], minIou = DEFAULT_MIN_IOU): MergedShape[] {
  const ordered = [...versions].sort((a, b) => weightOf(b) - weightOf(a) || a.annotator - b.annotator);
  const total = ordered.reduce((s, v) => s + weightOf(v), 0);
  const groups: Member[][] = [];
  for (const version of ordered) {
    const w = weightOf(version);
    const shapes = version.shapes;
    const cost = groups.map((g) => shapes.map((s) => {
      const iou = iouOf(g[0].shape, s);
      return iou >= minIou && iou > 0 ? 1 - iou : FORBIDDEN;
    }));
    const taken = new Uint8Array(shapes.length);
    if (groups.length > 0 && shapes.length > 0) {
      for (const [g, s] of assign(cost)) {
        groups[g].push({ annotator: version.annotator, weight: w, shape: shapes[s] });
        taken[s] = 1;
      }
    }
    shapes.forEach((s, i) => {
      if (!taken[i]) groups.push([{ annotator: version.annotator, weight: w, shape: s }]);
    });
  }
  const out: MergedShape[] = [];
  for (const group of groups) {
    const weight = group.reduce((s, m) => s + m.weight, 0);
    if (weight * 2 <= total) continue;
    out.push({
      class_id: majorityClass(group),
      ...fuseGeometry(group),
      annotators: group.map((m) => m.annotator),
      support: weight / total,
    });
  }
  return out;
}

function majorityClass(group: readonly Member[]): number {
  const votes = new Map<number, number>();
  for (const m of group) votes.set(m.shape.class_id, (votes.get(m.shape.class_id) ?? 0) + m.weight);
  const best = Math.max(...votes.values());
  const tied = [...votes.entries()].filter(([, v]) => Math.abs(v - best) < 1e-12).map(([c]) => c);
  if (tied.length === 1) return tied[0];
  // Members are in weight order (heaviest first): the first member with a tied class decides.
  const heaviest = Math.max(...group.filter((m) => tied.includes(m.shape.class_id)).map((m) => m.weight));
  const candidates = group.filter((m) => m.weight === heaviest && tied.includes(m.shape.class_id)).map((m) => m.shape.class_id);
  return Math.min(...candidates);
}

function fuseGeometry(group: readonly Member[]): { annotation_type: string; geometry: object } {
  const typeWeight = new Map<string, number>();
  for (const m of group) typeWeight.set(m.shape.annotation_type, (typeWeight.get(m.shape.annotation_type) ?? 0) + m.weight);
  const type = [...typeWeight.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
  const members = group.filter((m) => m.shape.annotation_type === type);
  if (type === 'bbox' && members.every((m) => !(m.shape.geometry as { rotation?: number }).rotation)) {
    // Weighted means of the corners, as offsets from the first member's (identical boxes fuse exactly).
    const first = members[0].shape.geometry as { x: number; y: number; width: number; height: number };
    let x1 = 0, y1 = 0, x2 = 0, y2 = 0, w = 0;
    for (const m of members) {
      const g = m.shape.geometry as { x: number; y: number; width: number; height: number };
      x1 += (g.x - first.x) * m.weight;
      y1 += (g.y - first.y) * m.weight;
      x2 += (g.x + g.width - first.x - first.width) * m.weight;
      y2 += (g.y + g.height - first.y - first.height) * m.weight;
      w += m.weight;
    }
    const left = first.x + x1 / w;
    const top = first.y + y1 / w;
    const right = first.x + first.width + x2 / w;
    const bottom = first.y + first.height + y2 / w;
    return { annotation_type: 'bbox', geometry: { x: left, y: top, width: right - left, height: bottom - top } };
  }
  if (members.length === 1) return { annotation_type: type, geometry: members[0].shape.geometry };
  let best = members[0];
  let bestScore = -1;
  for (const m of members) {
    let score = 0;
    for (const o of members) if (o !== m) score += o.weight * iouOf(m.shape, o.shape);
    if (score > bestScore + 1e-12) {
      best = m;
      bestScore = score;
    }
  }
  return { annotation_type: type, geometry: best.shape.geometry };
}
