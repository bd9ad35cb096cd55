"""HTTP for the client: one request with retries and backoff, streamed multipart bodies, `Link` paging.

Standard library only (`urllib`), so it honours the usual proxy variables (`HTTPS_PROXY`, `NO_PROXY`).
"""

from __future__ import annotations

import http.client
import json
import mimetypes
import os
import random
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .errors import ConnectionFailed, error_for, parse_retry_after

CHUNK = 1 << 20
RETRY_STATUSES = (429, 503)
IDEMPOTENT = ("GET", "HEAD", "PUT", "DELETE", "OPTIONS")


class Multipart:
    """A multipart/form-data body built from text fields and files that are read only while it is sent, in 1 MiB
    chunks: a 5 GB file costs the client no more memory than a 5 kB one. It can be iterated again (a retry re-sends
    it from the start), and its `length` is known up front, so it goes out with a Content-Length, not chunked.

    `files` holds ``(field, path, filename, content_type)``; `filename` and `content_type` may be None (the path's
    base name; guessed from the name).
    """

    def __init__(self, fields: Optional[Dict[str, Any]] = None,
                 files: Sequence[Tuple[str, str, Optional[str], Optional[str]]] = ()):
        self.boundary = "versa-" + uuid.uuid4().hex
        self.content_type = "multipart/form-data; boundary=" + self.boundary
        self._segments: List[Union[bytes, Tuple[str, int]]] = []
        for name, value in (fields or {}).items():
            if value is None:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            head = '--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n' % (self.boundary, _quote(name))
            self._segments.append(head.encode("utf-8") + str(value).encode("utf-8") + b"\r\n")
        for field, path, filename, content_type in files:
            filename = filename or os.path.basename(path)
            content_type = content_type or mimetypes.guess_type(filename)[0] or "application/octet-stream"
            head = '--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\nContent-Type: %s\r\n\r\n' % (
                self.boundary, _quote(field), _quote(filename), content_type)
            self._segments.append(head.encode("utf-8"))
            self._segments.append((path, os.path.getsize(path)))
            self._segments.append(b"\r\n")
        self._segments.append(("--%s--\r\n" % self.boundary).encode("utf-8"))
        self.length = sum(len(s) if isinstance(s, bytes) else s[1] for s in self._segments)
        self.sent = 0
        self.on_chunk: Optional[Callable[[int], None]] = None

    def __iter__(self) -> Iterator[bytes]:
        # Small pieces (part headers, line ends) are joined to the file bytes around them, so the socket gets few
        # writes of up to 1 MiB each rather than many tiny ones.
        self.sent = 0
        pending = bytearray()
        for segment in self._segments:
            if isinstance(segment, bytes):
                pending += segment
                continue
            path, size = segment
            left = size
            with open(path, "rb") as handle:
                while left > 0:
                    chunk = handle.read(min(CHUNK - len(pending), left) or CHUNK)
                    if not chunk:
                        raise IOError("%s shrank while it was being uploaded" % path)
                    left -= len(chunk)
                    pending += chunk
                    if len(pending) >= CHUNK:
                        yield self._count(bytes(pending))
                        pending = bytearray()
        if pending:
            yield self._count(bytes(pending))

    def _count(self, chunk: bytes) -> bytes:
        self.sent += len(chunk)
        if self.on_chunk:
            self.on_chunk(len(chunk))
        return chunk


def _quote(text: str) -> str:
    return text.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")


class Headers(dict):
    """Answer headers, looked up without regard to case (`Retry-After` finds `retry-after`)."""

    def __init__(self, pairs: Iterable[Tuple[str, str]] = ()):
        super().__init__((k.lower(), v) for k, v in pairs)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(key.lower(), default)


class Response:
    """A finished answer: status, headers and the body's bytes."""

    def __init__(self, status: int, headers: Headers, content: bytes):
        self.status = status
        self.headers = headers
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content.decode("utf-8")) if self.content else None

    @property
    def next_url(self) -> Optional[str]:
        return next_link(self.headers.get("Link"))

    @property
    def total(self) -> Optional[int]:
        value = self.headers.get("X-Total-Count")
        return int(value) if value and value.isdigit() else None


def next_link(header: Optional[str]) -> Optional[str]:
    """The target of ``rel="next"`` in a `Link` header (RFC 8288), or None."""
    if not header:
        return None
    for part in header.split(","):
        match = re.match(r'\s*<([^>]*)>\s*;(.*)$', part)
        if match and re.search(r'rel\s*=\s*"?next"?', match.group(2)):
            return match.group(1)
    return None


class Transport:
    """Sends requests to one server. A 429 or 503 answer is retried up to `retries` times, after the server's
    `Retry-After` when it sends one (a wait over `max_retry_after` seconds is not waited for: the error is raised),
    else after an exponential backoff with jitter (`backoff` × 2^attempt, at most 30 s). A request that could not
    reach the server is retried the same way when it is safe to repeat (GET, PUT, DELETE). `sleep` is the function
    that waits (tests pass one that records)."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 120, retries: int = 5,
                 backoff: float = 0.5, max_retry_after: float = 300, sleep: Callable[[float], None] = time.sleep,
                 user_agent: str = "versa-client-python"):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.user_agent = user_agent

    def url(self, path: str, query: Optional[Dict[str, Any]] = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(pairs)
        return url

    def delay(self, attempt: int, retry_after: Optional[str]) -> Optional[float]:
        """Seconds to wait before retry number `attempt` (0-based); None when the server asks for too long a wait."""
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        return min(30.0, self.backoff * (2 ** attempt)) * (0.5 + random.random() / 2)

    def open(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, json_body: Any = None,
             body: Union[None, bytes, Multipart] = None, content_type: Optional[str] = None,
             headers: Optional[Dict[str, str]] = None):
        """Sends the request (with retries) and answers the open urllib response; the caller reads and closes it.
        An error answer raises its `VersaError`."""
        url = self.url(path, query)
        sent_headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        if self.token:
            sent_headers["Authorization"] = "Bearer " + self.token
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            content_type = "application/json"
        if isinstance(body, Multipart):
            content_type = body.content_type
            sent_headers["Content-Length"] = str(body.length)
        if content_type:
            sent_headers["Content-Type"] = content_type
        sent_headers.update(headers or {})
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=body, method=method, headers=sent_headers)
            try:
                return urllib.request.urlopen(request, timeout=self.timeout)
            except urllib.error.HTTPError as error:
                payload = error.read()
                answer_headers = Headers(error.headers.items() if error.headers else ())
                error.close()
                if error.code in RETRY_STATUSES and attempt < self.retries:
                    wait = self.delay(attempt, answer_headers.get("Retry-After"))
                    if wait is not None:
                        self.sleep(wait)
                        attempt += 1
                        continue
                raise error_for(error.code, payload, answer_headers) from None
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout) as error:
                if method in IDEMPOTENT and attempt < self.retries:
                    self.sleep(min(30.0, self.backoff * (2 ** attempt)))
                    attempt += 1
                    continue
                reason = getattr(error, "reason", None) or error
                raise ConnectionFailed("%s %s: %s" % (method, url, reason)) from None

    def send(self, method: str, path: str, **kwargs: Any) -> Response:
        """`open`, then reads the whole answer."""
        with self.open(method, path, **kwargs) as answer:
            return Response(answer.status, Headers(answer.headers.items()), answer.read())

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.send(method, path, **kwargs).json()


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def download_to(answer, destination: str, progress: Optional[Callable[[int, int], None]] = None,
                chunk_size: int = CHUNK) -> int:
    """Copies an open answer to `destination` in chunks (never whole in memory); answers the bytes written. Written
    to a `.part` file first, renamed when complete, so an interrupted download leaves no half file under the name."""
    total = int(answer.headers.get("Content-Length") or 0)
    done = 0
    partial = destination + ".part"
    try:
        with open(partial, "wb") as out:
            while True:
                chunk = answer.read(chunk_size)
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
        if total and done != total:
            raise ConnectionFailed("download ended after %d of %d bytes" % (done, total))
        os.replace(partial, destination)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return done


def iter_chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
