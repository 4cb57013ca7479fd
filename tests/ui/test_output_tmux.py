"""A long command in a real terminal (tmux): its last lines stream under the
spinner, each cut to the width; Ctrl-C keeps what it printed on screen, and the
model's next request has it (the scripted model echoes the last tool result)."""

from __future__ import annotations

import time

import pytest
from support.policy import my_policy
from support.tmux import TMUX, dm_cc_pane

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

COUNT = 'for i in $(seq 1 300); do echo "line $i $(printf "%0100d" 0)"; sleep 0.1; done\n'


def _when(read, text: str, timeout: float = 10) -> str:
    """What ``read`` gives once it holds ``text``."""
    deadline = time.monotonic() + timeout
    while text not in (found := read()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def test_a_long_command_streams_and_ctrl_c_keeps_its_output(project):
    (project / "count.sh").write_text(COUNT)
    my_policy("  - {permission: bash, pattern: '*', action: allow}\n")
    pane = dm_cc_pane(project, [
        {"tool": "bash", "args": {"command": "sh count.sh", "description": "count"}},
        {"text": "The model was sent: ", "echo": True}], width=80)
    try:
        pane.wait_for("/help lists commands")
        pane.type("count")
        pane.send("Enter")
        pane.wait_for("│ line 7 ", timeout=10)
        rows = pane.lines()
        spinner = next(at for at, row in enumerate(rows) if "running bash" in row)
        under = rows[spinner + 1:spinner + 6]
        assert all(row.startswith("  │ line ") and row.endswith("…") for row in under), rows
        assert len(under) == 5 and all(len(row) < 80 for row in under)
        pane.send("C-c")
        screen = pane.wait_for("turn cancelled")
        assert "(cancelled by the user after " in screen
        assert "  │ line 1 000" in screen                       # what it printed stays
        pane.at_prompt()
        pane.type("what did you see?")
        pane.send("Enter")
        pane.wait_for("The model was sent: line 1 000")
        echoed = _when(lambda: pane.screen().split("The model was sent: ")[-1],
                       "(cancelled by the user after ")
        assert "the output above is what it printed until then)" in echoed
    finally:
        pane.close()
