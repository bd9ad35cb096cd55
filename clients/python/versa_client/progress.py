"""Progress reporting for long calls: `progress=True` draws a bar (tqdm's when it is installed, else a plain one on
stderr), a callable is called with ``(done, total)``, None/False reports nothing."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, TextIO, Union

ProgressArg = Union[None, bool, Callable[[int, int], Any]]


def print_progress(done: int, total: int, label: str = "", stream: TextIO = sys.stderr) -> None:
    """A minimal text bar for `progress=` callbacks: ``progress=lambda d, t: print_progress(d, t, "upload")``."""
    width = 30
    filled = int(width * done / total) if total else width
    stream.write("\r%s [%s%s] %d/%d" % (label, "#" * filled, "." * (width - filled), done, total))
    if total and done >= total:
        stream.write("\n")
    stream.flush()


class Reporter:
    """Adapts a `progress=` argument to one `update(done, total)` call site; `close()` ends a bar."""

    def __init__(self, progress: ProgressArg, label: str = "", unit: str = "it"):
        self._callback: Optional[Callable[[int, int], Any]] = None
        self._bar: Any = None
        self._label = label
        self._unit = unit
        if callable(progress):
            self._callback = progress
        elif progress:
            try:
                from tqdm.auto import tqdm  # optional dependency

                self._bar = tqdm(desc=label, unit=unit, unit_scale=unit == "B", leave=True)
            except ImportError:
                self._callback = lambda done, total: print_progress(done, total, label)

    def update(self, done: int, total: int) -> None:
        if self._bar is not None:
            if total and self._bar.total != total:
                self._bar.total = total
            self._bar.update(done - self._bar.n)
        elif self._callback is not None:
            self._callback(done, total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
