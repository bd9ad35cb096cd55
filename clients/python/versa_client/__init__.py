"""Versa API client for scripts and notebooks (Python 3.8+, standard library only).

    from versa_client import Versa
    versa = Versa.login("http://127.0.0.1:8000", "me@example.com", "password")
    project = versa.create_project("cars", "object_detection")
    versa.upload_folder(project["id"], "photos/")
    version = versa.create_version(project["id"], "v1")          # waits until its images are generated
    export = versa.export(project["id"], "yolo_ultralytics", version_id=version["id"])
    versa.download(export, "cars-v1.zip")

Every method answers the API's JSON (dicts and lists, as documented at /docs); an error answer raises VersaError
with its status and `detail`.
"""

import json
import mimetypes
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

__all__ = ["Versa", "VersaError", "IMAGE_EXTENSIONS", "print_progress"]
__version__ = "0.1.0"

IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".gif", ".avif", ".bmp"}


class VersaError(Exception):
    """An answer with a 4xx/5xx status. `detail` is the API's `detail` (a string, or a list of {loc, msg, type})."""

    def __init__(self, status, detail, body=None):
        self.status = status
        self.detail = detail
        self.body = body
        super().__init__("HTTP %s: %s" % (status, json.dumps(detail) if not isinstance(detail, str) else detail))


def _multipart(fields, files):
    """Encodes text fields and files ((field, filename, bytes, content_type) tuples) as multipart/form-data."""
    boundary = "versa-" + uuid.uuid4().hex
    chunks = []
    for name, value in fields.items():
        if value is None:
            continue
        chunks.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, name, value)).encode("utf-8"))
    for field, filename, data, content_type in files:
        safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        head = "--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n" % (boundary, field, safe, content_type)
        chunks.extend([head.encode("utf-8"), data, b"\r\n"])
    chunks.append(("--%s--\r\n" % boundary).encode("utf-8"))
    return b"".join(chunks), "multipart/form-data; boundary=" + boundary


class Versa:
    """A session with one Versa server, authenticated with a bearer token (a login token or an API token)."""

    def __init__(self, base_url, token=None, timeout=120):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # ---- plumbing -------------------------------------------------------------------------------------------------
    def request(self, method, path, body=None, data=None, content_type=None, raw=False):
        """Sends one request; `body` is sent as JSON, `data` as is. Answers the parsed JSON (or bytes with raw=True)."""
        url = path if path.startswith("http") else self.base_url + path
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                payload = res.read()
                if raw:
                    return payload
                return json.loads(payload.decode("utf-8")) if payload else None
        except urllib.error.HTTPError as error:
            payload = error.read()
            try:
                parsed = json.loads(payload.decode("utf-8"))
            except ValueError:
                parsed = {"detail": payload.decode("utf-8", "replace")}
            detail = parsed.get("detail", parsed) if isinstance(parsed, dict) else parsed
            raise VersaError(error.code, detail, parsed) from None

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, body=None):
        return self.request("POST", path, body=body if body is not None else {})

    # ---- accounts -------------------------------------------------------------------------------------------------
    @classmethod
    def register(cls, base_url, email, password, display_name=None):
        """Creates an account (the first one on an instance becomes its admin)."""
        client = cls(base_url)
        body = {"email": email, "password": password}
        if display_name:
            body["display_name"] = display_name
        return client.post("/api/auth/register", body)

    @classmethod
    def login(cls, base_url, email, password, timeout=120):
        """Logs in and answers a client carrying the session's bearer token."""
        client = cls(base_url, timeout=timeout)
        client.token = client.post("/api/auth/login", {"email": email, "password": password})["token"]
        return client

    def create_token(self, name, expires_in_days=None):
        """An API token for scripts (the secret is in the answer's `token`, shown once)."""
        body = {"name": name}
        if expires_in_days is not None:
            body["expires_in_days"] = expires_in_days
        return self.post("/api/auth/tokens", body)

    def me(self):
        return self.get("/api/auth/me")

    # ---- projects and images ----------------------------------------------------------------------------------------
    def projects(self):
        return self.get("/api/projects")

    def project(self, project_id):
        return self.get("/api/projects/%d" % project_id)

    def create_project(self, name, project_type="object_detection", description=""):
        return self.post("/api/projects", {"name": name, "project_type": project_type, "description": description})

    def classes(self, project_id):
        return self.get("/api/projects/%d/classes" % project_id)

    def create_class(self, project_id, name, color=None):
        body = {"name": name}
        if color:
            body["color"] = color
        return self.post("/api/projects/%d/classes" % project_id, body)

    def upload_images(self, project_id, paths):
        """Uploads image files in one request; answers {images, results, created, duplicates, rejected}."""
        files = []
        for path in paths:
            with open(path, "rb") as handle:
                files.append(("files", os.path.basename(path), handle.read(), mimetypes.guess_type(path)[0] or "application/octet-stream"))
        data, content_type = _multipart({}, files)
        return self.request("POST", "/api/projects/%d/images" % project_id, data=data, content_type=content_type)

    def upload_folder(self, project_id, folder, batch_size=16, progress=None):
        """Uploads every image under `folder` (recursively), `batch_size` files a request. `progress(done, total)` is
        called after each batch. Answers the totals {created, duplicates, rejected, results}."""
        paths = sorted(
            os.path.join(root, name)
            for root, _dirs, names in os.walk(folder)
            for name in names
            if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS
        )
        totals = {"created": 0, "duplicates": 0, "rejected": 0, "results": []}
        for start in range(0, len(paths), batch_size):
            try:
                answer = self.upload_images(project_id, paths[start:start + batch_size])
            except VersaError as error:
                # A batch whose every file was refused answers that refusal's status with the per-file report.
                if not isinstance(error.body, dict) or "results" not in error.body:
                    raise
                answer = error.body
            for key in ("created", "duplicates", "rejected"):
                totals[key] += answer.get(key, 0)
            totals["results"].extend(answer.get("results", []))
            if progress:
                progress(min(start + batch_size, len(paths)), len(paths))
        return totals

    def images(self, project_id, limit=100, offset=0):
        return self.get("/api/projects/%d/images?limit=%d&offset=%d" % (project_id, limit, offset))

    def import_archive(self, path, name=None, project_type=None, format=None):
        """Imports a dataset zip (COCO, YOLO, VOC, CVAT, Datumaro, LabelMe, Label Studio, … see `format`) as a new
        project; answers the project."""
        with open(path, "rb") as handle:
            data, content_type = _multipart(
                {"name": name, "project_type": project_type, "format": format},
                [("file", os.path.basename(path), handle.read(), "application/zip")],
            )
        return self.request("POST", "/api/projects/import", data=data, content_type=content_type)

    # ---- splits, versions, jobs -----------------------------------------------------------------------------------
    def split(self, project_id, train=70, valid=20, test=10, strategy="random", seed=None):
        query = {"train": train, "valid": valid, "test": test, "strategy": strategy}
        if seed is not None:
            query["seed"] = seed
        return self.post("/api/projects/%d/splits?%s" % (project_id, urllib.parse.urlencode(query)))

    def create_version(self, project_id, name, split_config=None, preprocessing_config=None, augmentation_config=None,
                       seed=None, notes="", wait=True, poll=0.5, timeout=3600):
        """Freezes the project as a version; with wait=True returns once its images are generated (status ready)."""
        body = {"name": name, "notes": notes}
        for key, value in (("split_config", split_config), ("preprocessing_config", preprocessing_config),
                           ("augmentation_config", augmentation_config), ("seed", seed)):
            if value is not None:
                body[key] = value
        version = self.post("/api/projects/%d/versions" % project_id, body)
        if not wait:
            return version
        deadline = time.time() + timeout
        while version["status"] not in ("ready", "failed"):
            if time.time() > deadline:
                raise TimeoutError("version %s still %s" % (version["id"], version["status"]))
            time.sleep(poll)
            version = self.get("/api/projects/%d/versions/%d" % (project_id, version["id"]))
        if version["status"] == "failed":
            raise VersaError(500, "version %s failed to generate" % version["id"], version)
        return version

    def versions(self, project_id):
        return self.get("/api/projects/%d/versions" % project_id)

    def job(self, job_id):
        return self.get("/api/jobs/%d" % job_id)

    def wait_job(self, job_id, poll=1.0, timeout=None, progress=None):
        """Polls a job until it ends; `progress(job)` is called on each poll. Answers the final job."""
        deadline = None if timeout is None else time.time() + timeout
        while True:
            job = self.job(job_id)
            if progress:
                progress(job)
            if job["status"] not in ("queued", "running"):
                return job
            if deadline is not None and time.time() > deadline:
                raise TimeoutError("job %d still %s" % (job_id, job["status"]))
            time.sleep(poll)

    def cancel_job(self, job_id):
        return self.post("/api/jobs/%d/cancel" % job_id)

    # ---- export -----------------------------------------------------------------------------------------------------
    def export(self, project_id, format, version_id=None, include_unannotated=True):
        """Writes an export on the server; answers {filename, url, format, size_bytes, image_count, …}."""
        return self.post("/api/projects/%d/export" % project_id,
                         {"format": format, "version_id": version_id, "include_unannotated": include_unannotated})

    def download(self, export, destination, chunk_size=1 << 20, progress=None):
        """Streams an export (its answer, its url, or its filename) to `destination`; answers the path."""
        url = export["url"] if isinstance(export, dict) else export
        if not url.startswith("/") and not url.startswith("http"):
            url = "/api/exports/" + urllib.parse.quote(url)
        req = urllib.request.Request(self.base_url + url if url.startswith("/") else url,
                                     headers={"Authorization": "Bearer " + self.token} if self.token else {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res, open(destination, "wb") as out:
                total = int(res.headers.get("Content-Length") or 0)
                done = 0
                while True:
                    chunk = res.read(chunk_size)
                    if not chunk:
                        break
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
        except urllib.error.HTTPError as error:
            raise VersaError(error.code, error.read().decode("utf-8", "replace")) from None
        return destination

    # ---- training (routes of the training module; see /docs) ----------------------------------------------------------
    def adapters(self):
        return self.get("/api/training/adapters")

    def train(self, project_id, version_id, model=None, epochs=None, imgsz=None, batch=None, device=None,
              adapter=None, name=None, seed=None, require_ready=None, min_readiness_score=None):
        """Starts training on a ready version; answers the training job (TrainJobOut)."""
        body = {"version_id": version_id}
        for key, value in (("model", model), ("epochs", epochs), ("imgsz", imgsz), ("batch", batch), ("device", device),
                           ("adapter", adapter), ("name", name), ("seed", seed), ("require_ready", require_ready),
                           ("min_readiness_score", min_readiness_score)):
            if value is not None:
                body[key] = value
        return self.post("/api/projects/%d/train" % project_id, body)

    def training_job(self, job_id):
        return self.get("/api/train/jobs/%d" % job_id)

    def follow_training(self, job_id, poll=2.0, progress=None):
        """Polls a training job until it ends (`progress(job)` on each poll: epoch, epochs, metrics, eta_seconds)."""
        while True:
            job = self.training_job(job_id)
            if progress:
                progress(job)
            if job["status"] not in ("queued", "running"):
                return job
            time.sleep(poll)

    def experiments(self, project_id):
        return self.get("/api/projects/%d/experiments" % project_id)

    def models(self, project_id):
        return self.get("/api/projects/%d/models" % project_id)


def print_progress(done, total, label="", stream=sys.stderr):
    """A minimal progress bar for `progress=` callbacks in terminals and notebooks."""
    width = 30
    filled = int(width * done / total) if total else width
    stream.write("\r%s [%s%s] %d/%d" % (label, "#" * filled, "." * (width - filled), done, total))
    if total and done >= total:
        stream.write("\n")
    stream.flush()
