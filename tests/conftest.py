"""Shared fixtures: an isolated project and per-user environment for each test."""

from __future__ import annotations

import os
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
    model (nor OpenTelemetry collector) configured from the environment."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DM_CC_HOME", str(tmp_path / "dmhome"))
    monkeypatch.setenv("DM_CC_MANAGED_DIR", str(tmp_path / "managed"))
    for variable in [name for name in os.environ if name.startswith(("DM_CC_", "OTEL_"))]:
        if variable not in ("DM_CC_HOME", "DM_CC_MANAGED_DIR"):
            monkeypatch.delenv(variable)     # DM_CC_THINKING, OTEL_EXPORTER_OTLP_… set nothing
    return root


#: Variables that would reach a test's model through litellm: a key read from the
#: person's shell must never go to a loopback server, nor decide which path is taken.
PROVIDER_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
                      "GOOGLE_API_KEY", "GEMINI_API_BASE", "ANTHROPIC_API_BASE",
                      "OPENAI_BASE_URL", "OPENAI_API_BASE")


@pytest.fixture(scope="session", autouse=True)
def no_provider_keys() -> Iterator[None]:
    """The run's environment without :data:`PROVIDER_VARIABLES` (a test sets the dummy
    key it needs with monkeypatch), put back at the end."""
    saved = {name: os.environ.pop(name) for name in PROVIDER_VARIABLES if name in os.environ}
    yield
    os.environ.update(saved)


@pytest.fixture(scope="session", autouse=True)
def no_other_homes() -> Iterator[None]:
    """The sandbox in this process sees no home but the test's own (HOME, set per
    test): the secret stores of this machine's /root and /home/* are not the tests'
    to depend on (they would add hidden paths, and a spec derived by root for a
    command run as sbtest would bind over /root, which sbtest cannot enter).
    tests/sandbox/test_secret_stores.py gives other homes explicitly; dm_cc run as a
    process (tests/cli/test_hostile_repo_as_users_e2e.py) sees the real ones."""
    import dm_cc.sandbox.machine as machine

    real = machine.other_homes
    machine.other_homes = lambda home: ()
    yield
    machine.other_homes = real


@pytest.fixture(scope="session")
def litellm_imported():
    """litellm, imported (seconds, once per worker) before the tests that use it run:
    with ``pytestmark = pytest.mark.usefixtures("litellm_imported")``."""
    from dm_cc.llm.litellm_model import _import_litellm

    return _import_litellm()


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
