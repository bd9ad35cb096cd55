"""
Initial weights for a run (`init_weights` in run.json): a Versa checkpoint (`weights/best.pt` of an earlier run, to
fine-tune from) or an operator's pretrained state dict (a torchvision weights file). Files are read with
`torch.load(weights_only=True)`: tensors and plain containers only, never code; a torch without that option is refused.

A checkpoint's classes are matched to this run's by name (ignoring case): a matched class keeps its output rows, a new class gets the
model's fresh rows, a class the run no longer has is dropped. Every other tensor must fit as it is (same architecture).
"""
import inspect
import os

# Learning rate of a run that starts from weights, as a fraction of the from-scratch default (unless `lr` is given): at
# the full rate the first steps undo much of what the weights knew (shapes: matched classes' mAP50 0.85 → 0.59 after
# 2 epochs at 0.002, 0.85 at 0.0005).
FINE_TUNE_LR = 0.25


def load_file(torch, path):
    """The file's contents, unpickled without running code."""
    name = os.path.basename(path)
    if "weights_only" not in inspect.signature(torch.load).parameters:
        raise SystemExit("torch %s cannot read weights without running the code a file may hold (torch.load gained weights_only in 1.13): "
                         "upgrade torch to start from initial weights" % torch.__version__)
    if not os.path.isfile(path):
        raise SystemExit("the initial weights %s are gone" % name)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - pickle and zip errors alike mean "not plain weights"
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise SystemExit("%s cannot be read as plain weights (tensors only: a file that pickles code or whole models, such as an "
                         "Ultralytics .pt, is refused): %s" % (name, reason[:300]))


def is_checkpoint(loaded):
    return isinstance(loaded, dict) and isinstance(loaded.get("model"), dict) and isinstance(loaded.get("names"), (list, tuple))


def initialise(torch, model, path, names, class_rows, pretrained_target=None, arch=None):
    """Loads `path` into `model`; returns what was done, for the start event.

    class_rows: {state key: index of the first class row} of the tensors whose rows are classes (rows before it are
    shared, e.g. the detector's box and objectness rows). pretrained_target: the prefix of the part a plain state dict
    is loaded into (the torchvision network inside a wrapper), '' for the whole model."""
    loaded = load_file(torch, path)
    if is_checkpoint(loaded):
        if arch and loaded.get("arch") and loaded["arch"] != arch:
            raise SystemExit("the checkpoint is a %s, this run builds a %s: fine-tuning keeps the architecture" % (loaded["arch"], arch))
        return from_checkpoint(model, loaded["model"], [str(n) for n in loaded["names"]], names, class_rows)
    state = loaded.get("state_dict", loaded) if isinstance(loaded, dict) else None
    if not isinstance(state, dict) or not state or not all(torch.is_tensor(v) for v in state.values()):
        raise SystemExit("%s is neither a Versa checkpoint nor a state dict of tensors" % os.path.basename(path))
    return from_state_dict(model, state, pretrained_target or "", os.path.basename(path), arch)


def from_checkpoint(model, base, base_names, names, class_rows):
    own = model.state_dict()
    missing = sorted(set(own) - set(base))
    extra = sorted(set(base) - set(own))
    if missing or extra:
        raise SystemExit("the checkpoint does not fit this model (%s): a different architecture"
                         % "; ".join(filter(None, ["lacks " + ", ".join(missing[:3]) if missing else "", "has " + ", ".join(extra[:3]) + " besides" if extra else ""])))
    # Case-insensitive, as auto-annotate maps a model's classes to a project's.
    index = {n.strip().casefold(): i for i, n in enumerate(base_names)}
    wanted = {n.strip().casefold() for n in names}
    merged = {}
    for key, fresh in own.items():
        source = base[key]
        if key in class_rows:
            first = class_rows[key]
            if source.shape[1:] != fresh.shape[1:] or source.shape[0] != first + len(base_names):
                raise SystemExit("the checkpoint's %s is %s, which does not fit %d classes" % (key, tuple(source.shape), len(base_names)))
            rows = fresh.clone()
            rows[:first] = source[:first]
            for i, name in enumerate(names):
                if name.strip().casefold() in index:
                    rows[first + i] = source[first + index[name.strip().casefold()]]
            merged[key] = rows
        elif source.shape != fresh.shape:
            raise SystemExit("the checkpoint's %s is %s where this model has %s: a different architecture" % (key, tuple(source.shape), tuple(fresh.shape)))
        else:
            merged[key] = source
    model.load_state_dict(merged)
    return {"source": "checkpoint", "matched": [n for n in names if n.strip().casefold() in index],
            "new": [n for n in names if n.strip().casefold() not in index], "dropped": [n for n in base_names if n.strip().casefold() not in wanted]}


def from_state_dict(model, state, target, filename, arch):
    """A plain state dict (torchvision's files): every tensor whose name and shape fit is loaded; the classifier's last
    layer (ImageNet's 1000 classes) never fits and keeps its fresh rows. Refused when most of the network finds nothing."""
    prefix = target + "." if target else ""
    own = {k[len(prefix):]: v for k, v in model.state_dict().items() if k.startswith(prefix)}
    fits = {k: v for k, v in state.items() if k in own and tuple(v.shape) == tuple(own[k].shape)}
    if len(fits) < len(own) / 2:
        raise SystemExit("%s fits %d of the %d tensors of %s: these are not its weights%s"
                         % (filename, len(fits), len(own), arch or "this model",
                            " (versa-detect's backbone is Versa's own, not a torchvision network: start it from a versa-detect checkpoint)" if arch and arch.startswith("versa-detect") else ""))
    merged = dict(model.state_dict())
    merged.update({prefix + k: v for k, v in fits.items()})
    model.load_state_dict(merged)
    return {"source": "pretrained", "tensors_loaded": len(fits), "tensors_total": len(own),
            "not_loaded": sorted(k for k in own if k not in fits)[:20]}
