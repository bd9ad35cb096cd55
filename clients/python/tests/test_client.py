"""The client's own tests, against tiny local HTTP servers (no Versa server needed):
retries that honour Retry-After, streamed multipart bodies, Link paging, waits with timeouts, safe unpacking.

    python3 -m unittest discover -s clients/python/tests -p 'test_*.py'
"""

import json
import os
import sys
import tempfile
import threading
import tracemalloc
import unittest
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from versa_client import (  # noqa: E402
    Annotation, Multipart, NotFound, Project, RateLimited, ServiceUnavailable, TrainingRefused, ValidationError,
    Versa, WaitTimeout, safe_extract,
)


class Scripted(BaseHTTPRequestHandler):
    """Answers from the server's `script`: a function (handler, method, path, query, body) → (status, headers, body)."""

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlparse(self.path)
        self.server.seen.append({"method": self.command, "path": url.path, "query": parse_qs(url.query),
                                 "body": body, "headers": dict(self.headers.items())})
        status, headers, payload = self.server.script(self.command, url.path, parse_qs(url.query), body)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key.lower(), value)  # as Node sends them
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _answer


class ServerCase(unittest.TestCase):
    def serve(self, script):
        server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        server.script = script
        server.seen = []
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.sleeps = []
        client = Versa("http://127.0.0.1:%d" % server.server_address[1], token="t", sleep=self.sleeps.append)
        return server, client


class Retries(ServerCase):
    def test_429_then_200_waits_the_retry_after_and_answers(self):
        answers = [(429, {"Retry-After": "3"}, {"detail": "Too many requests; try again in 3 s"}),
                   (200, {}, {"id": 7, "name": "cars", "project_type": "object_detection"})]
        server, versa = self.serve(lambda *a: answers.pop(0))
        project = versa.project(7)
        self.assertIsInstance(project, Project)
        self.assertEqual((project.id, project.name), (7, "cars"))
        self.assertEqual(self.sleeps, [3.0])
        self.assertEqual(len(server.seen), 2)
        self.assertEqual(server.seen[1]["headers"]["Authorization"], "Bearer t")

    def test_503_on_an_upload_resends_the_whole_streamed_body(self):
        answers = [(503, {"Retry-After": "1"}, {"detail": "busy"}),
                   (201, {}, {"created": 1, "duplicates": 0, "rejected": 0, "images": [],
                              "results": [{"original_name": "a.jpg", "outcome": "created", "status": 201, "image_id": 5}]})]
        server, versa = self.serve(lambda *a: answers.pop(0))
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "a.jpg")
            with open(path, "wb") as out:
                out.write(os.urandom(3 << 20))
            report = versa.upload_images(1, [path])
            with open(path, "rb") as handle:
                content = handle.read()
        self.assertEqual(report.image_ids(), [5])
        self.assertEqual(self.sleeps, [1.0])
        first, second = server.seen
        self.assertEqual(first["body"], second["body"])
        self.assertIn(content, second["body"])
        self.assertEqual(int(second["headers"]["Content-Length"]), len(second["body"]))

    def test_without_retry_after_it_backs_off_exponentially_then_raises(self):
        server, versa = self.serve(lambda *a: (503, {}, {"detail": "busy"}))
        versa.http.retries = 3
        with self.assertRaises(ServiceUnavailable) as caught:
            versa.projects()
        self.assertEqual(caught.exception.detail, "busy")
        self.assertEqual(len(server.seen), 4)
        self.assertEqual(len(self.sleeps), 3)
        self.assertTrue(all(0 < s for s in self.sleeps))
        self.assertLess(self.sleeps[0], self.sleeps[2])

    def test_a_retry_after_past_the_limit_is_not_waited_for(self):
        server, versa = self.serve(lambda *a: (429, {"Retry-After": "86400"}, {"detail": "later"}))
        with self.assertRaises(RateLimited) as caught:
            versa.projects()
        self.assertEqual(caught.exception.retry_after, 86400.0)
        self.assertEqual((len(server.seen), self.sleeps), (1, []))

    def test_an_http_date_retry_after_is_read(self):
        from email.utils import formatdate
        import time

        when = formatdate(time.time() + 30, usegmt=True)
        answers = [(429, {"Retry-After": when}, {"detail": "x"}), (200, {}, [])]
        _server, versa = self.serve(lambda *a: answers.pop(0))
        self.assertEqual(versa.projects(), [])
        self.assertEqual(len(self.sleeps), 1)
        self.assertTrue(25 <= self.sleeps[0] <= 31, self.sleeps)

    def test_errors_raise_by_status_with_the_detail(self):
        answers = [(404, {}, {"detail": "Project 9 not found"}),
                   (422, {}, {"detail": [{"loc": ["body", "format"], "msg": "must be one of: coco, yolo", "type": "enum"}]})]
        _server, versa = self.serve(lambda *a: answers.pop(0))
        with self.assertRaises(NotFound) as missing:
            versa.project(9)
        self.assertEqual(missing.exception.detail, "Project 9 not found")
        with self.assertRaises(ValidationError) as invalid:
            versa.export(1, "nope")
        self.assertEqual(invalid.exception.detail[0]["loc"], ["body", "format"])

    def test_training_refusals_are_told_apart_from_bad_requests(self):
        answers = [
            (409, {}, {"detail": "not ready", "readiness": {"score": 20, "threshold": 60}}),
            (422, {}, {"detail": [{"loc": ["body", "adapter"], "msg": "not available: no torch", "type": "x"}]}),
            (422, {}, {"detail": [{"loc": ["body", "model"], "msg": "Unknown model 'yolov8n'", "type": "x"}]}),
        ]
        _server, versa = self.serve(lambda *a: answers.pop(0))
        with self.assertRaises(TrainingRefused) as gate:
            versa.train(1, 2)
        self.assertEqual(gate.exception.readiness["score"], 20)
        with self.assertRaises(TrainingRefused):
            versa.train(1, 2)
        with self.assertRaises(ValidationError) as wrong:
            versa.train(1, 2, model="yolov8n")
        self.assertNotIsInstance(wrong.exception, TrainingRefused)


class Paging(ServerCase):
    def test_follows_link_next_across_pages(self):
        rows = [{"id": i, "image_id": 1, "class_id": 1, "annotation_type": "bbox", "geometry": {}} for i in range(1, 2501)]

        def script(method, path, query, body):
            limit = int(query["limit"][0])
            after = int(query.get("after", ["0"])[0])
            page = [r for r in rows if r["id"] > after][:limit]
            headers = {"X-Total-Count": str(len(rows))}
            if len(page) == limit:
                headers["Link"] = '<%s?limit=%d&after=%d>; rel="next"' % (path, limit, page[-1]["id"])
            return 200, headers, page

        server, versa = self.serve(script)
        listed = versa.annotations(1, page_size=1000)
        seen = [a.id for a in listed]
        self.assertEqual(seen, list(range(1, 2501)))
        self.assertIsInstance(next(iter(listed)), Annotation)
        self.assertEqual(listed.total, 2500)
        self.assertEqual([q["query"].get("after", ["-"])[0] for q in server.seen[:3]], ["-", "1000", "2000"])

    def test_offset_lists_without_link_are_paged_too(self):
        rows = [{"id": i, "name": "e%d" % i} for i in range(1, 251)]

        def script(method, path, query, body):
            limit, offset = int(query["limit"][0]), int(query.get("offset", ["0"])[0])
            return 200, {}, rows[offset:offset + limit]

        _server, versa = self.serve(script)
        self.assertEqual([e.id for e in versa.experiments(1, page_size=100)], list(range(1, 251)))


class Waits(ServerCase):
    def test_wait_job_and_follow_training_stop_at_their_timeout(self):
        _server, versa = self.serve(lambda *a: (200, {}, {"id": 4, "kind": "train", "status": "running", "progress": 0.5}))
        with self.assertRaises(WaitTimeout) as job:
            versa.wait_job(4, timeout=0, poll=0)
        self.assertEqual(job.exception.last.status, "running")
        with self.assertRaises(WaitTimeout):
            versa.follow_training(4, timeout=0, poll=0, progress=lambda run: None)
        with self.assertRaises(TimeoutError):
            versa.wait_version((1, 4), timeout=0, poll=0)

    def test_follow_training_reports_each_poll_and_answers_the_finished_run(self):
        states = [{"id": 4, "status": "running", "epoch": 1, "epochs": 2}, {"id": 4, "status": "succeeded", "epoch": 2,
                                                                            "epochs": 2, "model_id": 9}]
        _server, versa = self.serve(lambda *a: (200, {}, states.pop(0)))
        seen = []
        run = versa.follow_training(4, poll=0, progress=lambda r: seen.append(r.epoch))
        self.assertEqual((run.status, run.model_id, seen), ("succeeded", 9, [1, 2]))


class Progress(unittest.TestCase):
    def test_progress_true_draws_a_tqdm_bar_when_tqdm_is_installed(self):
        import types

        from versa_client.progress import Reporter

        bars = []

        class FakeBar:
            def __init__(self, **options):
                self.options, self.total, self.n, self.closed = options, None, 0, False
                bars.append(self)

            def update(self, step):
                self.n += step

            def close(self):
                self.closed = True

        module = types.ModuleType("tqdm.auto")
        module.tqdm = FakeBar
        saved = {name: sys.modules.get(name) for name in ("tqdm", "tqdm.auto")}
        sys.modules["tqdm"] = types.ModuleType("tqdm")
        sys.modules["tqdm.auto"] = module
        try:
            reporter = Reporter(True, "upload", "B")
            reporter.update(10, 40)
            reporter.update(40, 40)
            reporter.close()
        finally:
            for name, old in saved.items():
                if old is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = old
        self.assertEqual(len(bars), 1)
        self.assertEqual((bars[0].total, bars[0].n, bars[0].closed), (40, 40, True))
        self.assertEqual(bars[0].options["desc"], "upload")

    def test_without_tqdm_a_text_bar_is_written(self):
        import io

        from versa_client import print_progress

        out = io.StringIO()
        print_progress(3, 6, "upload", stream=out)
        print_progress(6, 6, "upload", stream=out)
        self.assertIn("3/6", out.getvalue())
        self.assertTrue(out.getvalue().endswith("6/6\n"))


class Streaming(unittest.TestCase):
    def test_a_multipart_body_is_read_from_disk_a_chunk_at_a_time(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "big.bin")
            with open(path, "wb") as out:
                out.truncate(48 << 20)
            body = Multipart({"name": "x"}, [("file", path, None, None)])
            tracemalloc.start()
            sent = 0
            largest = 0
            for chunk in body:
                sent += len(chunk)
                largest = max(largest, len(chunk))
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        self.assertEqual(sent, body.length)
        self.assertGreater(body.length, 48 << 20)
        self.assertLessEqual(largest, 1 << 20)
        self.assertLess(peak, 8 << 20, "the body was held in memory")

    def test_unpacking_refuses_paths_outside_the_folder(self):
        with tempfile.TemporaryDirectory() as folder:
            archive = os.path.join(folder, "evil.zip")
            with zipfile.ZipFile(archive, "w") as bundle:
                bundle.writestr("ok/a.txt", "fine")
                bundle.writestr("../escape.txt", "no")
            with self.assertRaises(ValueError):
                safe_extract(archive, os.path.join(folder, "out"))
            self.assertFalse(os.path.exists(os.path.join(folder, "escape.txt")))


if __name__ == "__main__":
    unittest.main()
