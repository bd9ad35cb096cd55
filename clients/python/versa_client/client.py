"""`Versa`: one authenticated session with a Versa server, with a method for each thing people script."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import zipfile
from typing import Any, Callable, Dict, Generic, Iterable, Iterator, List, Optional, Sequence, Tuple, Type, TypeVar, Union

from .errors import TrainingRefused, ValidationError, VersaError, WaitTimeout
from .models import (
    FINISHED,
    Adapter,
    Annotation,
    Experiment,
    Export,
    Image,
    ImportReport,
    Job,
    Model,
    Predictions,
    Project,
    ProjectClass,
    Record,
    Token,
    TrainingRun,
    UploadReport,
    User,
    Version,
)
from .progress import ProgressArg, Reporter
from .transport import CHUNK, Multipart, Transport, download_to

T = TypeVar("T")
R = TypeVar("R", bound=Record)

#: File extensions `upload_folder` takes as images.
IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".gif", ".avif", ".bmp"}
#: File extensions that make `upload_folder(labels="auto")` import the folder as a labelled dataset.
LABEL_EXTENSIONS = {".txt", ".xml", ".json", ".yaml", ".yml", ".csv"}

DEFAULT_URL = "http://127.0.0.1:8000"


class Paged(Generic[T]):
    """An iterator over a paged list: it fetches `page_size` items a request, following the server's `Link: next`
    (the `after` cursor, fast at any depth), so ``for image in versa.images(project.id)`` sees every image however
    many there are. `total` is the server's `X-Total-Count` (fetched with the first page). Iterate it again to
    fetch again.

    >>> images = versa.images(project.id, split="train")
    >>> print(images.total)
    >>> names = [image.original_name for image in images]
    """

    def __init__(self, transport: Transport, path: str, query: Dict[str, Any], make: Callable[[Dict[str, Any]], T],
                 page_size: int = 500, cursor: str = "after"):
        self._transport = transport
        self._path = path
        self._query = {k: v for k, v in query.items() if v is not None}
        self._make = make
        self._page_size = page_size
        self._cursor = cursor
        self._total: Optional[int] = None

    @property
    def total(self) -> Optional[int]:
        if self._total is None:
            answer = self._transport.send("GET", self._path, query=dict(self._query, limit=1))
            self._total = answer.total
        return self._total

    def __iter__(self) -> Iterator[T]:
        query: Optional[Dict[str, Any]] = dict(self._query, limit=self._page_size)
        path = self._path
        offset = int(self._query.get("offset", 0))
        while path:
            answer = self._transport.send("GET", path, query=query)
            if answer.total is not None:
                self._total = answer.total
            items = answer.json() or []
            for item in items:
                yield self._make(item)
            following = answer.next_url
            if following:
                path, query = following, None
            elif len(items) < self._page_size:
                return
            elif self._cursor == "offset":
                offset += len(items)
                query = dict(self._query, limit=self._page_size, offset=offset)
                path = self._path
            else:
                query = dict(self._query, limit=self._page_size, after=items[-1]["id"])
                path = self._path

    def list(self) -> List[T]:
        """Every item, in a list."""
        return list(self)


def _body(**values: Any) -> Dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _id(record: Union[int, Record, Dict[str, Any]]) -> int:
    """Accepts an id or a record (or the dict of one) wherever an id is asked for."""
    if isinstance(record, int):
        return record
    return int(record["id"])


def _images_under(folder: str, recursive: bool = True) -> List[str]:
    if recursive:
        found = (os.path.join(root, name) for root, _dirs, names in os.walk(folder) for name in names)
    else:
        found = (os.path.join(folder, name) for name in os.listdir(folder))
    return sorted(p for p in found if os.path.splitext(p)[1].lower() in IMAGE_EXTENSIONS and os.path.isfile(p))


def _has_labels(folder: str) -> bool:
    for _root, _dirs, names in os.walk(folder):
        for name in names:
            if os.path.splitext(name)[1].lower() in LABEL_EXTENSIONS and not name.startswith("."):
                return True
    return False


def safe_extract(archive: str, destination: str) -> List[str]:
    """Unpacks a zip into `destination`, refusing entries that would land outside it (``..``, absolute paths).
    Answers the paths written."""
    root = os.path.realpath(destination)
    written = []
    with zipfile.ZipFile(archive) as bundle:
        for entry in bundle.infolist():
            target = os.path.realpath(os.path.join(root, entry.filename))
            if target != root and not target.startswith(root + os.sep):
                raise ValueError("unsafe path in archive: %r" % entry.filename)
            if entry.is_dir():
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with bundle.open(entry) as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out, CHUNK)
            written.append(target)
    return written


class Versa:
    """A session with one Versa server, authenticated with a bearer token (a login token or an API token).

    >>> from versa_client import Versa
    >>> versa = Versa.login("http://127.0.0.1:8000", "me@example.com", "my password")
    >>> # or, unattended: Versa("http://127.0.0.1:8000", token=os.environ["VERSA_TOKEN"])

    `base_url` defaults to the `VERSA_URL` environment variable, then ``http://127.0.0.1:8000``; `token` to
    `VERSA_TOKEN`. `timeout` bounds each request (seconds); 429 and 503 answers are retried `retries` times, after the
    server's `Retry-After`. Errors raise `VersaError` subclasses (`NotFound`, `ValidationError`, `Conflict`, …).
    """

    def __init__(self, base_url: Optional[str] = None, token: Optional[str] = None, timeout: float = 120,
                 retries: int = 5, backoff: float = 0.5, sleep: Callable[[float], None] = time.sleep):
        base_url = base_url or os.environ.get("VERSA_URL") or DEFAULT_URL
        token = token if token is not None else os.environ.get("VERSA_TOKEN")
        self.http = Transport(base_url, token, timeout=timeout, retries=retries, backoff=backoff, sleep=sleep)

    @property
    def base_url(self) -> str:
        return self.http.base_url

    @property
    def token(self) -> Optional[str]:
        return self.http.token

    @token.setter
    def token(self, value: Optional[str]) -> None:
        self.http.token = value

    def __repr__(self) -> str:
        return "Versa(%r)" % self.base_url

    # ---- plumbing ------------------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, Any]] = None) -> Any:
        """Any API call: `body` is sent as JSON; answers the parsed JSON. For routes this class has no method for.

        >>> versa.request("GET", "/api/stats")
        """
        return self.http.json(method, path, json_body=body, query=query)

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, body=body if body is not None else {})

    def _paged(self, path: str, make: Callable[[Dict[str, Any]], T], page_size: int, cursor: str = "after",
               **query: Any) -> Paged[T]:
        return Paged(self.http, path, query, make, page_size=page_size, cursor=cursor)

    # ---- accounts ------------------------------------------------------------------------------------------------
    @classmethod
    def register(cls, base_url: Optional[str], email: str, password: str, display_name: Optional[str] = None) -> User:
        """Creates an account (the first one on a new server becomes its admin). Log in afterwards.

        >>> Versa.register("http://127.0.0.1:8000", "me@example.com", "a long password")
        """
        client = cls(base_url, token="")
        return User.from_api(client.post("/api/auth/register", _body(email=email, password=password, display_name=display_name)))

    @classmethod
    def login(cls, base_url: Optional[str], email: str, password: Optional[str] = None, **options: Any) -> "Versa":
        """Logs in and answers a client carrying the session's token. Without `password`, asks for it (getpass).

        >>> versa = Versa.login("http://127.0.0.1:8000", "me@example.com", "a long password")
        """
        if password is None:
            import getpass

            password = getpass.getpass("Versa password for %s: " % email)
        client = cls(base_url, token="", **options)
        client.token = client.post("/api/auth/login", {"email": email, "password": password})["token"]
        return client

    def me(self) -> User:
        return User.from_api(self.get("/api/auth/me"))

    def create_token(self, name: str, expires_in_days: Optional[int] = None) -> Token:
        """An API token for unattended scripts; its secret (`token`) is only in this answer.

        >>> secret = versa.create_token("nightly import").token
        >>> Versa("http://127.0.0.1:8000", token=secret).me()
        """
        return Token.from_api(self.post("/api/auth/tokens", _body(name=name, expires_in_days=expires_in_days)))

    def logout(self) -> None:
        self.http.send("POST", "/api/auth/logout", json_body={})
        self.token = None

    # ---- projects ------------------------------------------------------------------------------------------------
    def projects(self) -> List[Project]:
        """Every project you can see, newest first."""
        return [Project.from_api(p) for p in self.get("/api/projects")]

    def project(self, project: Union[int, Project]) -> Project:
        return Project.from_api(self.get("/api/projects/%d" % _id(project)))

    def create_project(self, name: str, project_type: str = "object_detection", description: str = "") -> Project:
        """Creates a project: `project_type` is object_detection, classification, instance_segmentation, …

        >>> project = versa.create_project("street cars", "object_detection")
        """
        return Project.from_api(self.post("/api/projects", {"name": name, "project_type": project_type, "description": description}))

    def delete_project(self, project: Union[int, Project]) -> None:
        self.http.send("DELETE", "/api/projects/%d" % _id(project))

    # ---- classes -------------------------------------------------------------------------------------------------
    def classes(self, project: Union[int, Project]) -> List[ProjectClass]:
        """A project's classes in creation order."""
        return [ProjectClass.from_api(c) for c in self.get("/api/projects/%d/classes" % _id(project))]

    def create_class(self, project: Union[int, Project], name: str, color: Optional[str] = None,
                     attributes: Optional[List[Dict[str, Any]]] = None, skeleton: Optional[Dict[str, Any]] = None) -> ProjectClass:
        """Adds a class; `color` is ``#rrggbb`` (picked from a palette when omitted).

        >>> car = versa.create_class(project.id, "car", color="#ff0000")
        >>> person = versa.create_class(project.id, "person", attributes=[{"name": "occluded", "type": "checkbox"}])
        """
        body = _body(name=name, color=color, attributes=attributes, skeleton=skeleton)
        return ProjectClass.from_api(self.post("/api/projects/%d/classes" % _id(project), body))

    def ensure_classes(self, project: Union[int, Project], names: Iterable[str]) -> Dict[str, ProjectClass]:
        """The classes named, created where the project lacks them; answers name → class.

        >>> classes = versa.ensure_classes(project.id, ["car", "person"])
        >>> classes["car"].id
        """
        have = {c.name: c for c in self.classes(project)}
        for name in names:
            if name not in have:
                have[name] = self.create_class(project, name)
        return have

    def delete_class(self, class_: Union[int, ProjectClass]) -> None:
        self.http.send("DELETE", "/api/classes/%d" % _id(class_))

    # ---- images --------------------------------------------------------------------------------------------------
    def images(self, project: Union[int, Project], split: Optional[str] = None, annotated: Optional[bool] = None,
               class_id: Optional[int] = None, review_state: Optional[str] = None, page_size: int = 500) -> Paged[Image]:
        """Every image of a project (upload order), fetched `page_size` a request as you iterate; the filters combine.

        >>> for image in versa.images(project.id, annotated=False):
        ...     print(image.id, image.original_name, image.width, image.height)
        """
        return self._paged("/api/projects/%d/images" % _id(project), Image.from_api, page_size, split=split,
                           annotated=annotated, class_id=class_id, review_state=review_state)

    def image(self, image: Union[int, Image]) -> Image:
        return Image.from_api(self.get("/api/images/%d" % _id(image)))

    def upload_images(self, project: Union[int, Project], paths: Sequence[str],
                      progress: Optional[Callable[[int, int], Any]] = None) -> UploadReport:
        """Uploads image files in one request, streamed from disk. Each file gets an outcome (created, duplicate of an
        image the project has, or rejected with its reason); a request whose every file is rejected still answers
        the report rather than raising. `progress(bytes_sent, bytes_total)` follows the request body.

        >>> report = versa.upload_images(project.id, ["a.jpg", "b.png"])
        >>> report.created, report.image_ids()
        """
        body = Multipart(files=[("files", path, None, None) for path in paths])
        if progress:
            body.on_chunk = lambda _n: progress(body.sent, body.length)
        try:
            answer = self.http.json("POST", "/api/projects/%d/images" % _id(project), body=body)
        except VersaError as error:
            if not isinstance(error.body, dict) or "results" not in error.body:
                raise
            answer = dict(error.body, rejected=len(error.body["results"]))
        return UploadReport.from_api(answer)

    def upload_folder(self, project: Union[int, Project], folder: str, labels: Union[str, bool] = "auto",
                      format: Optional[str] = None, batch_size: int = 32, batch_bytes: int = 64 << 20,
                      recursive: bool = True, progress: ProgressArg = None, **import_options: Any) -> Union[UploadReport, ImportReport]:
        """Uploads a folder of images, with their labels when it holds some.

        - With labels (`labels=True`, or ``"auto"`` and the folder has label files: YOLO ``data.yaml`` and
          ``labels/*.txt``, COCO JSON, Pascal VOC XML, CVAT, LabelMe…) the folder is packed into a temporary zip
          (stored, not compressed, written file by file) and imported into the project: its classes are matched by
          name or created, images the project already has get the labels. Answers an `ImportReport`.
          `format` names the layout when detection is not enough; `import_options` go along (`on_conflict`,
          `new_classes`, `strict`).
        - Without labels the images are uploaded in batches of `batch_size` files (at most `batch_bytes` a request),
          each streamed from disk. Answers the totals as an `UploadReport`.

        `progress` is True for a bar, or a callable ``(files_done, files_total)``.

        >>> report = versa.upload_folder(project.id, "photos/", progress=True)
        >>> print(report.created, "new,", report.duplicates, "already there,", report.rejected, "refused")
        >>> versa.upload_folder(project.id, "yolo-dataset/", labels=True)     # data.yaml, images/, labels/
        """
        if not os.path.isdir(folder):
            raise FileNotFoundError("no folder %s" % folder)
        if labels is True or (labels == "auto" and _has_labels(folder)):
            return self._import_folder(project, folder, format, progress, import_options)
        paths = _images_under(folder, recursive)
        totals = UploadReport.from_api({"created": 0, "duplicates": 0, "rejected": 0, "results": [], "images": []})
        reporter = Reporter(progress, "upload", "file")
        done = 0
        try:
            for batch in _batches(paths, batch_size, batch_bytes):
                report = self.upload_images(project, batch)
                totals.created += report.created
                totals.duplicates += report.duplicates
                totals.rejected += report.rejected
                totals.results.extend(report.results)
                totals.images.extend(report.images)
                done += len(batch)
                reporter.update(done, len(paths))
        finally:
            reporter.close()
        totals.raw = {"created": totals.created, "duplicates": totals.duplicates, "rejected": totals.rejected,
                      "results": totals.results, "images": [i.raw for i in totals.images]}
        return totals

    def _import_folder(self, project: Union[int, Project], folder: str, format: Optional[str], progress: ProgressArg,
                       options: Dict[str, Any]) -> ImportReport:
        handle, archive = tempfile.mkstemp(suffix=".zip", prefix="versa-upload-")
        os.close(handle)
        try:
            with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED, allowZip64=True) as bundle:
                for root, _dirs, names in os.walk(folder):
                    for name in sorted(names):
                        if name.startswith("."):
                            continue
                        path = os.path.join(root, name)
                        bundle.write(path, os.path.relpath(path, folder))
            return self.import_into(project, archive, format=format, progress=progress, **options)
        finally:
            os.remove(archive)

    def delete_image(self, image: Union[int, Image]) -> None:
        self.http.send("DELETE", "/api/images/%d" % _id(image))

    def download_image(self, image: Union[int, Image], destination: str) -> str:
        """Saves an image's original bytes."""
        record = image if isinstance(image, Image) else self.image(image)
        with self.http.open("GET", record.file_url) as answer:
            download_to(answer, destination)
        return destination

    # ---- annotations ---------------------------------------------------------------------------------------------
    def annotations(self, image: Union[int, Image], page_size: int = 500) -> Paged[Annotation]:
        """An image's annotations, oldest first.

        >>> boxes = [a.geometry for a in versa.annotations(image.id) if a.annotation_type == "bbox"]
        """
        return self._paged("/api/images/%d/annotations" % _id(image), Annotation.from_api, page_size)

    def annotate(self, image: Union[int, Image], class_: Union[int, ProjectClass], annotation_type: str,
                 geometry: Dict[str, Any], attributes: Optional[Dict[str, Any]] = None, confidence: Optional[float] = None,
                 source: Optional[str] = None, group_id: Optional[int] = None) -> Annotation:
        """Adds an annotation of any type; geometry in pixels of the original image (see the API's AnnotationOut).

        >>> versa.annotate(image.id, car.id, "polygon", {"points": [[10, 10], [60, 12], [40, 50]]})
        >>> versa.annotate(image.id, person.id, "bbox", {"x": 5, "y": 8, "width": 30, "height": 60},
        ...                attributes={"occluded": True})
        """
        body = _body(class_id=_id(class_), annotation_type=annotation_type, geometry=geometry, attributes=attributes,
                     confidence=confidence, source=source, group_id=group_id)
        return Annotation.from_api(self.post("/api/images/%d/annotations" % _id(image), body))

    def add_box(self, image: Union[int, Image], class_: Union[int, ProjectClass], x: float, y: float, width: float,
                height: float, **options: Any) -> Annotation:
        """Adds a box (`x`, `y` its top-left corner, in pixels).

        >>> versa.add_box(image.id, car.id, 12, 30, 140, 80)
        """
        return self.annotate(image, class_, "bbox", {"x": x, "y": y, "width": width, "height": height}, **options)

    def add_polygon(self, image: Union[int, Image], class_: Union[int, ProjectClass],
                    points: Sequence[Sequence[float]], **options: Any) -> Annotation:
        """Adds a polygon of at least 3 ``[x, y]`` points.

        >>> versa.add_polygon(image.id, car.id, [[10, 10], [60, 12], [40, 50]])
        """
        return self.annotate(image, class_, "polygon", {"points": [list(p) for p in points]}, **options)

    def add_label(self, image: Union[int, Image], class_: Union[int, ProjectClass], **options: Any) -> Annotation:
        """Labels a whole image (classification projects).

        >>> versa.add_label(image.id, cat.id)
        """
        return self.annotate(image, class_, "classification", {}, **options)

    def update_annotation(self, annotation: Union[int, Annotation], class_: Union[int, ProjectClass],
                          annotation_type: str, geometry: Dict[str, Any], **options: Any) -> Annotation:
        """Replaces an annotation (PUT)."""
        body = _body(class_id=_id(class_), annotation_type=annotation_type, geometry=geometry, **options)
        return Annotation.from_api(self.request("PUT", "/api/annotations/%d" % _id(annotation), body=body))

    def delete_annotation(self, annotation: Union[int, Annotation]) -> None:
        self.http.send("DELETE", "/api/annotations/%d" % _id(annotation))

    def annotation_revisions(self, annotation: Union[int, Annotation], page_size: int = 500) -> Paged[Dict[str, Any]]:
        """An annotation's history (dicts: action, before, after, user_id, created_at), also after it was deleted."""
        return self._paged("/api/annotations/%d/revisions" % _id(annotation), dict, page_size)

    def image_revisions(self, image: Union[int, Image], page_size: int = 500) -> Paged[Dict[str, Any]]:
        """The history of every annotation of an image, paged as you iterate."""
        return self._paged("/api/images/%d/revisions" % _id(image), dict, page_size)

    def reviews(self, project: Union[int, Project], status: Optional[str] = None, page_size: int = 500) -> Paged[Dict[str, Any]]:
        """A project's reviews, oldest first (``status="pending"``: the review queue), paged as you iterate.

        >>> waiting = [r["image_id"] for r in versa.reviews(project.id, status="pending")]
        """
        return self._paged("/api/projects/%d/reviews" % _id(project), dict, page_size, status=status)

    def samples(self, project: Union[int, Project], modality: Optional[str] = None, split: Optional[str] = None,
                label: Optional[str] = None, page_size: int = 500) -> Paged[Dict[str, Any]]:
        """A text, tabular, audio, video or LLM project's samples (dicts: data, label, spans, value, split…).

        >>> for sample in versa.samples(project.id, label="spam"):
        ...     print(sample["data"]["text"])
        """
        return self._paged("/api/projects/%d/samples" % _id(project), dict, page_size, modality=modality, split=split,
                           label=label)

    def pipeline_runs(self, pipeline_id: int, page_size: int = 100) -> Paged[Dict[str, Any]]:
        """A pipeline's runs, newest first, paged as you iterate."""
        return self._paged("/api/pipelines/%d/runs" % pipeline_id, dict, page_size)

    # ---- imports -------------------------------------------------------------------------------------------------
    def import_archive(self, path: str, name: Optional[str] = None, project_type: Optional[str] = None,
                       format: Optional[str] = None, strict: Optional[bool] = None, progress: ProgressArg = None) -> Project:
        """Creates a project from a dataset zip (COCO, YOLO, VOC, CVAT, Datumaro, LabelMe, Label Studio, …), streamed.

        >>> project = versa.import_archive("cvat-export.zip", name="from cvat", format="cvat")
        """
        answer = self._send_archive("/api/projects/import", path, progress,
                                    dict(name=name, project_type=project_type, format=format, strict=strict))
        return Project.from_api(answer)

    def import_into(self, project: Union[int, Project], path: str, format: Optional[str] = None,
                    on_conflict: Optional[str] = None, new_classes: Optional[str] = None, strict: Optional[bool] = None,
                    progress: ProgressArg = None) -> ImportReport:
        """Adds a labelled dataset zip to a project, all or nothing (classes matched by name or created).

        >>> report = versa.import_into(project.id, "more-labels.zip", on_conflict="skip")
        >>> report.classes_created
        """
        answer = self._send_archive("/api/projects/%d/import" % _id(project), path, progress,
                                    dict(format=format, on_conflict=on_conflict, new_classes=new_classes, strict=strict))
        return ImportReport.from_api(answer)

    def _send_archive(self, route: str, path: str, progress: ProgressArg, fields: Dict[str, Any]) -> Any:
        body = Multipart(fields, [("file", path, None, "application/zip")])
        reporter = Reporter(progress, "upload", "B")
        body.on_chunk = lambda _n: reporter.update(body.sent, body.length)
        try:
            return self.http.json("POST", route, body=body)
        finally:
            reporter.close()

    # ---- splits and versions -------------------------------------------------------------------------------------
    def split(self, project: Union[int, Project], train: int = 70, valid: int = 20, test: int = 10,
              strategy: str = "random", seed: Optional[int] = None) -> Dict[str, Any]:
        """Reassigns every image to train/valid/test (percentages summing to 100); `strategy` random or stratified.

        >>> versa.split(project.id, 70, 20, 10, strategy="stratified", seed=1)
        """
        query = _body(train=train, valid=valid, test=test, strategy=strategy, seed=seed)
        return self.request("POST", "/api/projects/%d/splits" % _id(project), body={}, query=query)

    def create_version(self, project: Union[int, Project], name: str, split_config: Optional[Dict[str, int]] = None,
                       preprocessing_config: Optional[Dict[str, Any]] = None, augmentation_config: Optional[Dict[str, Any]] = None,
                       seed: Optional[int] = None, notes: str = "", wait: bool = True, timeout: float = 3600,
                       poll: float = 0.5, progress: ProgressArg = None) -> Version:
        """Freezes the project as a dataset version and (with `wait`) waits until its images are generated.

        >>> version = versa.create_version(project.id, "v1", augmentation_config={"flip_horizontal": True},
        ...                                timeout=600, progress=True)
        >>> version.number, version.image_counts
        """
        body = _body(name=name, notes=notes, split_config=split_config, preprocessing_config=preprocessing_config,
                     augmentation_config=augmentation_config, seed=seed)
        version = Version.from_api(self.post("/api/projects/%d/versions" % _id(project), body))
        return self.wait_version(version, timeout=timeout, poll=poll, progress=progress) if wait else version

    def wait_version(self, version: Union[Version, Tuple[int, int]], timeout: float = 3600, poll: float = 0.5,
                     progress: ProgressArg = None) -> Version:
        """Polls a version until it is ready; a failed generation raises `VersaError`, `timeout` seconds `WaitTimeout`.

        >>> version = versa.wait_version(versa.create_version(project.id, "v2", wait=False), timeout=600)
        """
        project_id, version_id = (version.project_id, version.id) if isinstance(version, Version) else version
        current = version if isinstance(version, Version) else self.version(project_id, version_id)
        deadline = time.monotonic() + timeout
        reporter = Reporter(progress, "version", "%")
        try:
            while current.status not in ("ready", "failed"):
                reporter.update(int(100 * (current.progress or 0)), 100)
                if time.monotonic() >= deadline:
                    raise WaitTimeout("version %d still %s after %ss" % (current.id, current.status, timeout), current)
                time.sleep(poll)
                current = self.version(project_id, version_id)
            reporter.update(100, 100)
        finally:
            reporter.close()
        if current.status == "failed":
            raise VersaError(500, "version %d failed to generate: %s" % (current.id, current.error), current.raw)
        return current

    def versions(self, project: Union[int, Project]) -> List[Version]:
        return [Version.from_api(v) for v in self.get("/api/projects/%d/versions" % _id(project))]

    def version(self, project: Union[int, Project], version_id: int) -> Version:
        return Version.from_api(self.get("/api/projects/%d/versions/%d" % (_id(project), version_id)))

    def version_images(self, version: Version, page_size: int = 500) -> Paged[Dict[str, Any]]:
        """A version's output images with their lineage and annotations (dicts), paged as you iterate."""
        return self._paged("/api/projects/%d/versions/%d/images" % (version.project_id, version.id), dict, page_size)

    # ---- export and download -------------------------------------------------------------------------------------
    def export(self, project: Union[int, Project], format: str, version: Union[None, int, Version] = None,
               include_unannotated: bool = True, version_id: Optional[int] = None) -> Export:
        """Writes an export file on the server (formats: coco, coco_zip, yolo, yolo_ultralytics, voc, cvat, …).

        >>> export = versa.export(project.id, "coco_zip", version=version)
        """
        chosen = version_id if version_id is not None else (None if version is None else _id(version))
        body = {"format": format, "version_id": chosen, "include_unannotated": include_unannotated}
        return Export.from_api(self.post("/api/projects/%d/export" % _id(project), body))

    def download(self, export: Union[Export, Dict[str, Any], str], destination: str, progress: ProgressArg = None) -> str:
        """Streams an export (the record, its url or its filename) to `destination` in 1 MiB chunks; answers the path.

        >>> versa.download(export, "cars-v1.zip", progress=True)
        """
        url = export["url"] if isinstance(export, (Export, dict)) else export
        if not url.startswith(("/", "http://", "https://")):
            url = "/api/exports/" + url
        reporter = Reporter(progress, "download", "B")
        try:
            with self.http.open("GET", url) as answer:
                download_to(answer, destination, reporter.update)
        finally:
            reporter.close()
        return destination

    def download_version(self, project: Union[int, Project], version: Union[int, Version], format: str,
                         destination: str, unpack: bool = True, progress: ProgressArg = None) -> str:
        """Exports a version in a named format, downloads it and (with `unpack`) unpacks it into the folder
        `destination`; answers that folder (or, without `unpack`, the zip's path).

        >>> folder = versa.download_version(project.id, version, "yolo_ultralytics", "datasets/cars-v1")
        >>> # then: yolo train data=datasets/cars-v1/data.yaml
        """
        export = self.export(project, format, version=version)
        if not unpack:
            return self.download(export, destination, progress=progress)
        os.makedirs(destination, exist_ok=True)
        archive = os.path.join(destination, export.filename)
        self.download(export, archive, progress=progress)
        if zipfile.is_zipfile(archive):
            safe_extract(archive, destination)
            os.remove(archive)
        return destination

    # ---- jobs ----------------------------------------------------------------------------------------------------
    def job(self, job_id: int) -> Job:
        return Job.from_api(self.get("/api/jobs/%d" % job_id))

    def wait_job(self, job: Union[int, Job], timeout: float = 3600, poll: float = 1.0, progress: ProgressArg = None) -> Job:
        """Polls a background job until it ends (succeeded, failed or cancelled; a failed job is answered, not raised).

        >>> job = versa.wait_job(job_id, timeout=600, progress=True)
        >>> job.status, job.result
        """
        return self._follow(lambda: self.job(_id(job)), timeout, poll, progress, "job")

    def cancel_job(self, job: Union[int, Job]) -> Job:
        return Job.from_api(self.post("/api/jobs/%d/cancel" % _id(job)))

    def _follow(self, fetch: Callable[[], R], timeout: float, poll: float, progress: Any, label: str) -> R:
        deadline = time.monotonic() + timeout
        reporter = None if callable(progress) and not _is_pair_callback(progress) else Reporter(progress, label, "%")
        while True:
            current = fetch()
            if reporter is not None:
                reporter.update(int(100 * (current.get("progress") or 0)), 100)
            elif progress:
                progress(current)
            if current["status"] in FINISHED:
                if reporter is not None:
                    reporter.close()
                return current
            if time.monotonic() >= deadline:
                if reporter is not None:
                    reporter.close()
                raise WaitTimeout("%s %d still %s after %ss" % (label, current["id"], current["status"], timeout), current)
            time.sleep(poll)

    # ---- training ------------------------------------------------------------------------------------------------
    def adapters(self) -> List[Adapter]:
        """The trainers, each with its models and whether it can run on this server.

        >>> [(a.name, a.available, a.models) for a in versa.adapters()]
        """
        return [Adapter.from_api(a) for a in self.get("/api/training/adapters")]

    def train(self, project: Union[int, Project], version: Union[int, Version], model: Optional[str] = None,
              epochs: Optional[int] = None, imgsz: Optional[int] = None, batch: Optional[int] = None,
              device: Optional[str] = None, adapter: Optional[str] = None, name: Optional[str] = None,
              seed: Optional[int] = None, require_ready: Optional[bool] = None,
              min_readiness_score: Optional[float] = None, **params: Any) -> TrainingRun:
        """Starts training on a ready version; answers the run (follow it with `follow_training`). `model` is one of
        the adapter's models (`adapters()`: e.g. versa-detect-n/s/m for detection); the adapter's default when None.
        Raises `TrainingRefused` when the data or the server stops it (readiness gate, no trainer runtime here).

        >>> try:
        ...     run = versa.train(project.id, version.id, model="versa-detect-n", epochs=30)
        ...     run = versa.follow_training(run, timeout=4 * 3600, progress=True)
        ...     print(run.status, run.metrics, run.model_id)
        ... except TrainingRefused as refusal:
        ...     print("not trained:", refusal.detail, refusal.readiness)
        """
        body = _body(version_id=_id(version), model=model, epochs=epochs, imgsz=imgsz, batch=batch, device=device,
                     adapter=adapter, name=name, seed=seed, require_ready=require_ready,
                     min_readiness_score=min_readiness_score, **params)
        try:
            return TrainingRun.from_api(self.post("/api/projects/%d/train" % _id(project), body))
        except VersaError as error:
            if _is_refusal(error):
                raise TrainingRefused(error.status, error.detail, error.body, error.headers) from None
            raise

    def training_run(self, run: Union[int, TrainingRun]) -> TrainingRun:
        return TrainingRun.from_api(self.get("/api/train/jobs/%d" % _id(run)))

    def follow_training(self, run: Union[int, TrainingRun], timeout: float = 24 * 3600, poll: float = 2.0,
                        progress: Union[None, bool, Callable[[TrainingRun], Any]] = None) -> TrainingRun:
        """Polls a training run until it ends; `progress` is True for a bar, or a callable given the run on each poll
        (epoch, epochs, metrics, eta_seconds). Raises `WaitTimeout` after `timeout` seconds (the run goes on).

        >>> run = versa.follow_training(run.id, timeout=3600,
        ...                             progress=lambda r: print(r.status, r.epoch, r.epochs, r.metrics))
        """
        return self._follow(lambda: self.training_run(run), timeout, poll, progress, "training")

    def training_status(self, project: Union[int, Project]) -> Dict[str, Any]:
        """``{status: active|latest|idle, job}`` of a project's training."""
        answer = self.get("/api/projects/%d/train/status" % _id(project))
        if answer.get("job"):
            answer["job"] = TrainingRun.from_api(answer["job"])
        return answer

    def experiments(self, project: Union[int, Project], status: Optional[str] = None, page_size: int = 100) -> Paged[Experiment]:
        """A project's experiments (training runs' records), newest first, paged as you iterate."""
        return self._paged("/api/projects/%d/experiments" % _id(project), Experiment.from_api, page_size,
                           cursor="offset", status=status)

    def experiment(self, experiment_id: int) -> Experiment:
        """An experiment with its per-epoch `history` and `per_class` metrics (in `raw`)."""
        return Experiment.from_api(self.get("/api/experiments/%d" % experiment_id))

    # ---- models and inference ------------------------------------------------------------------------------------
    def models(self, project: Union[None, int, Project] = None) -> List[Model]:
        """A project's registered models (every model you can read without `project`), newest first."""
        path = "/api/models" if project is None else "/api/projects/%d/models" % _id(project)
        return [Model.from_api(m) for m in self.get(path)]

    def upload_model(self, project: Union[int, Project], path: str, name: Optional[str] = None, task: Optional[str] = None,
                     class_names: Optional[Sequence[str]] = None) -> Model:
        """Uploads (streamed) and registers a model file: an ONNX detector/segmenter/classifier (e.g. a YOLO export).

        >>> model = versa.upload_model(project.id, "best.onnx", name="yolo11n-cars", task="detect")
        """
        import json

        fields = _body(name=name, task=task, class_names=json.dumps(list(class_names)) if class_names is not None else None)
        return Model.from_api(self.http.json("POST", "/api/projects/%d/models/upload" % _id(project),
                                             body=Multipart(fields, [("file", path, None, "application/octet-stream")])))

    def predict(self, project: Union[int, Project], model: Union[int, str, Model],
                images: Optional[Iterable[Union[int, str, Image]]] = None, confidence: Optional[float] = None,
                iou: Optional[float] = None, only_unannotated: Optional[bool] = None,
                create_missing_classes: Optional[bool] = None, timeout: float = 3600) -> Predictions:
        """Runs a registered model (id, name or record) on images of the project: ids, `Image` records, or paths of
        local files (uploaded first; files the project has are matched). All images when `images` is None. The
        detections become suggestions (accept or reject them in the editor or the API). Large runs go through a
        job, which is waited for (`timeout` seconds).

        >>> found = versa.predict(project.id, model.id, ["new/street-1.jpg", "new/street-2.jpg"], confidence=0.4)
        >>> for a in found.annotations():
        ...     print(a.image_id, a.class_id, a.confidence, a.geometry)
        """
        ids: Optional[List[int]] = None
        if images is not None:
            ids, paths = [], []
            for item in images:
                if isinstance(item, str):
                    paths.append(item)
                else:
                    ids.append(_id(item))
            if paths:
                ids.extend(self.upload_images(project, paths).image_ids())
        body = _body(model=_id(model) if isinstance(model, Model) else model, image_ids=ids, confidence=confidence,
                     iou=iou, only_unannotated=only_unannotated, create_missing_classes=create_missing_classes)
        answer = self.http.send("POST", "/api/projects/%d/auto-annotate/yolo" % _id(project), json_body=body)
        if answer.status != 202:
            return Predictions.from_api(answer.json())
        job = self.wait_job(answer.json()["job_id"], timeout=timeout)
        if job.status != "succeeded":
            raise VersaError(500, "prediction job %d %s: %s" % (job.id, job.status, job.error), job.raw)
        result = dict(job.result or {})
        result.setdefault("images", [])
        predictions = Predictions.from_api(result)
        predictions.job = job
        return predictions


def _is_pair_callback(progress: Callable[..., Any]) -> bool:
    """Whether a progress callable takes (done, total) rather than the record."""
    import inspect

    try:
        parameters = [p for p in inspect.signature(progress).parameters.values()
                      if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return len(parameters) == 2


def _is_refusal(error: VersaError) -> bool:
    if error.status == 409 and isinstance(error.body, dict) and "readiness" in error.body:
        return True
    if isinstance(error, ValidationError) and isinstance(error.detail, list):
        return any(list(item.get("loc", []))[-1:] in (["adapter"], ["device"]) for item in error.detail if isinstance(item, dict))
    return False


def _batches(paths: Sequence[str], count: int, size: int) -> Iterator[List[str]]:
    batch: List[str] = []
    total = 0
    for path in paths:
        length = os.path.getsize(path)
        if batch and (len(batch) >= count or total + length > size):
            yield batch
            batch, total = [], 0
        batch.append(path)
        total += length
    if batch:
        yield batch
