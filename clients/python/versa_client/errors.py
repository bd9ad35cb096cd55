"""The exceptions the client raises: one class per HTTP status people handle differently, all `VersaError`."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional


class VersaError(Exception):
    """An answer with a 4xx/5xx status.

    `status` is the HTTP status, `detail` the API's `detail` (a string, or FastAPI's list of ``{loc, msg, type}``),
    `body` the whole parsed answer (it may carry more, e.g. ``readiness`` or per-file ``results``).
    """

    def __init__(self, status: int, detail: Any, body: Any = None, headers: Optional[Dict[str, str]] = None):
        self.status = status
        self.detail = detail
        self.body = body
        self.headers = headers if headers is not None else {}
        text = detail if isinstance(detail, str) else json.dumps(detail)
        super().__init__("HTTP %s: %s" % (status, text))


class BadRequest(VersaError):
    """400: the request could not be read (e.g. a malformed multipart body)."""


class AuthenticationError(VersaError):
    """401: no credentials, or a token that is wrong, revoked or expired."""


class PermissionDenied(VersaError):
    """403: signed in, but your role in the project does not allow this."""


class NotFound(VersaError):
    """404: no such record, or one you may not see."""


class Conflict(VersaError):
    """409: the state does not allow it (duplicate class name, image locked by someone else, version not ready…)."""


class PayloadTooLarge(VersaError):
    """413: a file over the server's size or pixel limit."""


class UnsupportedMedia(VersaError):
    """415: a file that is not an accepted image or archive."""


class ValidationError(VersaError):
    """422: the input is refused; `detail` lists each problem with its location (``loc``)."""


class RateLimited(VersaError):
    """429 after the retries ran out; `retry_after` is the server's last `Retry-After` in seconds (or None)."""

    @property
    def retry_after(self) -> Optional[float]:
        return parse_retry_after(self.headers.get("Retry-After"))


class ServiceUnavailable(VersaError):
    """503 after the retries ran out (e.g. a busy inference queue)."""


class TrainingRefused(VersaError):
    """Training did not start for a reason of the data or the server, not of the request's shape: the readiness gate
    (409, `readiness` holds the report) or no trainer runtime/device on this server (422 on ``adapter``/``device``).
    A wrong `model` name stays a `ValidationError`."""

    @property
    def readiness(self) -> Optional[Dict[str, Any]]:
        return self.body.get("readiness") if isinstance(self.body, dict) else None


class WaitTimeout(TimeoutError):
    """A wait (`wait_job`, `wait_version`, `follow_training`) passed its `timeout`; `last` is the record last seen."""

    def __init__(self, message: str, last: Any = None):
        super().__init__(message)
        self.last = last


class ConnectionFailed(VersaError):
    """The server could not be reached (after the retries, for requests that are safe to repeat)."""

    def __init__(self, reason: str):
        super().__init__(0, reason)


_BY_STATUS = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMedia,
    422: ValidationError,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_for(status: int, payload: bytes, headers: Optional[Dict[str, str]] = None) -> VersaError:
    """The exception for an error answer: its class by status, `detail` from the JSON body when there is one."""
    try:
        parsed = json.loads(payload.decode("utf-8")) if payload else None
    except ValueError:
        parsed = None
    if parsed is None:
        parsed = {"detail": payload.decode("utf-8", "replace") if payload else ""}
    detail = parsed.get("detail", parsed) if isinstance(parsed, dict) else parsed
    return _BY_STATUS.get(status, VersaError)(status, detail, parsed, headers)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """`Retry-After` as seconds: a number of seconds or an HTTP date (RFC 9110); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import email.utils
        import time

        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None
