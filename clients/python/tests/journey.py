"""A notebook user's journey through a live server with the client, printing one JSON line of what it saw (the
driving test, test/clients/python-journey.test.ts, asserts it). Exits non-zero on any failure.

    python3 clients/python/tests/journey.py '{"base": ..., "work": ..., ...}'
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from versa_client import (  # noqa: E402
    Annotation, Image, ImportReport, NotFound, Project, TrainingRefused, UploadReport, ValidationError, Versa, Version,
)


def main(config):
    base, work = config["base"], config["work"]
    seen = {}
    Versa.register(base, "journey@example.com", "correct horse battery", display_name="Journey")
    versa = Versa.login(base, "journey@example.com", "correct horse battery")
    token = versa.create_token("journey").token
    versa = Versa(base, token=token)
    seen["me"] = versa.me().email

    # A labelled YOLO folder: images and labels land together, classes are created from data.yaml.
    project = versa.create_project("vehicles", "object_detection")
    assert isinstance(project, Project)
    report = versa.upload_folder(project.id, config["yolo_folder"])
    assert isinstance(report, ImportReport), type(report)
    seen["labelled_classes"] = sorted(report.classes_created)
    counted = versa.project(project.id)
    seen["labelled"] = {"images": counted.image_count, "annotated": counted.annotated_image_count,
                        "annotations": counted.annotation_count}
    again = versa.upload_folder(project.id, config["yolo_folder"])
    seen["labelled_again_images"] = versa.project(project.id).image_count
    seen["labelled_again_annotations"] = versa.project(project.id).annotation_count
    assert isinstance(again, ImportReport)

    # Plain images (no labels), streamed in batches, with a progress callback; then annotate by hand.
    fruit = versa.create_project("fruit boxes", "object_detection")
    ticks = []
    uploaded = versa.upload_folder(fruit.id, config["photos_folder"], batch_size=4, progress=lambda d, t: ticks.append([d, t]))
    assert isinstance(uploaded, UploadReport)
    seen["plain"] = {"created": uploaded.created, "ticks": ticks, "ids": len(uploaded.image_ids())}
    seen["plain_again_duplicates"] = versa.upload_folder(fruit.id, config["photos_folder"]).duplicates
    classes = versa.ensure_classes(fruit.id, ["apple", "banana"])
    classes_again = versa.ensure_classes(fruit.id, ["apple", "banana", "orange"])
    classes = classes_again
    seen["classes"] = [c.name for c in versa.classes(fruit.id)]
    assert versa.ensure_classes(fruit.id, ["apple"])["apple"].id == classes["apple"].id
    images = list(versa.images(fruit.id))
    assert all(isinstance(i, Image) for i in images)
    first = images[0]
    box = versa.add_box(first.id, classes["apple"].id, 2, 3, 20, 10)
    assert isinstance(box, Annotation) and box.geometry["width"] == 20
    versa.add_polygon(first.id, classes["banana"], [[1, 1], [30, 2], [15, 25]])
    for n in range(5):
        versa.add_box(first.id, classes["orange"], 1 + n, 1, 8, 8)
    for image in images[1:]:
        versa.add_box(image, classes["apple"], 4, 4, 16, 16)
    listed = versa.annotations(first.id, page_size=2)
    seen["annotations_first_image"] = len(list(listed))
    seen["annotations_total_header"] = listed.total
    moved = versa.update_annotation(box, classes["banana"], "bbox", {"x": 3, "y": 3, "width": 12, "height": 12})
    seen["updated_class_is_banana"] = moved.class_id == classes["banana"].id
    versa.delete_annotation(moved)
    seen["annotated_images"] = sum(1 for _ in versa.images(fruit.id, annotated=True))
    seen["revisions_first_image"] = sorted(r["action"] for r in versa.image_revisions(first.id, page_size=3))

    # Pagination past 1,000: the test put the rows in; the iterator sees every one exactly once, in order.
    if config.get("paging_project"):
        pager = Versa(base, token=config["paging_token"])
        ids = [i.id for i in pager.images(config["paging_project"], page_size=400)]
        seen["paged"] = {"count": len(ids), "unique": len(set(ids)), "sorted": ids == sorted(ids),
                         "total": pager.images(config["paging_project"]).total}

    # Version, wait with a timeout, download in a named format and unpack.
    versa.split(fruit.id, 50, 50, 0, seed=1)
    version = versa.create_version(fruit.id, "v1", seed=3, timeout=300)
    assert isinstance(version, Version)
    seen["version"] = {"status": version.status, "number": version.number, "job": versa.wait_job(version.job_id, timeout=60).status}
    seen["version_images"] = sum(1 for _ in versa.version_images(version, page_size=2))
    folder = versa.download_version(fruit.id, version, "yolo_ultralytics", os.path.join(work, "fruit-v1"))
    files = sorted(os.path.relpath(os.path.join(r, n), folder) for r, _d, names in os.walk(folder) for n in names)
    seen["unpacked"] = {"data_yaml": "data.yaml" in files, "images": sum(1 for f in files if f.startswith("images" + os.sep)),
                        "zip_left": any(f.endswith(".zip") for f in files)}
    zipped = versa.download_version(fruit.id, version.id, "coco", os.path.join(work, "fruit-v1.json"), unpack=False)
    with open(zipped) as handle:
        seen["coco_annotations"] = len(json.load(handle)["annotations"])

    # Training: a model the server does not have is a plain 422; a good request on this server is refused cleanly
    # (readiness gate or no trainer runtime), never started (training is slow; the training tests cover it).
    try:
        versa.train(fruit.id, version, model="yolov8n")
    except TrainingRefused:
        seen["wrong_model"] = "refused"
    except ValidationError as error:
        seen["wrong_model"] = [item["loc"] for item in error.detail]
    adapters = {a.name: a for a in versa.adapters()}
    try:
        run = versa.train(fruit.id, version, model=adapters["versa-detect"].models[0], epochs=1)
        seen["train"] = "started %s" % run.status
    except TrainingRefused as refusal:
        seen["train"] = "refused %d" % refusal.status

    # Run a model on images: upload an ONNX detector, predict on a local file (uploaded first) and on an id.
    if config.get("model_path"):
        model = versa.upload_model(fruit.id, config["model_path"], name="colours", task="detect", class_names=["red", "green"])
        seen["models"] = [m.name for m in versa.models(fruit.id)]
        found = versa.predict(fruit.id, model, [config["red_image"]], confidence=0.5)
        seen["predicted"] = sorted((a.annotation_type, a.get("status"), round(a.confidence, 2)) for a in found.annotations())
        seen["predicted_classes_created"] = found.classes_created

    try:
        versa.project(999999)
    except NotFound as error:
        seen["missing"] = error.status
    try:
        versa.export(fruit.id, "no-such-format")
    except ValidationError as error:
        seen["bad_format_loc"] = error.detail[0]["loc"]
    print(json.dumps(seen))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
