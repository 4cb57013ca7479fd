"""Real MCP servers for the tests (tests/mcp): mcp-server-time (stdio, from PyPI)
and the in-repo toolbox (tests/mcp/servers/toolbox.py, stdio or streamable HTTP)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dm_cc.config.mcp_servers import ServerDefinition

TOOLBOX = str(Path(__file__).parents[1] / "mcp" / "servers" / "toolbox.py")


def stdio(name: str, *args: str, env: dict[str, str] | None = None) -> ServerDefinition:
    """The toolbox over stdio, called ``name``, with these arguments (and ``env:``)."""
    return ServerDefinition(name, "user", f"test:{name}", command=sys.executable,
                            args=(TOOLBOX, "stdio", *args), env=env or {})


def toolbox_for_the_user(more: str = "", *, settings: str = "") -> Path:
    """The toolbox over stdio as server ``box`` of the user's config.yaml (it starts
    without a trust question), with ``more`` servers after it and ``settings`` (other
    keys) before; the file's path."""
    from dm_cc.config import dirs

    config = dirs.config_dir() / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"{settings}mcp:\n  servers:\n    box: {{command: {sys.executable}, "
                      f"args: [{TOOLBOX}, stdio]}}\n{more}")
    return config


def time_server() -> ServerDefinition:
    program = shutil.which("mcp-server-time")
    if program is None:
        pytest.skip("mcp-server-time is not installed (pip install -e '.[dev]')")
    return ServerDefinition("time", "user", "test:time", command=program,
                            args=("--local-timezone", "UTC"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])




def start_http_toolbox(port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """The toolbox over streamable HTTP on a loopback port (a free one unless
    given), answering; its URL."""
    port = port or free_port()
    server = subprocess.Popen([sys.executable, TOOLBOX, "http", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise RuntimeError("the HTTP toolbox did not start")


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` is gone within ``within`` seconds (a zombie nobody
    reaps counts as gone: it runs nothing)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
