"""The protocol's Python side: events are checked against contract.json before they are printed, the parameters'
defaults and models come from it, and a run prints the events in the order the server expects."""
import json
import os

import pytest

from conftest import run_trainer
from versa_trainer import protocol
from versa_trainer.protocol import PROTOCOL, ProtocolError, adapter_defaults, adapter_models, event_line


def test_every_event_carries_the_protocol_version():
    line = json.loads(event_line("progress", progress=0.5, message="loading"))
    assert line == {"event": "progress", "protocol": PROTOCOL, "progress": 0.5, "message": "loading"}


@pytest.mark.parametrize("event, fields, reason", [
    ("epoch", {"epoch": 0, "epochs": 2, "progress": 0.5, "eta_seconds": None}, ">= 1"),
    ("epoch", {"epoch": 1, "epochs": 2, "progress": 0.5, "eta_seconds": None, "note": "text"}, "none of its allowed types"),
    ("epoch", {"epoch": 1, "epochs": 2, "progress": 0.5}, "lacks eta_seconds"),
    ("progress", {"progress": 1.5}, "<= 1"),
    ("metrics", {"task": "detect", "metrics": {"map50": "high"}, "per_class": []}, "none of its allowed types"),
    ("artifact", {"name": "onnx", "path": "../../etc/passwd"}, "must match"),
    ("artifact", {"name": "onnx", "path": "/etc/passwd"}, "must match"),
    ("finished", {"params": {}, "duration_s": 1.0, "env": {}, "surprise": 1}, "no member surprise"),
    ("final", {"metrics": {}}, "unknown event"),
])
def test_an_event_that_breaks_the_protocol_is_not_printed(event, fields, reason):
    with pytest.raises(ProtocolError, match=reason):
        event_line(event, **fields)


def test_numpy_values_and_integral_floats_pass_as_json_numbers():
    import numpy as np

    line = json.loads(event_line("epoch", epoch=np.int64(2), epochs=3.0, progress=np.float32(0.5), eta_seconds=None, loss=np.float64(0.25)))
    assert (line["epoch"], line["epochs"], line["loss"]) == (2, 3.0, 0.25)


def test_defaults_and_models_are_the_servers():
    from versa_trainer import detect, semantic

    assert adapter_defaults("versa-detect") == {"model": "versa-detect-s", "epochs": 30, "imgsz": 320, "batch": 16, "seed": 0, "time_budget_s": None}
    assert adapter_defaults("tabular") == {"model": "hist-gradient-boosting", "epochs": 100, "lr": 0.1, "max_depth": None, "seed": 0}
    # The trainers' model tables (layer widths) build exactly the models the server offers.
    assert sorted(detect.MODELS) == sorted(adapter_models("versa-detect"))
    assert sorted(semantic.MODELS) == sorted(adapter_models("versa-segment"))
    assert set(protocol.EVENTS) == {"started", "progress", "epoch", "metrics", "artifact", "finished", "failed"}


def write_table(folder, valid_label="odd"):
    os.makedirs(folder)
    rows = ["%s,%s" % (i / 40, "odd" if i % 2 else "even") for i in range(40)]
    with open(os.path.join(folder, "train.csv"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(["n,parity"] + rows) + "\n")
    with open(os.path.join(folder, "valid.csv"), "w", encoding="utf-8") as handle:
        handle.write("n,parity\n0.5,%s\n0.25,even\n" % valid_label)
    with open(os.path.join(folder, "schema.json"), "w", encoding="utf-8") as handle:
        json.dump({"target": "parity", "task": "classification", "columns": {"n": "number", "parity": "category"}, "classes": ["odd", "even"]}, handle)
    return folder


def test_a_run_prints_started_epochs_metrics_artifacts_then_finished(tmp_path):
    pytest.importorskip("sklearn")
    data = write_table(str(tmp_path / "table"))
    code, events, stderr = run_trainer("versa_tabular.py", {"data_dir": data, "out_dir": str(tmp_path / "out"), "epochs": 5}, str(tmp_path))
    assert code == 0, stderr
    kinds = [e["event"] for e in events]
    assert kinds == ["started", "progress", "epoch", "metrics", "artifact", "finished"]
    assert all(e["protocol"] == PROTOCOL for e in events)
    for e in events:
        protocol.check(protocol.EVENTS[e["event"]], e)
    assert events[0]["params"] == {"model": "hist-gradient-boosting", "epochs": 5, "lr": 0.1, "max_depth": None, "seed": 0}
    assert events[3]["task"] == "tabular-classification" and set(events[3]["metrics"]) == {"accuracy", "f1"}
    assert (events[4]["name"], events[4]["path"]) == ("model", "weights/model.pkl")
    assert os.path.exists(str(tmp_path / "out" / events[4]["path"]))


def test_a_failing_run_ends_with_failed_and_exit_status_1(tmp_path):
    pytest.importorskip("sklearn")
    data = write_table(str(tmp_path / "table"), valid_label="neither")
    code, events, _ = run_trainer("versa_tabular.py", {"data_dir": data, "out_dir": str(tmp_path / "out")}, str(tmp_path))
    assert code == 1
    assert events[-1]["event"] == "failed" and "neither" in events[-1]["message"]
    assert not any(e["event"] in ("metrics", "finished") for e in events)
