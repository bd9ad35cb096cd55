"""Drives a live server through the client: register, log in, upload a folder, split, version, export, download,
import the export again. Prints one JSON line with what it saw; exits non-zero on any failure.

    python3 clients/python/tests/smoke.py BASE_URL IMAGE_FOLDER WORK_DIR
"""
import json
import os
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from versa_client import Versa, VersaError  # noqa: E402


def main(base_url, folder, work):
    Versa.register(base_url, "py@example.com", "correct horse battery")
    versa = Versa.login(base_url, "py@example.com", "correct horse battery")
    seen = {"me": versa.me()["email"]}
    try:
        Versa(base_url).projects()
    except VersaError as error:
        seen["anonymous_status"] = error.status
    project = versa.create_project("from python", "object_detection")
    versa.create_class(project["id"], "fruit")
    ticks = []
    upload = versa.upload_folder(project["id"], folder, batch_size=2, progress=lambda done, total: ticks.append([done, total]))
    again = versa.upload_folder(project["id"], folder)
    seen.update(created=upload["created"], duplicates_second_time=again["duplicates"], progress=ticks)
    versa.split(project["id"], 50, 50, 0, seed=1)
    version = versa.create_version(project["id"], "v1", seed=3)
    seen["version_status"] = version["status"]
    export = versa.export(project["id"], "yolo_ultralytics", version_id=version["id"])
    path = versa.download(export, os.path.join(work, "export.zip"))
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    seen.update(export_images=export["image_count"], has_data_yaml="data.yaml" in names)
    reimported = versa.import_archive(path, name="round trip", format="yolo")
    seen.update(reimported_images=reimported["image_count"], reimported_type=reimported["project_type"])
    try:
        versa.export(project["id"], "no-such-format")
    except VersaError as error:
        seen["bad_export_status"] = error.status
    print(json.dumps(seen))


if __name__ == "__main__":
    main(*sys.argv[1:4])
