"""
tabular: scikit-learn histogram gradient boosting on a prepared folder (train.csv, valid.csv, test.csv with a header
row, missing values empty, and schema.json {target, task, columns: {col: type}, classes?}). Exports the fitted model
with its column encoding as a pickle (`model.pkl`, read only by Versa's own code from its own storage).
Metrics: accuracy and macro F1 (classification) or RMSE and R² (regression).
"""
import csv
import json
import math
import os
import pickle
from datetime import datetime

import numpy as np

from .common import Clock, emit, environment, load_config, run_params, seed_everything
from .metrics import classification_metrics, f1_macro
from .protocol import finish


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, "r", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


class Encoder(object):
    """Turns rows into a float matrix: numbers as they are, booleans 0/1, dates as days, categories as codes; text is dropped."""

    def __init__(self, columns, target):
        self.columns = [(c, t) for c, t in columns.items() if c != target and t != "text"]
        self.categories = {}

    def fit(self, rows):
        for column, kind in self.columns:
            if kind == "category":
                values = sorted({r.get(column, "") for r in rows if r.get(column, "") != ""})
                self.categories[column] = {v: i for i, v in enumerate(values)}
        return self

    def categorical_mask(self):
        return [kind == "category" for _, kind in self.columns]

    def transform(self, rows):
        out = np.full((len(rows), len(self.columns)), np.nan, dtype=np.float64)
        for i, row in enumerate(rows):
            for j, (column, kind) in enumerate(self.columns):
                value = (row.get(column) or "").strip()
                if value == "":
                    continue
                try:
                    if kind in ("integer", "number"):
                        out[i, j] = float(value)
                    elif kind == "boolean":
                        out[i, j] = 1.0 if value.lower() in ("1", "true", "yes", "y", "t") else 0.0
                    elif kind == "date":
                        out[i, j] = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() / 86400.0
                    elif kind == "category":
                        out[i, j] = self.categories.get(column, {}).get(value, np.nan)
                except ValueError:
                    pass
        return out


def check_labels(splits, target, index):
    """
    Every labelled row must name a class of schema.json: a row with another label is a mismatch between the data and
    its schema (e.g. a label rewritten on the way), and leaving it out would report metrics on what remains.
    """
    problems = []
    for split, rows in splits.items():
        unknown = [r[target].strip() for r in rows if r[target].strip() not in index]
        if unknown:
            names = sorted(set(unknown))
            shown = ", ".join(repr(n) for n in names[:10]) + (", ..." if len(names) > 10 else "")
            problems.append("%s: %d rows (%s)" % (split, len(unknown), shown))
    if problems:
        raise SystemExit("labels that schema.json's classes do not name: %s; classes are %s" % ("; ".join(problems), ", ".join(repr(c) for c in index)))


def main(argv):
    config = load_config(argv)
    params = run_params("tabular", config)
    seed_everything(int(params["seed"]))
    import sklearn
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    data_dir = config["data_dir"]
    with open(os.path.join(data_dir, "schema.json"), "r", encoding="utf-8") as handle:
        schema = json.load(handle)
    target, task = schema["target"], schema["task"]
    emit("started", adapter="tabular", params=params, env=dict(environment(), sklearn=sklearn.__version__))
    clock = Clock()
    splits = {k: [r for r in read_csv(os.path.join(data_dir, k + ".csv")) if (r.get(target) or "").strip() != ""] for k in ("train", "valid", "test")}
    if not splits["train"]:
        raise SystemExit("train.csv has no rows with a target value")
    encoder = Encoder(schema["columns"], target).fit(splits["train"])
    classes = schema.get("classes") or sorted({r[target].strip() for r in splits["train"]})
    index = {c: i for i, c in enumerate(classes)}
    if task == "classification":
        check_labels(splits, target, index)

    def xy(rows):
        x = encoder.transform(rows)
        if task == "classification":
            return x, np.array([index[r[target].strip()] for r in rows], dtype=np.int64)
        return x, np.array([float(r[target]) for r in rows], dtype=np.float64)

    data = {k: xy(v) for k, v in splits.items()}
    common = dict(max_iter=int(params["epochs"]), learning_rate=float(params["lr"]), max_depth=params["max_depth"], random_state=int(params["seed"]),
                  categorical_features=encoder.categorical_mask() if any(encoder.categorical_mask()) else None, early_stopping=False)
    model = HistGradientBoostingClassifier(**common) if task == "classification" else HistGradientBoostingRegressor(**common)
    emit("progress", progress=0.1, message="fitting %d rows" % len(data["train"][1]))
    model.fit(*data["train"])

    def evaluate(x, y):
        if len(y) == 0:
            return None
        p = model.predict(x)
        if task == "classification":
            return {"accuracy": float(np.mean(p == y)), "f1": f1_macro(y, p, len(classes))}
        rmse = math.sqrt(float(np.mean((p - y) ** 2)))
        var = float(np.var(y))
        return {"rmse": rmse, "r2": 1 - float(np.mean((p - y) ** 2)) / var if var > 0 else 0.0}

    history = []
    results = {k: evaluate(*data[k]) for k in ("train", "valid", "test")}
    headline_split = "valid" if results["valid"] else "train"
    headline = results[headline_split]
    detail = {"per_class": [], "confusion": None}
    if task == "classification":
        # Per-class figures and the confusion matrix of the headline split, from the shared implementation.
        x, y = data[headline_split]
        detail = classification_metrics(y, np.eye(len(classes))[model.predict(x)], classes)
    row = dict({"epoch": 1}, **headline)
    history.append(row)
    emit("epoch", epochs=1, progress=0.9, eta_seconds=0, **row)
    out_dir = config["out_dir"]
    os.makedirs(os.path.join(out_dir, "weights"), exist_ok=True)
    with open(os.path.join(out_dir, "weights", "model.pkl"), "wb") as handle:
        pickle.dump({"model": model, "encoder": encoder, "classes": classes, "schema": schema}, handle)
    metrics = dict(headline)
    if results["test"]:
        metrics.update({"test_" + k: v for k, v in results["test"].items()})
    finish({"task": "tabular-" + task, "metrics": metrics, "per_class": detail["per_class"], "confusion": detail["confusion"], "best_epoch": 1,
            "history": history, "class_names": classes if task == "classification" else []},
           {"model": "weights/model.pkl"}, params, clock.elapsed(), dict(environment(), sklearn=sklearn.__version__))
