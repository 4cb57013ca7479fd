"""What people expect from the other tools, in a real terminal (issue 23, item 11):
Shift+Tab cycles build → accept edits → auto → plan with the toolbar saying so; in
accept-edits an edit inside the project runs without a question while one outside
it still asks; ``@explore …`` starts that subagent; ``--verbose`` prints where its
debug log is. One start of dm_cc for all of it."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from support.tmux import AFTER_GRACE, TMUX, dm_cc_pane

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

READY = "/help lists commands"


def wait_toolbar(pane, start: str, timeout: float = 10) -> str:
    """The toolbar (the last row drawn), once it starts with ``start``: the mode."""
    deadline = time.monotonic() + timeout
    while True:
        bar = next((line for line in reversed(pane.lines()) if line.strip()), "")
        if bar.startswith(start):
            return bar
        if time.monotonic() > deadline:
            raise AssertionError(f"the toolbar never started with {start!r}: {bar!r}")
        time.sleep(0.05)


def test_shift_tab_accept_edits_and_an_at_mention_in_a_real_terminal(project, tmp_path):
    (project / "auth.py").write_text("def login(): pass\n")
    outside = tmp_path / "outside.txt"
    script = {"replies": [
        {"tool": "write", "args": {"path": "inside.txt", "content": "in\n"}},
        {"tool": "write", "args": {"path": str(outside), "content": "out\n"}},
        {"text": "EXPLORE-SAID auth.py"}],
        "tasks": {"login code": [{"tool": "grep", "args": {"pattern": "def login"}},
                                 {"text": "auth.py:1"}]}}
    pane = dm_cc_pane(project, script, args=("--verbose", "--temperature", "0.2",
                                             "--max-turns", "5"))
    try:
        screen = pane.wait_for(READY)
        log = Path(re.search(r"dm_cc: debug log: (\S+\.log)", screen).group(1))
        assert wait_toolbar(pane, " build · sandbox")
        pane.send("BTab")
        pane.wait_for("→ agent: build · accept edits")
        assert wait_toolbar(pane, " build · accept edits · ")

        pane.type("write both")
        pane.send("Enter")
        screen = pane.wait_for("wants to use write")      # only the one outside asks
        assert "allowed by allow edit \"**\" at builtin:accept-edits" in screen
        assert (project / "inside.txt").read_text() == "in\n"
        assert str(outside) in screen.split("wants to use write")[1]
        time.sleep(AFTER_GRACE)                                 # a person reads it first
        pane.send("n")
        pane.wait_for("stopped: you said no")
        assert not outside.exists()

        pane.send("BTab")
        assert wait_toolbar(pane, " auto")
        pane.send("BTab")
        assert wait_toolbar(pane, " plan · ")
        pane.send("BTab")
        assert wait_toolbar(pane, " build · sandbox")     # round again: accept edits off

        pane.type("@explore find the login code")
        pane.send("Enter")
        screen = pane.wait_for("EXPLORE-SAID auth.py")
        after = screen.split("@explore find the login code")[-1]
        assert "● task explore" in after
        assert "[explore #1] started: find the login code" in after
        assert "[explore #1]   │ auth.py:1:def login(): pass" in after
        assert "✓ [explore #1] done · 1 tool" in after
        assert "model call:" in log.read_text() and "temperature 0.2" in log.read_text()
    finally:
        pane.close()
