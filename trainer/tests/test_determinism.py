"""A PyTorch trainer run directly, as Versa runs it: its event stream, and the same numbers from the same seed on CPU."""
import pytest

from conftest import run_trainer

pytest.importorskip("torch")


def detect(shapes, out, seed):
    config = {"data_dir": shapes, "out_dir": out, "model": "versa-detect-n", "epochs": 2, "imgsz": 64, "batch": 4, "seed": seed, "device": "cpu"}
    code, events, stderr = run_trainer("versa_detect.py", config, shapes)
    assert code == 0, stderr
    return events


def test_detector_stream_and_seeded_determinism(shapes, tmp_path):
    first = detect(shapes, str(tmp_path / "a"), 5)
    second = detect(shapes, str(tmp_path / "b"), 5)
    kinds = [e["event"] for e in first if e["event"] != "progress"]
    assert kinds == ["started", "epoch", "epoch", "metrics"] + ["artifact"] * 5 + ["finished"]
    assert first[0]["env"]["device"] == "cpu"
    assert {e["name"]: e["path"] for e in first if e["event"] == "artifact"} == {
        "onnx": "weights/best.onnx", "pt": "weights/best.pt", "results": "results.csv", "args": "args.yaml", "evaluation": "evaluation.json"}
    epochs = lambda events: [{k: v for k, v in e.items() if k not in ("time", "eta_seconds")} for e in events if e["event"] == "epoch"]
    assert [e["epoch"] for e in epochs(first)] == [1, 2]
    assert epochs(second) == epochs(first)
    metrics = lambda events: next(e for e in events if e["event"] == "metrics")
    assert metrics(second) == metrics(first)
