"""
The bare baseline of bench/segmentation.ts: torchvision's lraspp_mobilenet_v3_large from scratch (no weights
downloaded) on a PNG-masks export (`<split>/_classes.csv`, `<stem>_mask.png`), plain cross-entropy, Adam, horizontal
flips, for a time budget; then the same evaluation as versa-segment (images and masks letterboxed to imgsz, padding
left out, versa_trainer.metrics.semantic_metrics) on the test split, and the predict-nothing (all background) figure.

  python3 bench/bare-semantic.py <dataset folder> <seconds> [imgsz=256] [batch=8] [seed=0]
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainer"))
from versa_trainer.images import load_letterboxed  # noqa: E402
from versa_trainer.metrics import IGNORE, pixel_confusion, semantic_metrics  # noqa: E402
from versa_trainer.semantic import letterbox_map  # noqa: E402

BACKGROUND = {"background", "_background_", "bg", "unlabeled", "unlabelled", "void"}


def load(folder, size, names):
    values = {}
    for line in open(os.path.join(folder, "_classes.csv")).read().strip().splitlines()[1:]:
        value, name = line.split(",", 1)
        if name.strip().lower() not in BACKGROUND:
            values[int(value)] = name.strip()
    for name in values.values():
        if name not in names:
            names.append(name)
    images, targets = [], []
    for f in sorted(os.listdir(folder)):
        if not f.lower().endswith((".jpg", ".jpeg", ".png")) or f.endswith("_mask.png"):
            continue
        image, _, (w, h) = load_letterboxed(os.path.join(folder, f), size)
        mask_path = os.path.join(folder, os.path.splitext(f)[0] + "_mask.png")
        raw = np.array(Image.open(mask_path).resize((w, h), Image.NEAREST)) if os.path.exists(mask_path) else np.zeros((h, w), np.uint8)
        target = np.zeros_like(raw)
        for value, name in values.items():
            target[raw == value] = names.index(name) + 1
        images.append(image)
        targets.append(letterbox_map(target, size))
    return np.stack(images), np.stack(targets)


def main():
    root, budget = sys.argv[1], float(sys.argv[2])
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    torch.manual_seed(seed)
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    rng = np.random.default_rng(seed)
    names = []
    train_x, train_y = load(os.path.join(root, "train"), size, names)
    test_x, test_y = load(os.path.join(root, "test"), size, names)
    nc = len(names) + 1
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=nc)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    start, steps = time.monotonic(), 0
    while time.monotonic() - start < budget:
        model.train()
        for b in range(0, len(train_x) - batch + 1, batch):
            if time.monotonic() - start >= budget:
                break
            idx = rng.permutation(len(train_x))[:batch]
            x, y = train_x[idx].copy(), train_y[idx].copy()
            flip = rng.random(batch) < 0.5
            x[flip], y[flip] = x[flip][:, :, ::-1], y[flip][:, :, ::-1]
            logits = model(torch.from_numpy(np.ascontiguousarray(x)).permute(0, 3, 1, 2).float() / 255.0)["out"]
            loss = loss_fn(logits, torch.from_numpy(np.ascontiguousarray(y)).long())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
    model.eval()
    confusion = np.zeros((nc, nc), np.int64)
    with torch.no_grad():
        for b in range(0, len(test_x), 8):
            out = model(torch.from_numpy(test_x[b : b + 8]).permute(0, 3, 1, 2).float() / 255.0)["out"]
            pixel_confusion(test_y[b : b + 8], out.argmax(1).numpy(), nc, confusion)
    nothing = pixel_confusion(test_y, np.zeros_like(test_y), nc)
    print(json.dumps({"test_miou": semantic_metrics(confusion, names)["miou"], "test_miou_fg": semantic_metrics(confusion, names)["miou_fg"],
                      "nothing_miou": semantic_metrics(nothing, names)["miou"], "steps": steps, "seconds": time.monotonic() - start}))


if __name__ == "__main__":
    main()
