"""
ultralytics: runs the `yolo` command line on the materialised folder (data.yaml for detection, the split/class
folders for classification), follows the run's results.csv while it trains and reports its epochs, then reads
args.yaml, results.csv and weights/best.pt and exports ONNX with Ultralytics' own exporter.

Ultralytics writes (trainer.save_metrics): results.csv with a header `epoch,time,train/box_loss,…` (8.3; values
`%.6g`) or names right-aligned in 23 characters without `time` (8.0–8.2); args.yaml (`key: value` per line, the
effective arguments, `save_dir` among them); weights/best.pt and weights/last.pt.
"""
import os
import shutil
import subprocess
import time

from .common import Clock, emit, environment, load_config, read_dataset, run_params
from .protocol import finish

METRIC_NAMES = {
    "metrics/mAP50(B)": "map50",
    "metrics/mAP50-95(B)": "map50_95",
    "metrics/precision(B)": "precision",
    "metrics/recall(B)": "recall",
    "metrics/accuracy_top1": "accuracy",
    "metrics/accuracy_top5": "top5",
}


def parse_results_csv(text):
    """Rows of results.csv as dicts of floats, Versa's metric names added (map50, …, train_loss, val_loss)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = [h.strip() for h in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(header):
            continue
        row = {}
        for name, value in zip(header, values):
            try:
                row[name] = float(value)
            except ValueError:
                continue
        for source, target in METRIC_NAMES.items():
            if source in row:
                row[target] = row[source]
        train = [v for k, v in row.items() if k.startswith("train/") and k.endswith("loss")]
        val = [v for k, v in row.items() if k.startswith("val/") and k.endswith("loss")]
        if train:
            row["train_loss"] = sum(train)
        if val:
            row["val_loss"] = sum(val)
        if "epoch" in row:
            row["epoch"] = int(row["epoch"])
        rows.append(row)
    return rows


def parse_args_yaml(text):
    """args.yaml is flat `key: value` lines; values stay strings except numbers, booleans and null."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#") or ":" not in line or line.startswith(" "):
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if value in ("null", "~", ""):
            parsed = None
        elif value in ("true", "false"):
            parsed = value == "true"
        else:
            try:
                parsed = int(value)
            except ValueError:
                try:
                    parsed = float(value)
                except ValueError:
                    parsed = value.strip("'\"")
        out[key.strip()] = parsed
    return out


def collect_run(run_dir):
    """What a finished Ultralytics run folder holds, in Versa's terms (used after `yolo train`, and by tests)."""
    results = []
    path = os.path.join(run_dir, "results.csv")
    if os.path.exists(path):
        with open(path, "r", encoding="utf-8") as handle:
            results = parse_results_csv(handle.read())
    args = {}
    if os.path.exists(os.path.join(run_dir, "args.yaml")):
        with open(os.path.join(run_dir, "args.yaml"), "r", encoding="utf-8") as handle:
            args = parse_args_yaml(handle.read())
    weights = {}
    for name in ("best.pt", "last.pt", "best.onnx"):
        if os.path.exists(os.path.join(run_dir, "weights", name)):
            weights[name] = "weights/" + name
    best = None
    if results:
        key = "map50_95" if "map50_95" in results[0] else "accuracy" if "accuracy" in results[0] else None
        best = max(results, key=lambda r: r.get(key, 0)) if key else results[-1]
    return {"history": results, "args": args, "weights": weights, "best": best}


def main(argv):
    config = load_config(argv)
    yolo = shutil.which("yolo")
    if not yolo:
        raise SystemExit("the `yolo` command is not installed (pip install ultralytics)")
    dataset = read_dataset(config["data_dir"])
    task = "classify" if dataset["task"] == "classify" else "detect"
    data = config["data_dir"] if task == "classify" else os.path.join(config["data_dir"], "data.yaml")
    project = os.path.join(config["out_dir"], "ultralytics")
    device = config.get("device", "auto")
    params = run_params("ultralytics", config)
    command = [yolo, task, "train", "data=%s" % data, "model=%s" % params["model"], "epochs=%d" % int(params["epochs"]),
               "imgsz=%d" % int(params["imgsz"]), "batch=%d" % int(params["batch"]), "seed=%d" % int(params["seed"]),
               "project=%s" % project, "name=run", "exist_ok=True", "pretrained=%s" % (config.get("init_weights") or False), "plots=False", "workers=0"]
    if device not in ("auto", None):
        command.append("device=%s" % device)
    if params["time_budget_s"]:
        command.append("time=%f" % (float(params["time_budget_s"]) / 3600.0))
    # An operator's .pt under MODELS_ROOT (init_weights) is read by Ultralytics' own loader (its files pickle whole
    # models, which torch.load(weights_only=True) refuses); Versa's trainers never unpickle it.
    init = {"source": "pretrained", "file": os.path.basename(config["init_weights"])} if config.get("init_weights") else None
    emit("started", adapter="ultralytics", params=config, env=environment(), command=command, init=init)
    clock = Clock()
    run_dir = os.path.join(project, "run")
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, YOLO_OFFLINE="1"))
    seen = 0
    epochs = int(params["epochs"])
    while True:
        finished = child.poll() is not None
        csv_path = os.path.join(run_dir, "results.csv")
        if os.path.exists(csv_path):
            with open(csv_path, "r", encoding="utf-8") as handle:
                rows = parse_results_csv(handle.read())
            for row in rows[seen:]:
                done = row.get("epoch", 0) / epochs
                emit("epoch", epochs=epochs, progress=min(0.99, done), eta_seconds=clock.eta(done), **row)
            seen = max(seen, len(rows))
        if finished:
            break
        time.sleep(2)
    if child.returncode != 0:
        tail = (child.stderr.read() or b"").decode("utf-8", "replace").strip().splitlines()[-3:]
        raise SystemExit("yolo train failed: %s" % " | ".join(tail))
    run = collect_run(run_dir)
    if "best.pt" not in run["weights"]:
        raise SystemExit("the run wrote no weights/best.pt")
    best_pt = os.path.join(run_dir, "weights", "best.pt")
    subprocess.run([yolo, "export", "model=%s" % best_pt, "format=onnx", "imgsz=%d" % int(params["imgsz"])], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, YOLO_OFFLINE="1"))
    weights = os.path.join(config["out_dir"], "weights")
    os.makedirs(weights, exist_ok=True)
    shutil.copy(best_pt, os.path.join(weights, "best.pt"))
    shutil.copy(os.path.join(run_dir, "weights", "best.onnx"), os.path.join(weights, "best.onnx"))
    best = run["best"] or {}
    metrics = {k: best[k] for k in ("map50", "map50_95", "precision", "recall", "accuracy", "top5", "train_loss", "val_loss") if k in best}
    finish({"task": task, "metrics": metrics, "per_class": [], "best_epoch": best.get("epoch")},
           {"onnx": "weights/best.onnx", "pt": "weights/best.pt", "results": "ultralytics/run/results.csv", "args": "ultralytics/run/args.yaml"},
           run["args"], clock.elapsed(), environment())
