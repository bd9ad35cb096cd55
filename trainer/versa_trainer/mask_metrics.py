"""
Instance mask AP (COCO's segm evaluation with area range "all"): IoU thresholds 0.50:0.05:0.95, 101-point
interpolated precision, greedy matching in score order to the best-overlapping unmatched ground truth, classes without
ground truth left out of the means. Masks are bool arrays of one image's size.
"""
import numpy as np

from .metrics import IOU_THRESHOLDS, RECALL_THRESHOLDS


def mask_iou(dets, gts):
    """IoU matrix [len(dets), len(gts)] of bool masks."""
    if len(dets) == 0 or len(gts) == 0:
        return np.zeros((len(dets), len(gts)))
    d = np.stack(dets).reshape(len(dets), -1).astype(np.float32)
    g = np.stack(gts).reshape(len(gts), -1).astype(np.float32)
    inter = d @ g.T
    union = d.sum(1)[:, None] + g.sum(1)[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1), 0.0)


def _ap(matched, n_gt):
    tps = np.cumsum(matched).astype(np.float64)
    fps = np.cumsum(~matched).astype(np.float64)
    recall = tps / n_gt
    precision = (tps / (fps + tps + np.spacing(1))).tolist()
    for i in range(len(precision) - 1, 0, -1):
        precision[i - 1] = max(precision[i - 1], precision[i])
    q = np.zeros(len(RECALL_THRESHOLDS))
    for r_index, p_index in enumerate(np.searchsorted(recall, RECALL_THRESHOLDS, side="left")):
        if p_index < len(precision):
            q[r_index] = precision[p_index]
    return float(np.mean(q))


def mask_metrics(ground_truth, predictions, class_names, max_dets=100):
    """
    ground_truth: {image_id: [(class_index, mask), ...]} (every evaluated image); predictions: {image_id:
    [(class_index, mask, score), ...]}. Returns {mask_map50, mask_map50_95, per_class: [{class_index, name, instances,
    mask_ap50, mask_ap50_95}]}.
    """
    per_class = []
    for class_index, name in enumerate(class_names):
        scores, matched, n_gt = [], [], 0
        for image_id, gts in ground_truth.items():
            g = [m for (c, m) in gts if c == class_index]
            dets = sorted([(m, s) for (c, m, s) in predictions.get(image_id, []) if c == class_index], key=lambda d: -d[1])[:max_dets]
            n_gt += len(g)
            if not dets:
                continue
            ious = mask_iou([m for m, _ in dets], g)
            flags = np.zeros((len(IOU_THRESHOLDS), len(dets)), dtype=bool)
            for t_index, threshold in enumerate(IOU_THRESHOLDS):
                taken = np.zeros(len(g), dtype=bool)
                for d_index in range(len(dets)):
                    candidates = np.where(~taken & (ious[d_index] >= min(threshold, 1 - 1e-10)))[0] if len(g) else []
                    if len(candidates):
                        best = candidates[np.argmax(ious[d_index, candidates])]
                        taken[best] = True
                        flags[t_index, d_index] = True
            scores.append(np.array([s for _, s in dets]))
            matched.append(flags)
        entry = {"class_index": class_index, "name": name, "instances": n_gt, "mask_ap50": None, "mask_ap50_95": None}
        if n_gt:
            if scores:
                order = np.argsort(-np.concatenate(scores), kind="mergesort")
                flags = np.concatenate(matched, axis=1)[:, order]
            else:
                flags = np.zeros((len(IOU_THRESHOLDS), 0), dtype=bool)
            aps = [_ap(flags[t], n_gt) for t in range(len(IOU_THRESHOLDS))]
            entry.update({"mask_ap50": aps[0], "mask_ap50_95": float(np.mean(aps))})
        per_class.append(entry)
    valid = [c for c in per_class if c["mask_ap50"] is not None]
    return {
        "mask_map50": float(np.mean([c["mask_ap50"] for c in valid])) if valid else 0.0,
        "mask_map50_95": float(np.mean([c["mask_ap50_95"] for c in valid])) if valid else 0.0,
        "per_class": per_class,
    }
