"""
The bare baseline of bench/segmentation.ts: torchvision's lraspp_mobilenet_v3_large from scratch (no weights
downloaded) on a PNG-masks export (`<split>/_classes.csv`, `<stem>_mask.png`), plain cross-entropy, Adam, horizontal
flips, for a time budget; then the same evaluation as versa-segment (images and masks letterboxed to imgsz, padding
left out, versa_trainer.metrics.semantic_metrics) on the test split, and the predict-nothing (all background) figure.
A COCO export (`<split>/_annotations.coco.json`, polygons) trains on the same class maps and is measured as versa-segment
measures instances: each connected region of a class one object, mask mAP50 / mAP50-95.

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


def load_coco(folder, size, names):
    """Images, class maps and each polygon's own letterboxed mask (category names matched, unused ones skipped)."""
    from PIL import ImageDraw

    spec = json.load(open(os.path.join(folder, "_annotations.coco.json")))
    used = {a["category_id"] for a in spec["annotations"]}
    category = {c["id"]: c["name"] for c in spec["categories"] if c["id"] in used}
    for name in category.values():
        if name not in names:
            names.append(name)
    images, targets, instances = [], [], []
    for entry in spec["images"]:
        image, _, (w, h) = load_letterboxed(os.path.join(folder, entry["file_name"]), size)
        target = Image.new("L", (w, h), 0)
        objects = []
        for a in spec["annotations"]:
            if a["image_id"] != entry["id"] or not isinstance(a.get("segmentation"), list):
                continue
            value = names.index(category[a["category_id"]]) + 1
            one = Image.new("L", (w, h), 0)
            for polygon in a["segmentation"]:
                if len(polygon) >= 6:
                    ImageDraw.Draw(target).polygon(polygon, fill=value)
                    ImageDraw.Draw(one).polygon(polygon, fill=1)
            objects.append((value - 1, letterbox_map(np.array(one), size) == 1))
        images.append(image)
        targets.append(letterbox_map(np.array(target), size))
        instances.append(objects)
    return np.stack(images), np.stack(targets), instances


def main():
    root, budget = sys.argv[1], float(sys.argv[2])
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    torch.manual_seed(seed)
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    rng = np.random.default_rng(seed)
    names = []
    coco = os.path.exists(os.path.join(root, "train", "_annotations.coco.json"))
    if coco:
        train_x, train_y, _ = load_coco(os.path.join(root, "train"), size, names)
        test_x, test_y, test_instances = load_coco(os.path.join(root, "test"), size, names)
    else:
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
    found = {}
    with torch.no_grad():
        for b in range(0, len(test_x), 8):
            probs = torch.softmax(model(torch.from_numpy(test_x[b : b + 8]).permute(0, 3, 1, 2).float() / 255.0)["out"], 1).numpy()
            pixel_confusion(test_y[b : b + 8], probs.argmax(1), nc, confusion)
            if coco:
                from scipy import ndimage

                for j, p in enumerate(probs):
                    labels = p.argmax(0)
                    labels[test_y[b + j] == IGNORE] = 0
                    found[b + j] = []
                    for c in range(1, nc):
                        regions, count = ndimage.label(labels == c, structure=np.ones((3, 3)))
                        for r in range(1, count + 1):
                            mask = regions == r
                            if mask.sum() >= 4:
                                found[b + j].append((c - 1, mask, float(p[c][mask].mean())))
    nothing = pixel_confusion(test_y, np.zeros_like(test_y), nc)
    if coco:
        from versa_trainer.mask_metrics import mask_metrics

        m = mask_metrics(dict(enumerate(test_instances)), found, names)
        print(json.dumps({"test_mask_map50": m["mask_map50"], "test_mask_map50_95": m["mask_map50_95"], "test_miou": semantic_metrics(confusion, names)["miou"], "steps": steps}))
        return
    print(json.dumps({"test_miou": semantic_metrics(confusion, names)["miou"], "test_miou_fg": semantic_metrics(confusion, names)["miou_fg"],
                      "nothing_miou": semantic_metrics(nothing, names)["miou"], "steps": steps, "seconds": time.monotonic() - start}))


if __name__ == "__main__":
    main()
