"""Shared test helpers: the trainer folder on sys.path, tiny datasets drawn with Pillow, and a direct run of an entry point."""
import json
import os
import subprocess
import sys

import pytest

TRAINER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TRAINER_DIR)

NAMES = ["square", "bar"]


def draw_dataset(folder, counts, size=(96, 80), seed=0):
    """A detection and classification folder as Versa materialises it: each image one dark square or one dark bar on
    light noise (class 0 or 1, alternating), with its box and its label."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    splits = {}
    for split, count in counts.items():
        os.makedirs(os.path.join(folder, "images", split), exist_ok=True)
        splits[split] = []
        for i in range(count):
            c = i % 2
            pixels = rng.integers(170, 255, size=(size[1], size[0], 3), dtype=np.uint8)
            image = Image.fromarray(pixels)
            w, h = (24, 24) if c == 0 else (40, 12)
            x, y = int(rng.integers(0, size[0] - w)), int(rng.integers(0, size[1] - h))
            ImageDraw.Draw(image).rectangle([x, y, x + w - 1, y + h - 1], fill=(30, 30, 30))
            name = "images/%s/%d.png" % (split, i)
            image.save(os.path.join(folder, name))
            splits[split].append({"file": name, "width": size[0], "height": size[1], "boxes": [[c, x, y, w, h]], "label": c})
    with open(os.path.join(folder, "dataset.json"), "w", encoding="utf-8") as handle:
        json.dump({"task": "detect", "names": NAMES, "splits": splits}, handle)
    return folder


def run_trainer(script, config, folder):
    """Runs `python <script> --config <folder>/run.json` as Versa does; returns (exit status, events in order)."""
    path = os.path.join(folder, "run-%s.json" % os.path.basename(config["out_dir"]))
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", VERSA_TRAIN_THREADS=os.environ.get("VERSA_TRAIN_THREADS", "2"))
    done = subprocess.run([sys.executable, os.path.join(TRAINER_DIR, script), "--config", path], capture_output=True, text=True, env=env, timeout=600)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stderr


@pytest.fixture
def shapes(tmp_path):
    return draw_dataset(str(tmp_path / "data"), {"train": 8, "valid": 4, "test": 0})
