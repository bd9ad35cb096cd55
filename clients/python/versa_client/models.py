"""Typed records of the API (dataclasses). Each keeps the whole answer in `raw`, so fields a newer server adds are
not lost, and reads like the dict it came from as well: ``project.id == project["id"]``, ``project.get("x")``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar

T = TypeVar("T", bound="Record")

#: Job states after which nothing changes any more.
FINISHED = ("succeeded", "failed", "cancelled")


@dataclass
class Record:
    """Base of every record: `from_api` fills the declared fields from an answer; `raw` holds all of it."""

    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_api(cls: Type[T], data: Dict[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)} - {"raw"}
        record = cls(raw=dict(data), **{name: data[name] for name in names if name in data})
        record._convert()
        return record

    def _convert(self) -> None:
        """Turns nested answers into records (overridden where a record holds others)."""

    def __getitem__(self, key: str) -> Any:
        if key in self.raw:
            return self.raw[key]
        if key != "raw" and hasattr(self, key):
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: str) -> bool:
        return key in self.raw

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self) -> Dict[str, Any]:
        """The answer as the API sent it."""
        return dict(self.raw)


@dataclass
class User(Record):
    id: int = 0
    email: str = ""
    display_name: str = ""
    is_admin: bool = False
    created_at: Optional[str] = None


@dataclass
class Token(Record):
    """An API token; `token` (the secret) is only in the answer that created it."""
    id: int = 0
    name: str = ""
    token: Optional[str] = None
    created_at: Optional[str] = None
    expires_at: Optional[str] = None


@dataclass
class Project(Record):
    id: int = 0
    name: str = ""
    description: str = ""
    project_type: str = ""
    image_count: int = 0
    annotated_image_count: int = 0
    annotation_count: int = 0
    class_count: int = 0
    created_at: Optional[str] = None
    updated_at: Optional[str] = None


@dataclass
class ProjectClass(Record):
    """A class (label) of a project; `skeleton` for keypoint classes, `attributes` the spec of its attributes."""
    id: int = 0
    project_id: int = 0
    name: str = ""
    color: str = ""
    skeleton: Optional[Dict[str, Any]] = None
    attributes: List[Dict[str, Any]] = field(default_factory=list)


@dataclass
class Image(Record):
    id: int = 0
    project_id: int = 0
    filename: str = ""
    original_name: str = ""
    width: int = 0
    height: int = 0
    split: Optional[str] = None
    annotation_count: int = 0
    sha256: str = ""
    size_bytes: int = 0
    mime_type: str = ""
    file_url: str = ""
    thumbnail_url: str = ""
    review_state: Optional[str] = None
    created_at: Optional[str] = None


@dataclass
class Annotation(Record):
    """`geometry` is in pixels of the original image: bbox ``{x, y, width, height}``, polygon ``{points}``, …"""
    id: int = 0
    image_id: int = 0
    class_id: int = 0
    annotation_type: str = ""
    geometry: Dict[str, Any] = field(default_factory=dict)
    confidence: Optional[float] = None
    source: str = ""
    status: Optional[str] = None
    attributes: Dict[str, Any] = field(default_factory=dict)
    group_id: Optional[int] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None


@dataclass
class Version(Record):
    """A frozen, generated dataset version. `id` is what every `version_id` means; `number` is 1, 2, 3… per project."""
    id: int = 0
    project_id: int = 0
    number: int = 0
    name: str = ""
    notes: str = ""
    status: str = ""
    progress: float = 0.0
    error: Optional[str] = None
    job_id: Optional[int] = None
    seed: Optional[int] = None
    split_config: Dict[str, Any] = field(default_factory=dict)
    preprocessing_config: Dict[str, Any] = field(default_factory=dict)
    augmentation_config: Dict[str, Any] = field(default_factory=dict)
    image_counts: Dict[str, int] = field(default_factory=dict)
    source_counts: Dict[str, int] = field(default_factory=dict)
    created_at: Optional[str] = None
    finished_at: Optional[str] = None


@dataclass
class Export(Record):
    """An export file written on the server; download it from `url`."""
    filename: str = ""
    url: str = ""
    format: str = ""
    size_bytes: int = 0
    image_count: int = 0
    annotation_count: int = 0
    version_id: Optional[int] = None
    created_at: Optional[str] = None


@dataclass
class Job(Record):
    """A background job; `status` is queued, running, succeeded, failed or cancelled; `progress` 0–1."""
    id: int = 0
    kind: str = ""
    project_id: Optional[int] = None
    status: str = ""
    progress: float = 0.0
    message: Optional[str] = None
    eta_seconds: Optional[float] = None
    result: Any = None
    error: Optional[str] = None
    created_at: Optional[str] = None
    started_at: Optional[str] = None
    finished_at: Optional[str] = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass
class TrainingRun(Job):
    """A training job (`TrainJobOut`): the job's fields plus the run's epoch, metrics and, once it succeeded, `model_id`."""
    version_id: Optional[int] = None
    experiment_id: Optional[int] = None
    adapter: Optional[str] = None
    epoch: Optional[int] = None
    epochs: Optional[int] = None
    metrics: Dict[str, Any] = field(default_factory=dict)
    model_id: Optional[int] = None


@dataclass
class Model(Record):
    """A registered model (uploaded, registered from a path, or trained here)."""
    id: int = 0
    project_id: int = 0
    name: str = ""
    format: str = ""
    task: str = ""
    input_size: Any = None
    class_names: List[str] = field(default_factory=list)
    size_bytes: int = 0
    sha256: str = ""
    lifecycle: str = ""
    source: str = ""
    experiment_id: Optional[int] = None
    version_id: Optional[int] = None
    metrics: Optional[Dict[str, Any]] = None
    created_at: Optional[str] = None


@dataclass
class Experiment(Record):
    """One training run's record: every effective parameter, final metrics, and (in the detail) its history."""
    id: int = 0
    project_id: int = 0
    name: str = ""
    tags: List[str] = field(default_factory=list)
    notes: str = ""
    status: str = ""
    adapter: str = ""
    version_id: Optional[int] = None
    job_id: Optional[int] = None
    model_id: Optional[int] = None
    params: Dict[str, Any] = field(default_factory=dict)
    metrics: Dict[str, Any] = field(default_factory=dict)
    best_epoch: Optional[int] = None
    created_at: Optional[str] = None
    finished_at: Optional[str] = None
    duration_s: Optional[float] = None


@dataclass
class Adapter(Record):
    """A trainer: which project types it trains, its models, and whether it can run on this server (`reason` if not)."""
    name: str = ""
    title: str = ""
    tasks: List[str] = field(default_factory=list)
    modality: str = ""
    available: bool = False
    reason: Optional[str] = None
    devices: List[str] = field(default_factory=list)
    models: List[str] = field(default_factory=list)
    default_model: Optional[str] = None
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass
class UploadReport(Record):
    """What an image upload did: counts, one result per file (`outcome` created/duplicate/rejected, `image_id`), and
    the created or matched images."""
    created: int = 0
    duplicates: int = 0
    rejected: int = 0
    results: List[Dict[str, Any]] = field(default_factory=list)
    images: List[Image] = field(default_factory=list)

    def _convert(self) -> None:
        self.images = [i if isinstance(i, Image) else Image.from_api(i) for i in self.images]

    def image_ids(self) -> List[int]:
        """The image of every file that was created or is a duplicate, in upload order (rejected files left out)."""
        return [r["image_id"] for r in self.results if r.get("image_id") is not None]


@dataclass
class ImportReport(Record):
    """What a labelled dataset import did (into a project): counts per kind, classes created or matched, `skipped`."""
    project_id: int = 0
    classes_created: List[str] = field(default_factory=list)
    classes_matched: List[str] = field(default_factory=list)
    project: Optional[Project] = None

    def _convert(self) -> None:
        if isinstance(self.project, dict):
            self.project = Project.from_api(self.project)


@dataclass
class Predictions(Record):
    """What running a model on images made: suggestions per image (`images[i].annotations`, status `suggested`)."""
    created: int = 0
    replaced: int = 0
    matched: int = 0
    skipped: int = 0
    classes_created: List[str] = field(default_factory=list)
    images: List[Dict[str, Any]] = field(default_factory=list)
    locked: List[Dict[str, Any]] = field(default_factory=list)
    job: Optional[Job] = None

    def _convert(self) -> None:
        self.images = [
            {"image_id": i["image_id"], "annotations": [Annotation.from_api(a) for a in i.get("annotations", [])]}
            for i in self.images
        ]

    def annotations(self) -> List[Annotation]:
        return [a for i in self.images for a in i["annotations"]]
