"""
versa-classify: torchvision's mobilenet_v3_small, no pretrained weights (nothing is downloaded), trained from scratch
on the version's classification labels. Exports ONNX with input `images [1, 3, S, S]` (letterboxed like the detector,
values / 255) and output `probs [1, nc]` (softmax, averaged over the image and its two mirrors), metadata `task: classify`, `names`, `imgsz`.
"""
import copy
import math
import os

import numpy as np

from .common import Clock, emit, environment, load_config, read_dataset, run_params, setup_torch
from .detect import write_args_yaml
from .images import load_letterboxed, resolve
from .initial_weights import FINE_TUNE_LR, initialise
from .loop import EMA, fit
from .metrics import classification_metrics
from .protocol import adapter_models, finish

# The trainer's own settings, not API parameters; the others' defaults are the server's.
OWN = {"lr": 0.003, "augment": "standard"}
AUGMENTS = ("flip", "standard")
MODELS = tuple(adapter_models("versa-classify"))
BN_MOMENTUM = 0.1
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class Split(object):
    def __init__(self, data_dir, entries, size):
        self.images = np.zeros((len(entries), size, size, 3), dtype=np.uint8)
        self.labels = np.array([int(e["label"]) for e in entries], dtype=np.int64)
        for i, entry in enumerate(entries):
            self.images[i] = load_letterboxed(resolve(data_dir, entry["file"]), size)[0]

    def __len__(self):
        return len(self.labels)


def build(torch, name, nc):
    import torchvision

    factory = getattr(torchvision.models, name)
    model = factory(weights=None, num_classes=nc)
    # torchvision sets batch-norm momentum 0.01 for long ImageNet schedules; over a few hundred steps from scratch the
    # running statistics then lag the weights so far that the evaluated model predicts one class for 30 epochs.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = BN_MOMENTUM
    return model


def to_tensor(torch, images, device):
    return torch.from_numpy(np.ascontiguousarray(images)).to(device).permute(0, 3, 1, 2).float() / 255.0


def normalised(torch):
    nn = torch.nn

    class Normalised(nn.Module):
        """Takes pixels / 255 like every Versa model; normalises inside, so the ONNX input needs no extra step."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1))
            self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1))

        def forward(self, x):
            return self.inner((x - self.mean) / self.std)

    return Normalised


def augmented(torch, x, generator):
    """The standard recipe on a batch of pixels / 255: a random affine (any flip, rotation up to 20 degrees, scale
    0.8-1.2, shift up to 10 %; edges reflected) and colour jitter (brightness, contrast, saturation 0.7-1.3), drawn
    from `generator` so that the same seed gives the same batches."""
    import torch.nn.functional as F

    n = x.shape[0]
    rand = lambda *shape: torch.rand(*shape, generator=generator).to(x.device)
    angle = (rand(n) * 2 - 1) * math.radians(20)
    scale = 0.8 + 0.4 * rand(n)
    flip_x = torch.where(rand(n) < 0.5, -1.0, 1.0)
    flip_y = torch.where(rand(n) < 0.5, -1.0, 1.0)
    shift = (rand(n, 2) * 2 - 1) * 0.2
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos * flip_x, -sin * flip_y, shift[:, 0]], 1), torch.stack([sin * flip_x, cos * flip_y, shift[:, 1]], 1)], 1)
    x = F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=False), padding_mode="reflection", align_corners=False)
    jitter = lambda: (0.7 + 0.6 * rand(n)).view(n, 1, 1, 1)
    grey = (0.299 * x[:, 0:1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:3])
    x = grey + (x - grey) * jitter()
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = mean + (x - mean) * jitter()
    return (x * jitter()).clamp(0.0, 1.0)


def flip_averaged(torch):
    nn = torch.nn

    class FlipAveraged(nn.Module):
        """Class probabilities averaged over the image and its horizontal and vertical mirrors (test-time
        augmentation; the mirrors are index gathers, which every ONNX runtime runs). The evaluation and the exported
        model both predict through it, so that auto-annotate reproduces the trainer's metrics."""

        def __init__(self, inner, size):
            super().__init__()
            self.inner = inner
            self.register_buffer("reverse", torch.arange(size - 1, -1, -1))

        def forward(self, x):
            p = torch.softmax(self.inner(x), 1)
            p = p + torch.softmax(self.inner(x.index_select(3, self.reverse)), 1)
            p = p + torch.softmax(self.inner(x.index_select(2, self.reverse)), 1)
            return p / 3.0

    return FlipAveraged


def scores(torch, predictor, split, device, batch=64, logits=False):
    """Class probabilities of every image of `split` from `predictor` (a FlipAveraged model, or a plain one with
    `logits`: then softmax is applied here)."""
    predictor.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(split), batch):
            p = predictor(to_tensor(torch, split.images[start : start + batch], device))
            out.append((torch.softmax(p, 1) if logits else p).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 1))


def main(argv):
    config = load_config(argv)
    params = run_params("versa-classify", config, OWN)
    if params["model"] not in MODELS:
        raise SystemExit("unknown model %s (one of %s)" % (params["model"], ", ".join(MODELS)))
    if config.get("init_weights") and config.get("lr") is None:
        params["lr"] = params["lr"] * FINE_TUNE_LR
    if params["augment"] not in AUGMENTS:
        raise SystemExit("unknown augment %s (one of %s)" % (params["augment"], ", ".join(AUGMENTS)))
    torch, device, threads = setup_torch(config)
    dataset = read_dataset(config["data_dir"])
    names = dataset["names"]
    size = int(params["imgsz"])
    model = normalised(torch)(build(torch, params["model"], len(names))).to(device)
    init = None
    if config.get("init_weights"):
        # The last linear layer's rows are the classes; a torchvision state dict goes into the network inside the wrapper.
        init = initialise(torch, model, config["init_weights"], names, {"inner.classifier.3.weight": 0, "inner.classifier.3.bias": 0},
                          pretrained_target="inner", arch=params["model"])
    emit("started", adapter="versa-classify", params=params, env=environment(torch, device, threads), init=init)
    emit("progress", progress=0.0, message="loading images")
    splits = {k: Split(config["data_dir"], dataset["splits"].get(k, []), size) for k in ("train", "valid", "test")}
    train, valid, test = splits["train"], splits["valid"], splits["test"]
    if len(train) == 0:
        raise SystemExit("the version has no training images")
    evaluation = valid if len(valid) else train
    # Averaged weights (horizon about 200 steps) are evaluated, kept and exported: steadier than the last step's.
    ema = EMA(torch, model, decay=0.995, tau=200)
    optimizer = torch.optim.AdamW(model.parameters(), lr=params["lr"], weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    rng = np.random.default_rng(int(params["seed"]))
    generator = torch.Generator().manual_seed(int(params["seed"]))
    clock = Clock()

    def learning_rate(iteration, total, fraction):
        return params["lr"] * 0.5 * (1 + math.cos(math.pi * min(1.0, fraction)))

    def step(idx):
        if params["augment"] == "standard":
            x = augmented(torch, to_tensor(torch, train.images[idx], device), generator)
        else:
            images = train.images[idx].copy()
            flip = rng.random(len(idx)) < 0.5
            images[flip] = images[flip][:, :, ::-1]
            x = to_tensor(torch, images, device)
        y = torch.from_numpy(train.labels[idx]).to(device)
        return loss_fn(model(x), y), {}

    def measure():
        # One pass per epoch (the mirrored passes would cost a third of the epoch); the final evaluation uses them.
        probs = scores(torch, ema.ema, evaluation, device, logits=True)
        m = classification_metrics(evaluation.labels, probs, names)
        with torch.no_grad():
            val = float(loss_fn(torch.log(torch.from_numpy(probs).clamp(min=1e-9)), torch.from_numpy(evaluation.labels))) if len(evaluation) else 0.0
        return {"val_loss": val, "accuracy": m["accuracy"], "top5": m["top5"]}, m["accuracy"]

    history, best = fit(model, ema, optimizer, len(train), max(2, min(int(params["batch"]), len(train))), int(params["epochs"]), params.get("time_budget_s"),
                        rng, clock, learning_rate, step, measure)
    model.load_state_dict(best[1])
    model.eval()
    predictor = flip_averaged(torch)(model, size).to(device)
    results = {k: classification_metrics(s.labels, scores(torch, predictor, s, device), names) if len(s) else None for k, s in (("valid", valid), ("test", test))}
    weights = os.path.join(config["out_dir"], "weights")
    os.makedirs(weights, exist_ok=True)
    torch.save({"model": model.state_dict(), "names": names, "imgsz": size, "arch": params["model"], "epoch": best[2]}, os.path.join(weights, "best.pt"))
    onnx_path = os.path.join(weights, "best.onnx")

    from .onnx_meta import export_onnx, names_literal

    export_onnx(torch, flip_averaged(torch)(copy.deepcopy(model).cpu(), size).eval(), size, onnx_path, "probs",
                {"names": names_literal(names), "imgsz": "[%d, %d]" % (size, size), "task": "classify", "author": "Versa versa-classify", "batch": "1"})
    write_args_yaml(os.path.join(config["out_dir"], "args.yaml"), dict(params, task="classify", adapter="versa-classify"))
    v = results["valid"] or classification_metrics([], [], names)
    metrics = {"accuracy": v["accuracy"], "top5": v["top5"], "train_loss": history[-1]["train_loss"], "val_loss": history[-1]["val_loss"]}
    if results["test"]:
        metrics.update({"test_accuracy": results["test"]["accuracy"], "test_top5": results["test"]["top5"]})
    finish({"task": "classify", "metrics": metrics, "per_class": v["per_class"], "confusion": v["confusion"], "best_epoch": best[2]},
           {"onnx": "weights/best.onnx", "pt": "weights/best.pt", "args": "args.yaml"}, params, clock.elapsed(), environment(torch, device, threads))
