"""
`python3 -m versa_trainer.evaluate --input eval.json`: Versa's evaluation of predictions made elsewhere (the ONNX model
through auto-annotate), with the same metric code the trainers use. Input:
{"task": "detect", "class_names": [...], "max_dets": 100, "analysis": false,
 "images": [{"id": 1, "gt": [[cls, x, y, w, h], ...], "pred": [[cls, x, y, w, h, score], ...]}]}
or {"task": "classify", "class_names": [...], "labels": [...], "scores": [[...], ...]}
or {"task": "semantic", "class_names": [...], "truth": [class maps], "pred": [class maps]} (maps are lists of rows;
0 background, class i at i + 1, 255 in the truth left out). Prints one JSON object.
"""
import json
import os
import sys

from .metrics import classification_metrics, detection_metrics, pixel_confusion, semantic_metrics


def main(argv):
    if len(argv) != 3 or argv[1] != "--input":
        raise SystemExit("usage: python3 -m versa_trainer.evaluate --input eval.json")
    with open(argv[2], "r", encoding="utf-8") as handle:
        spec = json.load(handle)
    names = spec["class_names"]
    if spec.get("task", "detect") == "classify":
        out = classification_metrics(spec["labels"], spec["scores"], names)
    elif spec["task"] == "semantic":
        confusion = None
        for truth, pred in zip(spec["truth"], spec["pred"]):
            confusion = pixel_confusion(truth, pred, len(names) + 1, confusion)
        out = semantic_metrics(confusion, names)
    else:
        gt = {}
        pred = {}
        for image in spec["images"]:
            gt[image["id"]] = [(int(g[0]), [float(v) for v in g[1:5]]) for g in image.get("gt", [])]
            pred[image["id"]] = [(int(p[0]), [float(v) for v in p[1:5]], float(p[5])) for p in image.get("pred", [])]
        out = detection_metrics(gt, pred, names, max_dets=int(spec.get("max_dets", 100)), analysis=bool(spec.get("analysis")))
    sys.stdout.write(json.dumps(out) + "\n")


ANALYSIS_FILE = "evaluation.json"


def write_analysis(out_dir, names, splits):
    """
    Writes a detector's evaluation per split into the run folder (`evaluation.json`, read by Versa for the experiment
    page and its error browser) and returns its name. `splits`: {split: (dataset entries, detection_metrics(...,
    analysis=True)) or None}; images are keyed by their file in the materialised version.
    """
    out = {"class_names": names, "splits": {}}
    for split, pair in splits.items():
        if pair is None:
            continue
        entries, result = pair
        out["splits"][split] = {
            "per_class": result["per_class"],
            "confusion": {"labels": list(names) + ["background"], "matrix": result["confusion"]},
            "images": [dict(result["images"][i], file=entries[i]["file"]) for i in range(len(entries))],
        }
    with open(os.path.join(out_dir, ANALYSIS_FILE), "w", encoding="utf-8") as handle:
        json.dump(out, handle)
    return ANALYSIS_FILE


if __name__ == "__main__":
    main(sys.argv)
