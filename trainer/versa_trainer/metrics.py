"""
The one implementation of Versa's evaluation metrics, used by every adapter and by Versa's own evaluation of ONNX
predictions (`python3 -m versa_trainer.evaluate`).

Detection follows pycocotools' COCOeval for bounding boxes with area range "all": IoU thresholds 0.50:0.05:0.95,
101-point interpolated precision, at most `max_dets` detections per image and class, greedy matching in score order
to the best-overlapping unmatched ground truth, classes without ground truth left out of the means.
Boxes are `[x, y, width, height]` in pixels.
"""
import numpy as np

IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


def box_iou(dets, gts):
    """IoU matrix [len(dets), len(gts)] of xywh boxes (pycocotools' bbIou without crowd regions)."""
    if len(dets) == 0 or len(gts) == 0:
        return np.zeros((len(dets), len(gts)))
    d = np.asarray(dets, dtype=np.float64)
    g = np.asarray(gts, dtype=np.float64)
    dx2, dy2 = d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]
    gx2, gy2 = g[:, 0] + g[:, 2], g[:, 1] + g[:, 3]
    w = np.minimum(dx2[:, None], gx2[None, :]) - np.maximum(d[:, 0][:, None], g[:, 0][None, :])
    h = np.minimum(dy2[:, None], gy2[None, :]) - np.maximum(d[:, 1][:, None], g[:, 1][None, :])
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    union = (d[:, 2] * d[:, 3])[:, None] + (g[:, 2] * g[:, 3])[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _match(det_boxes, gt_boxes, thresholds):
    """pycocotools evaluateImg for one image and class: detections already sorted by score. Returns [T, D] matched flags."""
    ious = box_iou(det_boxes, gt_boxes)
    matched = np.zeros((len(thresholds), len(det_boxes)), dtype=bool)
    for t_index, threshold in enumerate(thresholds):
        gt_taken = np.zeros(len(gt_boxes), dtype=bool)
        for d_index in range(len(det_boxes)):
            best = min(threshold, 1 - 1e-10)
            m = -1
            for g_index in range(len(gt_boxes)):
                if gt_taken[g_index]:
                    continue
                if ious[d_index, g_index] < best:
                    continue
                best = ious[d_index, g_index]
                m = g_index
            if m == -1:
                continue
            gt_taken[m] = True
            matched[t_index, d_index] = True
    return matched


def detection_metrics(ground_truth, predictions, class_names, max_dets=100):
    """
    ground_truth: {image_id: [(class_index, [x, y, w, h]), ...]} (every evaluated image, even without objects);
    predictions: {image_id: [(class_index, [x, y, w, h], score), ...]}.
    Returns {map50, map50_95, precision, recall, per_class: [...]}; per-class precision/recall are taken at IoU 0.5
    at the score threshold that maximises the class's F1 (as Ultralytics reports them).
    """
    thresholds = IOU_THRESHOLDS
    per_class = []
    for class_index, name in enumerate(class_names):
        scores_all, matched_all = [], []
        n_gt = 0
        for image_id, gts in ground_truth.items():
            g = [box for (c, box) in gts if c == class_index]
            dets = [(box, score) for (c, box, score) in predictions.get(image_id, []) if c == class_index]
            n_gt += len(g)
            if not dets:
                continue
            order = np.argsort([-s for (_, s) in dets], kind="mergesort")[:max_dets]
            det_boxes = [dets[i][0] for i in order]
            scores_all.append(np.array([dets[i][1] for i in order], dtype=np.float64))
            matched_all.append(_match(det_boxes, g, thresholds))
        entry = {"class_index": class_index, "name": name, "instances": n_gt}
        if n_gt == 0:
            entry.update({"ap50": None, "ap50_95": None, "precision": None, "recall": None})
            per_class.append(entry)
            continue
        if scores_all:
            scores = np.concatenate(scores_all)
            matched = np.concatenate(matched_all, axis=1)
            order = np.argsort(-scores, kind="mergesort")
            matched = matched[:, order]
            scores = scores[order]
        else:
            scores = np.zeros(0)
            matched = np.zeros((len(thresholds), 0), dtype=bool)
        aps = []
        for t_index in range(len(thresholds)):
            tps = np.cumsum(matched[t_index]).astype(np.float64)
            fps = np.cumsum(~matched[t_index]).astype(np.float64)
            recall = tps / n_gt
            precision = tps / (fps + tps + np.spacing(1))
            q = np.zeros(len(RECALL_THRESHOLDS))
            p = precision.tolist()
            for i in range(len(p) - 1, 0, -1):
                if p[i] > p[i - 1]:
                    p[i - 1] = p[i]
            indices = np.searchsorted(recall, RECALL_THRESHOLDS, side="left")
            for r_index, p_index in enumerate(indices):
                if p_index < len(p):
                    q[r_index] = p[p_index]
            aps.append(float(np.mean(q)))
            if t_index == 0:
                if len(tps):
                    f1 = 2 * precision * recall / (precision + recall + 1e-16)
                    best = int(np.argmax(f1))
                    entry["precision"] = float(precision[best])
                    entry["recall"] = float(recall[best])
                else:
                    entry["precision"] = 0.0
                    entry["recall"] = 0.0
        entry["ap50"] = aps[0]
        entry["ap50_95"] = float(np.mean(aps))
        per_class.append(entry)
    present = [c for c in per_class if c["ap50"] is not None]

    def mean(key):
        return float(np.mean([c[key] for c in present])) if present else 0.0

    return {
        "map50": mean("ap50"),
        "map50_95": mean("ap50_95"),
        "precision": mean("precision"),
        "recall": mean("recall"),
        "per_class": per_class,
    }


def classification_metrics(labels, scores, class_names):
    """labels: [n] true class indices; scores: [n, nc] (any monotone scores). Accuracy, top-5, confusion, per class."""
    labels = np.asarray(labels, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    nc = len(class_names)
    n = len(labels)
    if n == 0:
        return {"accuracy": 0.0, "top5": 0.0, "confusion": [[0] * nc for _ in range(nc)], "per_class": []}
    predicted = np.argmax(scores, axis=1)
    k = min(5, nc)
    top = np.argsort(-scores, axis=1, kind="mergesort")[:, :k]
    top5 = float(np.mean([labels[i] in top[i] for i in range(n)]))
    confusion = np.zeros((nc, nc), dtype=np.int64)
    for truth, guess in zip(labels, predicted):
        confusion[truth, guess] += 1
    per_class = []
    for c, name in enumerate(class_names):
        tp = confusion[c, c]
        support = confusion[c, :].sum()
        called = confusion[:, c].sum()
        precision = float(tp / called) if called else 0.0
        recall = float(tp / support) if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class.append({"class_index": c, "name": name, "instances": int(support), "precision": precision, "recall": recall, "f1": f1})
    return {
        "accuracy": float(np.mean(predicted == labels)),
        "top5": top5,
        "confusion": confusion.tolist(),
        "per_class": per_class,
    }


def f1_macro(labels, predicted, nc):
    labels = np.asarray(labels)
    predicted = np.asarray(predicted)
    scores = []
    for c in range(nc):
        tp = np.sum((predicted == c) & (labels == c))
        fp = np.sum((predicted == c) & (labels != c))
        fn = np.sum((predicted != c) & (labels == c))
        if tp + fp + fn == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else 0.0
