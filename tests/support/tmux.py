"""A real terminal for end-to-end tests: dm_cc in a tmux pane, driven with
send-keys and read with capture-pane, as a person would. Each test gets its own
tmux server (``-L``), killed afterwards.

    pane = dm_cc_pane(project, script, width=80, starts=2)
    pane.wait_for("/help lists commands")     # in what this start of dm_cc drew
    pane.paste("two\nlines")                  # bracketed, as a terminal pastes
    pane.send("C-d")
    pane.again()                              # dm_cc exited: start it once more

``starts``: dm_cc runs that many times in the pane, one after the other, each
started by :meth:`Pane.again` once the one before has exited (so a test can change
the project between two starts); :meth:`Pane.wait_for` reads only what the current
start drew.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from dm_cc.ui.approval_prompt import GRACE

TMUX = shutil.which("tmux")
# A question's lines are drawn a moment before its grace starts (then it reads keys),
# and a loaded machine stretches that moment: a person's key comes well after GRACE;
# a test's key must too, or it is rightly kept as typing.
AFTER_GRACE = 3 * GRACE
EXITED = "[dm_cc exited "


class Pane:
    def __init__(self, cwd: Path, env: Mapping[str, str], *args: str, width: int = 140,
                 starts: int = 1, dm_cc: Sequence[str] = ()) -> None:
        """``dm_cc``: the command line that starts dm_cc, environment included (for
        another user: support.dm_cc_as.dm_cc_command); by default the tests' Python
        with ``env``."""
        self.socket = f"dmcc-{uuid.uuid4().hex[:8]}"
        self.width = width
        self._ended = 0     # starts of dm_cc that ended before the current one
        exports = [f"{k}={v}" for k, v in env.items()]
        start = dm_cc or ["env", *exports, sys.executable, "-m", "dm_cc"]
        run = f"{shlex.join([*start, *args])}; echo '{EXITED}'$?']'"
        command = (f"cd {shlex.quote(str(cwd))} && " + "; read -r _; ".join([run] * starts)
                   + "; sleep 60")
        self._tmux("new-session", "-d", "-x", str(width), "-y", "45", command)

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        return subprocess.run([TMUX, "-L", self.socket, *args], check=True,
                              capture_output=True, text=True).stdout

    def screen(self) -> str:
        """What this start of dm_cc drew (wrapped lines joined)."""
        whole = self._tmux("capture-pane", "-p", "-J", "-S", "-2000")
        return EXITED.join(whole.split(EXITED)[self._ended:])

    def styled(self) -> str:
        """The screen with its colours and attributes (escape sequences)."""
        return self._tmux("capture-pane", "-p", "-e", "-S", "-2000")

    def lines(self) -> list[str]:
        """The screen's rows as drawn (not joined): none is wider than the pane."""
        return self._tmux("capture-pane", "-p", "-S", "-2000").splitlines()

    def visible(self) -> list[str]:
        """The rows on screen now, as drawn (what scrolled away is not among them)."""
        return self._tmux("capture-pane", "-p").splitlines()

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")
            time.sleep(0.1)

    def wait_unwrapped(self, text: str, timeout: float = 20) -> str:
        """:meth:`wait_for`, however ``text`` is wrapped (prompt_toolkit wraps a long
        line mid-word, with its own line breaks): compared without whitespace."""
        wanted = "".join(text.split())
        deadline = time.monotonic() + timeout
        while wanted not in "".join((screen := self.screen()).split()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")
            time.sleep(0.1)
        return screen

    def at_prompt(self, prompt: str = "build>", timeout: float = 20) -> str:
        """Once the REPL is back at an empty prompt (its row above the toolbar), as a
        person waits for it before typing the next message. Keys typed sooner, while
        a turn or a slash command still ends, wait in the terminal, which turns Enter
        into a new line in the box (docs/repl.md): a test that types then is racing."""
        deadline = time.monotonic() + timeout
        while True:
            rows = [row.rstrip() for row in self.visible() if row.strip()]
            if len(rows) >= 2 and rows[-2] == prompt:
                return self.screen()
            if time.monotonic() > deadline:
                raise AssertionError(f"the prompt {prompt!r} never came back; the screen:\n"
                                     f"{self.screen()}")
            time.sleep(0.05)

    def again(self) -> None:
        """Once dm_cc has exited, start it again (Enter, as a person re-runs it)."""
        self.wait_for(EXITED)
        self._ended += 1
        self.send("Enter")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def answer(self, legend: str, *keys: str) -> str:
        """Once ``legend`` is on screen, read the question as a person does (a key
        sooner than ``GRACE`` after it appears does not answer it), then press ``keys``;
        returns the screen with the question."""
        screen = self.wait_for(legend)
        time.sleep(AFTER_GRACE)
        self.send(*keys)
        return screen

    def type(self, text: str, pause: float = 0) -> None:
        """Type ``text`` at once, or a key every ``pause`` seconds, as a person does."""
        if not pause:
            self._tmux("send-keys", "-l", text)
            return
        for char in text:
            self._tmux("send-keys", "-l", char)
            time.sleep(pause)

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does: bracketed (``paste-buffer -p``) when the
        program asked for it, as prompt_toolkit does."""
        with tempfile.NamedTemporaryFile("w", suffix=".paste", delete=False) as handle:
            handle.write(text)
        try:
            self._tmux("load-buffer", "-b", "paste", handle.name)
            self._tmux("paste-buffer", "-p", "-d", "-b", "paste")
        finally:
            os.unlink(handle.name)

    def close(self) -> None:
        subprocess.run([TMUX or "tmux", "-L", self.socket, "kill-server"], capture_output=True)


def dm_cc_pane(project: Path, script: list | dict, *, width: int = 140,
               starts: int = 1, args: Sequence[str] = ()) -> Pane:
    """dm_cc in a tmux pane in ``project``, playing ``script`` (a scripted model), with
    ``args`` on its command line; the code under test (PYTHONPATH, when set) rather
    than whatever dm_cc is installed."""
    path = project / ".script.yaml"
    path.write_text(yaml.safe_dump(script))
    env = {k: os.environ[k] for k in ("HOME", "DM_CC_HOME", "DM_CC_MANAGED_DIR", "PATH",
                                      "PYTHONPATH") if k in os.environ}
    return Pane(project, {**env, "TERM": "xterm-256color"}, "--model", f"scripted:{path}",
                *args, width=width, starts=starts)
