"""
versa-detect: a from-scratch, anchor-free, YOLO-style detector for CPU training.

Backbone of strided conv blocks (/2 … /32), a light top-down neck back to stride 8, and one head per stride-8 cell:
objectness, class logits and box distances (left, top, right, bottom). Cells whose centre lies inside a box and near
its centre are its positives (FCOS/YOLOX centre sampling); losses are objectness BCE over every cell, class BCE and
GIoU on positives, normalised by the number of positives. EMA weights are evaluated and exported.

The ONNX export has the YOLOv8 layout `[1, 4 + nc, N]` (cx, cy, w, h in input pixels, then per-class scores =
objectness × class probability) and Ultralytics' metadata (`names`, `imgsz`, `task`, `stride`), so Versa's existing
inference code runs it unchanged.
"""
import copy
import csv
import math
import os

import numpy as np

from .common import Clock, emit, environment, load_config, read_dataset, run_main, run_params, setup_torch
from .images import load_letterboxed, resolve
from .initial_weights import FINE_TUNE_LR, initialise
from .evaluate import write_analysis
from .loop import EMA, fit
from .metrics import detection_metrics
from .protocol import finish

STRIDE = 8
# The learning rate is the trainer's own setting, not an API parameter; the others' defaults are the server's.
LR = 0.002
MODELS = {"versa-detect-n": (12, 24, 48, 96, 192), "versa-detect-s": (16, 32, 64, 128, 256), "versa-detect-m": (24, 48, 96, 192, 384)}
EVAL_CONF = 0.001
EVAL_IOU = 0.6
MAX_DET = 300


def build_model(torch, nc, widths):
    nn = torch.nn

    def conv(c1, c2, k=3, s=1):
        return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a = conv(c, c // 2, 1)
            self.b = conv(c // 2, c, 3)

        def forward(self, x):
            return x + self.b(self.a(x))

    w1, w2, w3, w4, w5 = widths

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.nc = nc
            self.s1 = conv(3, w1, 3, 2)
            self.s2 = nn.Sequential(conv(w1, w2, 3, 2), Block(w2))
            self.s3 = nn.Sequential(conv(w2, w3, 3, 2), Block(w3), Block(w3))
            self.s4 = nn.Sequential(conv(w3, w4, 3, 2), Block(w4), Block(w4))
            self.s5 = nn.Sequential(conv(w4, w5, 3, 2), Block(w5), Block(w5))
            self.lat5 = conv(w5, w4, 1)
            self.fuse4 = nn.Sequential(conv(2 * w4, w4, 3), Block(w4))
            self.lat4 = conv(w4, w3, 1)
            self.fuse3 = nn.Sequential(conv(2 * w3, w3, 3), Block(w3))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.head = nn.Sequential(conv(w3, w3 * 2, 3), conv(w3 * 2, w3 * 2, 3))
            self.out = nn.Conv2d(w3 * 2, 5 + nc, 1)
            with torch.no_grad():
                self.out.bias.zero_()
                self.out.bias[4] = -4.6  # objectness prior ~1 %
                self.out.bias[5:] = -4.6

        def forward(self, x):
            x = self.s2(self.s1(x))
            p3 = self.s3(x)
            p4 = self.s4(p3)
            p5 = self.s5(p4)
            f4 = self.fuse4(torch.cat([self.up(self.lat5(p5)), p4], 1))
            f3 = self.fuse3(torch.cat([self.up(self.lat4(f4)), p3], 1))
            return self.out(self.head(f3))

    model = Detector()
    # Short CPU runs take few steps: BN running statistics that follow faster make the first validations meaningful.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = 0.2
    return model


def grid(torch, h, w, device):
    ys, xs = torch.meshgrid(torch.arange(h, device=device), torch.arange(w, device=device), indexing="ij")
    return torch.stack([(xs.flatten() + 0.5) * STRIDE, (ys.flatten() + 0.5) * STRIDE], 1).float()


def decode_raw(torch, raw):
    """raw [B, 5+nc, H, W] → boxes xyxy [B, N, 4], objectness logits [B, N], class logits [B, N, nc]."""
    b, c, h, w = raw.shape
    flat = raw.flatten(2).permute(0, 2, 1)
    centres = grid(torch, h, w, raw.device)
    dist = torch.exp(flat[..., :4].clamp(max=6.0)) * STRIDE
    boxes = torch.cat([centres - dist[..., :2], centres + dist[..., 2:4]], -1)
    return boxes, flat[..., 4], flat[..., 5:]


class Export(object):
    pass


def export_module(torch, model):
    nn = torch.nn

    class Wrapped(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            boxes, obj, cls = decode_raw(torch, self.inner(x))
            scores = torch.sigmoid(obj).unsqueeze(-1) * torch.sigmoid(cls)
            xywh = torch.cat([(boxes[..., :2] + boxes[..., 2:]) / 2, boxes[..., 2:] - boxes[..., :2]], -1)
            return torch.cat([xywh, scores], -1).permute(0, 2, 1)

    return Wrapped(model)


def giou(torch, a, b):
    """Generalised IoU of paired xyxy boxes."""
    iw = (torch.min(a[:, 2], b[:, 2]) - torch.max(a[:, 0], b[:, 0])).clamp(min=0)
    ih = (torch.min(a[:, 3], b[:, 3]) - torch.max(a[:, 1], b[:, 1])).clamp(min=0)
    inter = iw * ih
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a + area_b - inter + 1e-7
    iou = inter / union
    cw = torch.max(a[:, 2], b[:, 2]) - torch.min(a[:, 0], b[:, 0])
    ch = torch.max(a[:, 3], b[:, 3]) - torch.min(a[:, 1], b[:, 1])
    hull = cw * ch + 1e-7
    return iou - (hull - union) / hull


def assign(torch, centres, gt_boxes, radius=2.5):
    """Positives per cell: inside the box and within `radius` cells of its centre (plus the centre cell); ties go to
    the smallest box. Returns (positive mask [N], gt index [N])."""
    n = centres.shape[0]
    if gt_boxes.shape[0] == 0:
        return torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.long)
    cx, cy = centres[:, 0:1], centres[:, 1:2]
    x1, y1, x2, y2 = gt_boxes[:, 0], gt_boxes[:, 1], gt_boxes[:, 2], gt_boxes[:, 3]
    inside = (cx > x1) & (cx < x2) & (cy > y1) & (cy < y2)
    gcx, gcy = (x1 + x2) / 2, (y1 + y2) / 2
    near = ((cx - gcx).abs() < radius * STRIDE) & ((cy - gcy).abs() < radius * STRIDE)
    candidate = inside & near
    # The cell holding each box's centre is always a candidate (tiny boxes).
    centre_cell = ((cx - gcx).abs() <= STRIDE / 2) & ((cy - gcy).abs() <= STRIDE / 2)
    candidate = candidate | centre_cell
    area = ((x2 - x1) * (y2 - y1)).unsqueeze(0).expand(n, -1)
    cost = torch.where(candidate, area, torch.full_like(area, float("inf")))
    best, index = cost.min(1)
    return torch.isfinite(best), index


def compute_loss(torch, raw, targets):
    """targets: list per image of tensors [M, 5] (class, x1, y1, x2, y2) in input pixels."""
    F = torch.nn.functional
    boxes, obj, cls = decode_raw(torch, raw)
    b, n, nc = cls.shape
    centres = grid(torch, raw.shape[2], raw.shape[3], raw.device)
    obj_target = torch.zeros_like(obj)
    pos_pred, pos_gt, pos_cls_logits, pos_cls_target = [], [], [], []
    for i, t in enumerate(targets):
        positive, index = assign(torch, centres, t[:, 1:5])
        if positive.any():
            obj_target[i, positive] = 1.0
            matched = t[index[positive]]
            pos_pred.append(boxes[i, positive])
            pos_gt.append(matched[:, 1:5])
            pos_cls_logits.append(cls[i, positive])
            pos_cls_target.append(F.one_hot(matched[:, 0].long(), nc).float())
    num_pos = max(1.0, float(sum(p.shape[0] for p in pos_pred)))
    loss_obj = F.binary_cross_entropy_with_logits(obj, obj_target, reduction="sum") / num_pos
    if pos_pred:
        pred = torch.cat(pos_pred)
        gt = torch.cat(pos_gt)
        loss_box = (1.0 - giou(torch, pred, gt)).sum() / num_pos
        loss_cls = F.binary_cross_entropy_with_logits(torch.cat(pos_cls_logits), torch.cat(pos_cls_target), reduction="sum") / num_pos
    else:
        loss_box = raw.sum() * 0
        loss_cls = raw.sum() * 0
    total = 5.0 * loss_box + loss_obj + loss_cls
    return total, {"box_loss": float(loss_box), "obj_loss": float(loss_obj), "cls_loss": float(loss_cls)}


class Split(object):
    """One split, letterboxed into memory once: images uint8 [n, S, S, 3], targets in input pixels, originals."""

    def __init__(self, data_dir, entries, size):
        self.entries = entries
        self.images = np.zeros((len(entries), size, size, 3), dtype=np.uint8)
        self.targets = []
        self.transforms = []
        for i, entry in enumerate(entries):
            img, (sx, sy, px, py), _ = load_letterboxed(resolve(data_dir, entry["file"]), size)
            self.images[i] = img
            self.transforms.append((sx, sy, px, py, entry["width"], entry["height"]))
            rows = []
            for c, x, y, w, h in entry.get("boxes", []):
                rows.append([c, x * sx + px, y * sy + py, (x + w) * sx + px, (y + h) * sy + py])
            self.targets.append(np.array(rows, dtype=np.float32).reshape(-1, 5))

    def __len__(self):
        return len(self.entries)


def batch_tensor(torch, split, indices, augment, rng, device):
    imgs = split.images[indices]
    targets = [split.targets[i].copy() for i in indices]
    if augment:
        size = imgs.shape[2]
        imgs = imgs.copy()
        for k in range(len(indices)):
            if rng.random() < 0.5:
                imgs[k] = imgs[k][:, ::-1]
                t = targets[k]
                if len(t):
                    x1 = size - t[:, 3]
                    x2 = size - t[:, 1]
                    t[:, 1], t[:, 3] = x1, x2
            if rng.random() < 0.5:
                imgs[k] = imgs[k][::-1, :]
                t = targets[k]
                if len(t):
                    y1 = size - t[:, 4]
                    y2 = size - t[:, 2]
                    t[:, 2], t[:, 4] = y1, y2
    x = torch.from_numpy(np.ascontiguousarray(imgs)).to(device).permute(0, 3, 1, 2).float() / 255.0
    return x, [torch.from_numpy(t).to(device) for t in targets]


def predict(torch, model, split, device, batch=16):
    """Detections per image in original pixels: best class per cell, per-class NMS (as Versa's decoder does)."""
    from torchvision.ops import batched_nms

    out = {}
    model.eval()
    with torch.no_grad():
        for start in range(0, len(split), batch):
            idx = list(range(start, min(len(split), start + batch)))
            x, _ = batch_tensor(torch, split, idx, False, None, device)
            boxes, obj, cls = decode_raw(torch, model(x))
            scores_all = torch.sigmoid(obj).unsqueeze(-1) * torch.sigmoid(cls)
            for k, i in enumerate(idx):
                score, label = scores_all[k].max(1)
                keep = score >= EVAL_CONF
                b, s, l = boxes[k][keep], score[keep], label[keep]
                if b.shape[0] > 30000:
                    top = s.topk(30000).indices
                    b, s, l = b[top], s[top], l[top]
                kept = batched_nms(b, s, l, EVAL_IOU)[:MAX_DET]
                sx, sy, px, py, w, h = split.transforms[i]
                dets = []
                for j in kept.tolist():
                    x1, y1, x2, y2 = b[j].tolist()
                    x1 = min(max((x1 - px) / sx, 0), w)
                    x2 = min(max((x2 - px) / sx, 0), w)
                    y1 = min(max((y1 - py) / sy, 0), h)
                    y2 = min(max((y2 - py) / sy, 0), h)
                    if x2 <= x1 or y2 <= y1:
                        continue
                    dets.append((int(l[j]), [x1, y1, x2 - x1, y2 - y1], float(s[j])))
                out[i] = dets
    return out


def evaluate(torch, model, split, names, device, analysis=False):
    preds = predict(torch, model, split, device)
    gt = {i: [(int(c), [x, y, w, h]) for c, x, y, w, h in e.get("boxes", [])] for i, e in enumerate(split.entries)}
    return detection_metrics(gt, preds, names, analysis=analysis)


def val_loss(torch, model, split, device, batch=16):
    model.eval()
    total, batches = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(split), batch):
            idx = list(range(start, min(len(split), start + batch)))
            x, t = batch_tensor(torch, split, idx, False, None, device)
            loss, _ = compute_loss(torch, model(x), t)
            total += float(loss)
            batches += 1
    return total / max(1, batches)


def write_results_csv(path, history):
    """An Ultralytics-like results.csv, so that run discovery reads Versa's runs and Ultralytics' the same way."""
    columns = ["epoch", "train/box_loss", "train/cls_loss", "train/obj_loss", "metrics/precision(B)", "metrics/recall(B)",
               "metrics/mAP50(B)", "metrics/mAP50-95(B)", "val/loss", "lr/pg0", "time"]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for h in history:
            writer.writerow([h["epoch"], h["box_loss"], h["cls_loss"], h["obj_loss"], h["precision"], h["recall"], h["map50"],
                             h["map50_95"], h["val_loss"], h["lr"], h["time"]])


def write_args_yaml(path, params):
    with open(path, "w", encoding="utf-8") as handle:
        for key, value in params.items():
            handle.write("%s: %s\n" % (key, "null" if value is None else value))


def main(argv):
    config = load_config(argv)
    params = run_params("versa-detect", config, {"lr": LR})
    if config.get("init_weights") and config.get("lr") is None:
        params["lr"] = params["lr"] * FINE_TUNE_LR
    if params["model"] not in MODELS:
        raise SystemExit("unknown model %s (one of %s)" % (params["model"], ", ".join(MODELS)))
    torch, device, threads = setup_torch(config)
    data_dir, out_dir = config["data_dir"], config["out_dir"]
    dataset = read_dataset(data_dir)
    names = dataset["names"]
    size = int(params["imgsz"])
    if size % 32:
        raise SystemExit("imgsz must be a multiple of 32")
    model = build_model(torch, len(names), MODELS[params["model"]]).to(device)
    init = None
    if config.get("init_weights"):
        # The box and objectness rows (0-4) of the output layer are shared by every class; rows 5+ are the classes.
        init = initialise(torch, model, config["init_weights"], names, {"out.weight": 5, "out.bias": 5}, arch=params["model"])
    emit("started", adapter="versa-detect", params=params, env=environment(torch, device, threads), init=init)
    emit("progress", progress=0.0, message="loading images")
    train = Split(data_dir, dataset["splits"].get("train", []), size)
    valid = Split(data_dir, dataset["splits"].get("valid", []), size)
    test = Split(data_dir, dataset["splits"].get("test", []), size)
    if len(train) == 0:
        raise SystemExit("the version has no training images")
    evaluation = valid if len(valid) else train

    param_count = sum(p.numel() for p in model.parameters())
    ema = EMA(torch, model)
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}], lr=params["lr"])
    base_lr = params["lr"]
    rng = np.random.default_rng(int(params["seed"]))
    clock = Clock()

    def learning_rate(iteration, total, fraction):
        warmup = max(1, min(100, total // 10))
        return base_lr * (iteration + 1) / warmup if iteration < warmup else base_lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, fraction))))

    def step(indices):
        x, t = batch_tensor(torch, train, indices.tolist(), True, rng, device)
        return compute_loss(torch, model(x), t)

    def measure():
        m = evaluate(torch, ema.ema, evaluation, names, device)
        row = {"val_loss": val_loss(torch, ema.ema, evaluation, device), "map50": m["map50"], "map50_95": m["map50_95"], "precision": m["precision"], "recall": m["recall"]}
        return row, 0.1 * row["map50"] + 0.9 * row["map50_95"]

    history, best = fit(model, ema, optimizer, len(train), max(1, min(int(params["batch"]), len(train))), int(params["epochs"]), params.get("time_budget_s"),
                        rng, clock, learning_rate, step, measure, partial_batches=True, clip_grad=10.0, ties_to_later=False)

    emit("progress", progress=0.99, message="evaluating and exporting")
    final = ema.ema
    final.load_state_dict(best[1])
    final.eval()
    results = {"valid": evaluate(torch, final, valid, names, device, analysis=True) if len(valid) else None,
               "test": evaluate(torch, final, test, names, device, analysis=True) if len(test) else None}
    weights = os.path.join(out_dir, "weights")
    os.makedirs(weights, exist_ok=True)
    torch.save({"model": final.state_dict(), "names": names, "imgsz": size, "arch": params["model"], "epoch": best[2]}, os.path.join(weights, "best.pt"))
    onnx_path = os.path.join(weights, "best.onnx")
    from .onnx_meta import export_onnx, names_literal

    export_onnx(torch, export_module(torch, copy.deepcopy(final).cpu()).eval(), size, onnx_path, "output0",
                {"names": names_literal(names), "imgsz": "[%d, %d]" % (size, size), "task": "detect", "stride": str(STRIDE),
                 "author": "Versa versa-detect", "batch": "1"})
    write_results_csv(os.path.join(out_dir, "results.csv"), history)
    write_args_yaml(os.path.join(out_dir, "args.yaml"), dict(params, task="detect", adapter="versa-detect"))
    headline = results["test"] or results["valid"] or {}
    valid_metrics = results["valid"] or {}
    metrics = {k: valid_metrics.get(k) for k in ("map50", "map50_95", "precision", "recall")}
    if results["test"]:
        metrics.update({"test_" + k: results["test"][k] for k in ("map50", "map50_95", "precision", "recall")})
    metrics["train_loss"] = history[-1]["train_loss"]
    metrics["val_loss"] = history[-1]["val_loss"]
    per_class = []
    for entry in (results["valid"] or headline).get("per_class", []):
        per_class.append({"class_index": entry["class_index"], "name": entry["name"], "instances": entry["instances"],
                          "map50": entry["ap50"], "map50_95": entry["ap50_95"], "precision": entry["precision"], "recall": entry["recall"]})
    evaluation_file = write_analysis(out_dir, names, {k: (s.entries, results[k]) if results[k] else None for k, s in (("valid", valid), ("test", test))})
    finish({"task": "detect", "metrics": metrics, "per_class": per_class, "best_epoch": best[2], "parameters": param_count,
            "evaluation": {"conf": EVAL_CONF, "iou": EVAL_IOU, "max_det": MAX_DET}},
           {"onnx": "weights/best.onnx", "pt": "weights/best.pt", "results": "results.csv", "args": "args.yaml", "evaluation": evaluation_file},
           params, clock.elapsed(), environment(torch, device, threads))


if __name__ == "__main__":
    run_main(main)
