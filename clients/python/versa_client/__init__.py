"""Versa API client for scripts and notebooks: Python 3.8+, standard library only (`tqdm` used for bars when present).

    from versa_client import Versa
    versa = Versa.login("http://127.0.0.1:8000", "me@example.com", "my password")
    project = versa.create_project("cars", "object_detection")
    versa.upload_folder(project.id, "photos/", progress=True)
    version = versa.create_version(project.id, "v1", timeout=600)      # waits until its images are generated
    folder = versa.download_version(project.id, version, "yolo_ultralytics", "datasets/cars-v1")

Calls answer typed records (dataclasses: `Project`, `Image`, `Annotation`, `Version`, …) that also read like the
API's JSON (``project["id"]``); paged lists are iterators (`Paged`); errors raise `VersaError` subclasses.
"""

from .client import IMAGE_EXTENSIONS, LABEL_EXTENSIONS, Paged, Versa, safe_extract
from .errors import (
    AuthenticationError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServiceUnavailable,
    TrainingRefused,
    UnsupportedMedia,
    ValidationError,
    VersaError,
    WaitTimeout,
)
from .models import (
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
from .progress import print_progress
from .transport import Multipart, Transport

__version__ = "0.2.0"

__all__ = [
    "Versa", "Paged", "Transport", "Multipart", "safe_extract", "print_progress", "IMAGE_EXTENSIONS", "LABEL_EXTENSIONS",
    "VersaError", "BadRequest", "AuthenticationError", "PermissionDenied", "NotFound", "Conflict", "PayloadTooLarge",
    "UnsupportedMedia", "ValidationError", "RateLimited", "ServiceUnavailable", "TrainingRefused", "WaitTimeout",
    "ConnectionFailed",
    "Record", "User", "Token", "Project", "ProjectClass", "Image", "Annotation", "Version", "Export", "Job",
    "TrainingRun", "Model", "Experiment", "Adapter", "UploadReport", "ImportReport", "Predictions",
]
