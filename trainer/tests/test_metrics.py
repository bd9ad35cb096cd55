"""The one metric implementation (versa_trainer/metrics.py) against cases worked out by hand (the pycocotools
comparison runs from test/training/metrics.test.ts on recorded fixtures)."""
import pytest

from versa_trainer.metrics import classification_metrics, detection_metrics, semantic_metrics


def test_detection_ap_precision_recall_by_hand():
    # Class a: two objects; detections 0.9 on the first (right), 0.8 on nothing (wrong), 0.7 on the second (right).
    # Ranked: precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1. COCO's 101-point interpolation: precision 1 at recall
    # 0 … 0.50 (51 points), then 2/3 (50 points): AP = (51 + 50 * 2/3) / 101 at every IoU (the boxes are exact).
    # The best F1 is at 0.7: precision 2/3, recall 1, F1 0.8. Class b: one object, no detection: AP 0.
    truth = {1: [(0, [0, 0, 10, 10]), (0, [20, 0, 10, 10]), (1, [0, 30, 10, 10])]}
    predictions = {1: [(0, [0, 0, 10, 10], 0.9), (0, [50, 50, 10, 10], 0.8), (0, [20, 0, 10, 10], 0.7)]}
    out = detection_metrics(truth, predictions, ["a", "b"])
    ap = (51 + 50 * 2 / 3) / 101
    a, b = out["per_class"]
    assert a["ap50"] == pytest.approx(ap)
    assert a["ap50_95"] == pytest.approx(ap)
    assert a["conf_threshold"] == pytest.approx(0.7)
    assert a["precision"] == pytest.approx(2 / 3)
    assert a["recall"] == pytest.approx(1.0)
    assert a["f1"] == pytest.approx(0.8)
    assert b["ap50"] == 0 and b["instances"] == 1
    assert out["map50"] == pytest.approx(ap / 2)


def test_classification_by_hand():
    # Truth 0, 0, 1, 2; predicted 0, 1, 1, 0.
    scores = [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.8, 0.1], [0.5, 0.2, 0.3]]
    out = classification_metrics([0, 0, 1, 2], scores, ["x", "y", "z"])
    assert out["accuracy"] == 0.5
    assert out["top5"] == 1.0, "three classes: the top five hold every class"
    assert out["confusion"] == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]
    x, y, z = out["per_class"]
    assert (x["precision"], x["recall"], x["f1"]) == (0.5, 0.5, 0.5)
    assert (y["precision"], y["recall"]) == (0.5, 1.0) and y["f1"] == pytest.approx(2 / 3)
    assert (z["precision"], z["recall"], z["f1"], z["instances"]) == (0.0, 0.0, 0.0, 1)


def test_semantic_by_hand():
    # Rows truth, columns predicted; 0 is the background: IoU 5 / 8 and 2 / 5, 7 of 10 pixels right.
    out = semantic_metrics([[5, 1], [2, 2]], ["thing"])
    assert out["background_iou"] == pytest.approx(5 / 8)
    assert out["per_class"][0]["iou"] == pytest.approx(2 / 5)
    assert out["miou"] == pytest.approx((5 / 8 + 2 / 5) / 2)
    assert out["miou_fg"] == pytest.approx(2 / 5)
    assert out["pixel_accuracy"] == pytest.approx(0.7)


def test_semantic_augmentation_only_mirrors_and_moves_the_map_with_the_image():
    import numpy as np

    from versa_trainer.semantic import augment

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(16, 8, 8, 3), dtype=np.uint8)
    targets = rng.integers(0, 4, size=(16, 8, 8), dtype=np.uint8)
    out_images, out_targets = augment(np.random.default_rng(1), images, targets)
    mirrored = [not np.array_equal(a, b) for a, b in zip(out_images, images)]
    for i, flipped in enumerate(mirrored):
        source_image, source_target = (images[i][:, ::-1], targets[i][:, ::-1]) if flipped else (images[i], targets[i])
        assert np.array_equal(out_images[i], source_image) and np.array_equal(out_targets[i], source_target)
    assert 0 < sum(mirrored) < 16
