"""Shared fixtures: an isolated project and per-user environment for each test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git project in tmp_path with HOME, DM_CC_HOME and DM_CC_MANAGED_DIR pointing
    at empty temporary dirs (the real /etc and ~/.config are never read) and no
    model configured from the environment."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DM_CC_HOME", str(tmp_path / "dmhome"))
    monkeypatch.setenv("DM_CC_MANAGED_DIR", str(tmp_path / "managed"))
    for variable in ("DM_CC_MODEL", "DM_CC_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    return root


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from loopback")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[str]:
    """The URL of an HTTP server on 127.0.0.1 (outside any sandbox) that answers
    every GET with ``hello from loopback``."""
    server = HTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
