"""Runs the pack that bench/device-pack.ts wrote (.device-pack/manifest.json): each trainer as the service runs it
(`python3 trainer/<script> --config run.json`), in order, a fine-tune from its base run's checkpoint as the service's
`base_model_id` does, each under its own time budget and a hard limit. Prints one JSON line per run and a table (the
device and torch the trainer reported, epochs, the headline metrics, wall time); with OUT set (the device machine),
writes every event to $OUT/events.jsonl, the table to $OUT/summary.json and the first detector's ONNX beside them.

    python3 bench/device-run.py [--device=auto] [--scale=1] [--only=name,name] [--runs=folder]
"""
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACK = os.path.join(ROOT, ".device-pack")
HEADLINES = ("map50", "map50_95", "test_map50", "miou", "test_miou", "mask_map50", "test_mask_map50", "accuracy", "test_accuracy")


def arg(name, default):
    prefix = "--%s=" % name
    return next((a[len(prefix):] for a in sys.argv[1:] if a.startswith(prefix)), default)


def main():
    device, scale, only, runs_dir = arg("device", "auto"), float(arg("scale", "1")), arg("only", ""), arg("runs", os.path.join(PACK, "runs"))
    out = os.environ.get("OUT") or os.path.join(PACK, "out")
    os.makedirs(out, exist_ok=True)
    runs = json.load(open(os.path.join(PACK, "manifest.json"), encoding="utf-8"))
    rows = []
    with open(os.path.join(out, "events.jsonl"), "w", encoding="utf-8") as log:
        for run in runs:
            if only and run["name"] not in only.split(","):
                continue
            run_dir = os.path.join(runs_dir, run["name"])
            shutil.rmtree(run_dir, ignore_errors=True)
            os.makedirs(run_dir)
            config = dict(run["config"], device=device, data_dir=os.path.join(PACK, "data", run["data"]), out_dir=run_dir)
            config["time_budget_s"] = max(1, round(config["time_budget_s"] * scale))
            if run["base"]:
                config["init_weights"] = os.path.join(runs_dir, run["base"], "weights", "best.pt")
            config_path = os.path.join(run_dir, "run.json")
            json.dump(config, open(config_path, "w", encoding="utf-8"))
            started = time.time()
            try:
                done = subprocess.run([sys.executable, os.path.join(ROOT, "trainer", run["script"]), "--config", config_path],
                                      capture_output=True, text=True, timeout=config["time_budget_s"] + 120, env=dict(os.environ, PYTHONUNBUFFERED="1"))
                code, stdout, stderr = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as e:
                code, stdout, stderr = "timeout", e.stdout or "", e.stderr or ""
                stdout, stderr = (s.decode() if isinstance(s, bytes) else s for s in (stdout, stderr))
            wall = time.time() - started
            events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
            for event in events:
                log.write(json.dumps({"run": run["name"], **event}) + "\n")
            log.flush()
            first = next((e for e in events if e.get("event") == "started"), {})
            metrics = next((e for e in events if e.get("event") == "metrics"), {}).get("metrics", {})
            epochs = [e for e in events if e.get("event") == "epoch"]
            row = {"run": run["name"], "exit": code, "device": first.get("env", {}).get("device"), "torch": first.get("env", {}).get("torch"),
                   "budget_s": config["time_budget_s"], "wall_s": round(wall, 1), "epochs": len(epochs),
                   "init": bool(first.get("init")), **{k: round(v, 4) for k, v in metrics.items() if k in HEADLINES and isinstance(v, (int, float))}}
            if code != 0:
                row["error"] = (next((e.get("error") for e in events if e.get("event") == "failed"), None) or stderr.strip().splitlines()[-1:] or ["?"])
            rows.append(row)
            print(json.dumps(row), flush=True)
            onnx = os.path.join(run_dir, "weights", "best.onnx")
            if run["name"] == runs[0]["name"] and os.path.exists(onnx) and os.environ.get("OUT"):
                shutil.copy(onnx, os.path.join(out, "%s.onnx" % run["name"]))
    json.dump(rows, open(os.path.join(out, "summary.json"), "w", encoding="utf-8"), indent=1)
    keys = list(dict.fromkeys(k for r in rows for k in r if k != "error"))
    print("\n" + " | ".join(keys))
    for r in rows:
        print(" | ".join(str(r.get(k, "")) for k in keys))


if __name__ == "__main__":
    main()
