/**
 * Model-assisted label checks in the confident-learning sense (Northcutt et al., 2021): a registered detector's
 * predictions are matched to the labels of each image (IoU ≥ match_iou), and each class gets its own confidence
 * threshold, the mean confidence of its predictions that agree with a label of the class (never below
 * min_confidence). Then confident predictions with no label are likely missing boxes, labels no prediction of any
 * class supports are likely spurious, and labels confidently predicted as another class are likely mislabelled.
 * Each finding is scored, worst first. They run only when asked for by id (a detector pass is not free).
 */
import type { CheckDefinition, Findings, ParamSpecs, ParamValues } from './check-catalog.logic.js';
import type { DatasetSnapshot } from './dataset-snapshot.logic.js';
import type { Prediction } from './model-predictions.adapter.js';
import { classKey } from '../classes/class-key.logic.js';

const PARAMS: ParamSpecs = {
  model_id: { type: 'integer', default: 0, min: 0, max: 2_147_483_647, description: "The detector to use; 0: the project's default detect model" },
  min_confidence: { type: 'number', default: 0.5, min: 0.01, max: 1, description: 'Lowest per-class confidence threshold' },
  match_iou: { type: 'number', default: 0.5, min: 0.05, max: 1, description: 'IoU from which a prediction and a label are the same object' },
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function boxIou(a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }): number {
  const ix = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union <= 0 ? 0 : inter / union;
}

interface Label {
  k: number;
  classId: number;
  box: { x: number; y: number; w: number; h: number };
}

/** Labels and predictions of every image, with prediction classes mapped to project class ids (null: not a class of it). */
function* imagesWithPredictions(s: DatasetSnapshot): Generator<{ imageIndex: number; labels: Label[]; predictions: (Prediction & { classId: number | null })[] }> {
  const byName = new Map([...s.classes].map(([id, name]) => [classKey(name), id]));
  const a = s.annotations;
  for (let i = 0; i < s.images.length; i++) {
    const labels: Label[] = [];
    for (let p = s.annotationStart[i]; p < s.annotationStart[i + 1]; p++) {
      const k = s.order[p];
      if (a.spatial(k)) labels.push({ k, classId: a.classId[k], box: { x: a.x[k], y: a.y[k], w: a.w[k], h: a.h[k] } });
    }
    const predictions = (s.predictions?.byImage[i] ?? []).map((p) => ({ ...p, classId: byName.get(classKey(p.className)) ?? null }));
    yield { imageIndex: i, labels, predictions };
  }
}

/** Per-class thresholds: mean confidence of predictions agreeing with a label of their class, at least `floor`. */
function thresholds(s: DatasetSnapshot, p: ParamValues): Map<number, number> {
  const sums = new Map<number, { sum: number; n: number }>();
  for (const { labels, predictions } of imagesWithPredictions(s)) {
    for (const pred of predictions) {
      if (pred.classId === null) continue;
      if (!labels.some((l) => l.classId === pred.classId && boxIou(l.box, pred) >= p.match_iou)) continue;
      const entry = sums.get(pred.classId) ?? { sum: 0, n: 0 };
      entry.sum += pred.confidence;
      entry.n++;
      sums.set(pred.classId, entry);
    }
  }
  const out = new Map<number, number>();
  for (const id of s.classes.keys()) {
    const e = sums.get(id);
    out.set(id, Math.max(p.min_confidence, e ? e.sum / e.n : p.min_confidence));
  }
  return out;
}

function modelCheck(
  id: string,
  title: string,
  description: string,
  message: (n: number) => string,
  find: (s: DatasetSnapshot, p: ParamValues, t: Map<number, number>, findings: Findings) => void,
): CheckDefinition<DatasetSnapshot> {
  return {
    id,
    title,
    modality: 'image',
    severity: 'warning',
    requires: 'detector',
    description: `${description} Needs a registered detector (model_id, or the project's default detect model); runs only when requested by id.`,
    params: PARAMS,
    message,
    run(s, p, findings) {
      if (!s.predictions) return;
      find(s, p, thresholds(s, p), findings);
    },
  };
}

export const MODEL_CHECKS: CheckDefinition<DatasetSnapshot>[] = [
  modelCheck(
    'missing_labels',
    'Likely missing labels',
    'Confident predictions (above their class threshold) that no label of any class overlaps: an object nobody boxed. Score: the confidence.',
    (n) => `${plural(n, 'confident prediction')} without a label`,
    (s, p, t, findings) => {
      for (const { imageIndex, labels, predictions } of imagesWithPredictions(s)) {
        for (const pred of predictions) {
          if (pred.classId === null || pred.confidence < t.get(pred.classId)!) continue;
          if (labels.some((l) => boxIou(l.box, pred) >= p.match_iou)) continue;
          findings.add(
            { image_id: s.images[imageIndex].id },
            () => `${s.className(pred.classId!)} predicted at ${Math.round(pred.x)},${Math.round(pred.y)} ${Math.round(pred.w)}×${Math.round(pred.h)} (confidence ${pred.confidence.toFixed(2)}) has no label`,
            pred.confidence,
          );
        }
      }
    },
  ),
  modelCheck(
    'unsupported_labels',
    'Labels no prediction supports',
    'Labels that no prediction of any class overlaps: a box around nothing, or in the wrong place. Score: 1 − the best IoU with a prediction of its class.',
    (n) => `${plural(n, 'label')} no prediction supports`,
    (s, p, _t, findings) => {
      for (const { imageIndex, labels, predictions } of imagesWithPredictions(s)) {
        for (const label of labels) {
          if (predictions.some((pred) => boxIou(label.box, pred) >= p.match_iou)) continue;
          const best = Math.max(0, ...predictions.filter((pred) => pred.classId === label.classId).map((pred) => boxIou(label.box, pred)));
          findings.add(
            { image_id: s.images[imageIndex].id, annotation_id: s.annotations.id[label.k] },
            () => `${s.className(label.classId)} label: no prediction overlaps it (best IoU ${best.toFixed(2)})`,
            1 - best,
          );
        }
      }
    },
  ),
  modelCheck(
    'class_disagreements',
    'Model and label disagree on the class',
    'Labels overlapped by a confident prediction of another class and by none of their own: probably mislabelled. Score: the other class\'s confidence.',
    (n) => `${plural(n, 'label')} the model confidently calls another class`,
    (s, p, t, findings) => {
      for (const { imageIndex, labels, predictions } of imagesWithPredictions(s)) {
        for (const label of labels) {
          const overlapping = predictions.filter((pred) => pred.classId !== null && boxIou(label.box, pred) >= p.match_iou);
          if (overlapping.some((pred) => pred.classId === label.classId)) continue;
          const other = overlapping.filter((pred) => pred.confidence >= t.get(pred.classId!)!).sort((x, y) => y.confidence - x.confidence)[0];
          if (!other) continue;
          findings.add(
            { image_id: s.images[imageIndex].id, annotation_id: s.annotations.id[label.k] },
            () => `Labelled ${s.className(label.classId)}, predicted ${s.className(other.classId!)} (confidence ${other.confidence.toFixed(2)})`,
            other.confidence,
          );
        }
      }
    },
  ),
];
