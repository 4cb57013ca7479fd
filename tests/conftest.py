"""Shared fixtures: an isolated project and per-user environment for each test."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

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


LONG_PATH = 60   # characters: a long project path, and the same wherever pytest runs


@pytest.fixture
def long_path_project(project) -> Iterator[Path]:
    """:func:`project` (its environment) at a path exactly :data:`LONG_PATH` characters
    long, for what is laid out around the path (tmp_path's length depends on the test's
    name and on the pytest worker)."""
    base = Path(tempfile.mkdtemp(prefix="dmcc-"))
    root = base / "a-project-with-a-long-name".ljust(LONG_PATH - len(str(base)) - 1, "x")
    (root / ".git").mkdir(parents=True)
    assert len(str(root)) == LONG_PATH
    yield root
    shutil.rmtree(base, ignore_errors=True)


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
