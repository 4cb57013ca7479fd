"""A real terminal for end-to-end tests: dm_cc in a tmux pane, driven with
send-keys and read with capture-pane, as a person would. Each test gets its own
tmux server (``-L``), killed afterwards."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

TMUX = shutil.which("tmux")


class Pane:
    def __init__(self, cwd: Path, env: Mapping[str, str], *args: str) -> None:
        self.socket = f"dmcc-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = (f"cd {shlex.quote(str(cwd))} && env {exports} "
                   f"{shlex.quote(sys.executable)} -m dm_cc {' '.join(map(shlex.quote, args))}"
                   "; echo '[dm_cc exited '$?']'; sleep 60")
        self._tmux("new-session", "-d", "-x", "140", "-y", "45", command)

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        return subprocess.run([TMUX, "-L", self.socket, *args], check=True,
                              capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-S", "-500")

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")
            time.sleep(0.1)

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)

    def close(self) -> None:
        subprocess.run([TMUX or "tmux", "-L", self.socket, "kill-server"], capture_output=True)
