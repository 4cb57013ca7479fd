"""A loopback HTTP server that keeps every request reaching it: where a leak would go.

    from support.recorder import Recorder, listener   # the fixture, in a test module
    ... f"curl {listener}x" ...
    assert not Recorder.seen, Recorder.seen
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest


class Recorder(BaseHTTPRequestHandler):
    """Every request that reaches it is kept (a leak, if any): method, path, body."""

    seen: list[str] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        Recorder.seen.append(f"{self.command} {self.path} {self.rfile.read(length)!r}")
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"leaked")

    do_GET = do_POST = _answer  # noqa: N815 - the http.server interface

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[str]:
    """The recorder's URL, its record emptied first."""
    Recorder.seen = []
    server = HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
