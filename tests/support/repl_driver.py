"""Drive the real REPL headless: prompt_toolkit pipe input, plain-text output.

The REPL runs in the main thread (as in a terminal: Ctrl-C during a turn is a
real SIGINT); a feeder thread waits for text to appear on the screen and then
types, so every key arrives when a person's would.
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput

from dm_cc.compose import Options, World, open_world
from dm_cc.ui.repl import Repl

ESC = "\x1b"
ENTER = "\r"
CTRL_C = "\x03"
CTRL_D = "\x04"
SHIFT_TAB = "\x1b[Z"
ALT_ENTER = "\x1b\r"
SIGINT = object()   # a step that sends SIGINT to the process (Ctrl-C in a cooked terminal)


class Screen(io.StringIO):
    """What the REPL wrote, readable from the feeder thread."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            return super().write(text)

    def text(self) -> str:
        with self.lock:
            return self.getvalue()


@dataclass
class Run:
    code: int
    screen: str
    repl: Repl
    errors: list[str] = field(default_factory=list)

    def after(self, marker: str) -> str:
        return self.screen[self.screen.index(marker):]


def write_script(project: Path, replies: list[dict] | dict) -> str:
    """A scripted model's file: a list of replies, or ``{replies: [...], tasks: {...}}``
    (``dm_cc.llm.scripted.load_script``)."""
    path = project / ".script.yaml"
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def drive(project: Path, replies: list[dict] | dict | None, steps: Sequence[tuple[str, object]],
          *, options: Options | None = None, timeout: float = 15, loading: float = 0,
          grace: float = 0.0) -> Run:
    """Start the REPL in ``project`` with a scripted model; for each step wait until
    its text is on screen (counting from where the previous step's text was found),
    then send its keys. Ends with Ctrl-D (twice, in case a question is open).
    ``loading``: seconds the world takes to load (a slow disk), so that keys can be
    typed at the first prompt before anything is asked. ``grace``: how long after a
    question appears a key may answer it (``ReplApprover.grace``; a person takes
    longer than that to read one, the driver 50 ms): 0 answers at once, as tests
    not about it want; keys typed in a flow still wait for QUIET. ``replies`` None:
    the model is the one ``options`` names (a real one, against a loopback server)."""
    options = options or Options()
    if replies is not None:
        options = options._replace(model=write_script(project, replies))
    screen = Screen()
    errors: list[str] = []
    with create_pipe_input() as pipe, create_app_session(input=pipe,
                                                         output=PlainTextOutput(screen)):
        def load() -> World:
            time.sleep(loading)
            return open_world(options, cwd=project)

        repl = Repl(load, None)
        repl.approver.grace = grace
        ended = threading.Event()   # the REPL returned: nothing more will show

        def feed() -> None:
            seen = 0
            try:
                for wanted, keys in steps:
                    if isinstance(wanted, float):   # a pause (nothing new may show meanwhile)
                        time.sleep(wanted)
                        pipe.send_text(str(keys))
                        continue
                    deadline = time.monotonic() + timeout
                    while (found := screen.text().find(wanted, seen)) < 0:
                        if ended.is_set():
                            return
                        if time.monotonic() > deadline:
                            errors.append(f"timed out waiting for {wanted!r}")
                            return
                        time.sleep(0.02)
                    seen = found + len(wanted)
                    time.sleep(0.05)
                    if keys is SIGINT:
                        os.kill(os.getpid(), signal.SIGINT)
                    else:
                        pipe.send_text(str(keys))
            finally:
                time.sleep(0.3)
                for _ in range(3):
                    if ended.is_set():
                        break
                    pipe.send_text(CTRL_D)
                    time.sleep(0.2)

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        try:
            code = asyncio.run(asyncio.wait_for(repl.run(), timeout=timeout * 3))
        finally:
            ended.set()
        feeder.join(timeout)
    return Run(code, screen.text(), repl, errors)
