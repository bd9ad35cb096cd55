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


def detection_metrics(ground_truth, predictions, class_names, max_dets=100, analysis=False):
    """
    ground_truth: {image_id: [(class_index, [x, y, w, h]), ...]} (every evaluated image, even without objects);
    predictions: {image_id: [(class_index, [x, y, w, h], score), ...]}.
    Returns {map50, map50_95, precision, recall, per_class: [...]}; per-class precision/recall are taken at IoU 0.5
    at the score threshold that maximises the class's F1 (as Ultralytics reports them). Each class also carries that
    threshold (`conf_threshold`, null without ground truth or a right detection), its `f1`, and `pr_curve`: the interpolated
    precision at the 101 recall points 0, 0.01, ..., 1 at IoU 0.5 (what its AP50 averages).
    With `analysis`, also `confusion` and `images` (see error_analysis) at those thresholds.
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
            entry.update({"ap50": None, "ap50_95": None, "precision": None, "recall": None, "f1": None, "conf_threshold": None, "pr_curve": None})
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
                entry["pr_curve"] = [round(float(v), 4) for v in q]
                if len(tps):
                    f1 = 2 * precision * recall / (precision + recall + 1e-16)
                    best = int(np.argmax(f1))
                    entry["precision"] = float(precision[best])
                    entry["recall"] = float(recall[best])
                    entry["f1"] = float(f1[best])
                    # No threshold when no detection is right: every cut-off scores F1 0, none is worth serving.
                    entry["conf_threshold"] = float(scores[best]) if f1[best] > 0 else None
                else:
                    entry["precision"] = 0.0
                    entry["recall"] = 0.0
                    entry["f1"] = 0.0
                    entry["conf_threshold"] = None
        entry["ap50"] = aps[0]
        entry["ap50_95"] = float(np.mean(aps))
        per_class.append(entry)
    present = [c for c in per_class if c["ap50"] is not None]

    def mean(key):
        return float(np.mean([c[key] for c in present])) if present else 0.0

    out = {
        "map50": mean("ap50"),
        "map50_95": mean("ap50_95"),
        "precision": mean("precision"),
        "recall": mean("recall"),
        "per_class": per_class,
    }
    if analysis:
        out.update(error_analysis(ground_truth, predictions, [c["conf_threshold"] for c in per_class]))
    return out


DEFAULT_CONF = 0.25


def error_analysis(ground_truth, predictions, thresholds, iou=0.5):
    """
    What the model gets wrong when each class keeps its detections at or above its threshold (DEFAULT_CONF for a
    class without one). Per image, in score order, a detection first takes the best-overlapping unmatched ground
    truth of its own class (IoU >= `iou`: right); those left take one of another class (a confusion); the rest are
    false positives, and unmatched ground truth false negatives.
    Returns {confusion: [nc + 1][nc + 1] (rows true class, columns predicted; index nc is background: a false
    positive is counted in row nc, a false negative in column nc), images: {image_id: {false_positives,
    false_negatives, confusions, predictions: [[class, x, y, w, h, score], ...] (the kept ones)}}}.
    """
    nc = len(thresholds)
    cut = [DEFAULT_CONF if t is None else t for t in thresholds]
    confusion = np.zeros((nc + 1, nc + 1), dtype=np.int64)
    images = {}
    for image_id, gts in ground_truth.items():
        kept = sorted((p for p in predictions.get(image_id, []) if p[2] >= cut[p[0]]), key=lambda p: -p[2])
        ious = box_iou([p[1] for p in kept], [g[1] for g in gts])
        gt_taken = [False] * len(gts)
        det_match = [-1] * len(kept)
        for same_class in (True, False):
            for d, det in enumerate(kept):
                if det_match[d] >= 0:
                    continue
                best, m = iou - 1e-10, -1
                for g, gt in enumerate(gts):
                    if gt_taken[g] or (gt[0] == det[0]) != same_class or ious[d, g] < best:
                        continue
                    best, m = ious[d, g], g
                if m >= 0:
                    gt_taken[m] = True
                    det_match[d] = m
        counts = {"false_positives": 0, "false_negatives": 0, "confusions": 0}
        for d, det in enumerate(kept):
            if det_match[d] < 0:
                confusion[nc, det[0]] += 1
                counts["false_positives"] += 1
            else:
                truth = gts[det_match[d]][0]
                confusion[truth, det[0]] += 1
                counts["confusions"] += int(truth != det[0])
        for g, gt in enumerate(gts):
            if not gt_taken[g]:
                confusion[gt[0], nc] += 1
                counts["false_negatives"] += 1
        counts["predictions"] = [[int(c)] + [round(float(v), 2) for v in box] + [round(float(s), 4)] for c, box, s in kept]
        images[image_id] = counts
    return {"confusion": confusion.tolist(), "images": images}


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


IGNORE = 255


def pixel_confusion(truth, predicted, nc, confusion=None):
    """Adds the pixels of class maps `truth` and `predicted` (same shape, values 0..nc-1; `IGNORE` in `truth` is left
    out) to `confusion` [nc, nc] (rows: truth, columns: prediction); returns it."""
    if confusion is None:
        confusion = np.zeros((nc, nc), dtype=np.int64)
    t = np.asarray(truth, dtype=np.int64).ravel()
    p = np.asarray(predicted, dtype=np.int64).ravel()
    keep = t != IGNORE
    confusion += np.bincount(t[keep] * nc + p[keep], minlength=nc * nc).reshape(nc, nc)
    return confusion


def semantic_metrics(confusion, class_names):
    """
    Semantic segmentation from a pixel confusion matrix whose index 0 is the background and index i + 1 is
    `class_names[i]`. IoU of a class = TP / (TP + FP + FN) over all evaluated pixels; a class absent from both truth
    and prediction has no IoU and is left out of the means. `miou` averages every class with an IoU, background
    included (as the Pascal VOC and Cityscapes benchmarks do); `miou_fg` leaves the background out; `pixel_accuracy`
    is the share of pixels labelled right. Per class: iou, pixels (ground truth) and predicted pixels.
    """
    c = np.asarray(confusion, dtype=np.float64)
    tp = np.diag(c)
    truth = c.sum(1)
    predicted = c.sum(0)
    union = truth + predicted - tp
    iou = [float(tp[i] / union[i]) if union[i] > 0 else None for i in range(len(c))]
    per_class = [{"class_index": i, "name": name, "iou": iou[i + 1], "pixels": int(truth[i + 1]), "predicted_pixels": int(predicted[i + 1])}
                 for i, name in enumerate(class_names)]
    mean = lambda values: float(np.mean(values)) if values else 0.0
    total = c.sum()
    return {
        "miou": mean([v for v in iou if v is not None]),
        "miou_fg": mean([v for v in iou[1:] if v is not None]),
        "background_iou": iou[0],
        "pixel_accuracy": float(tp.sum() / total) if total > 0 else 0.0,
        "per_class": per_class,
    }
