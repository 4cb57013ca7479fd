""""Always" in a real terminal (tmux): the rule offered for a script is the script's,
a rule as broad as the whole interpreter is saved only after a warning, and the
repeated-call guard offers no "always" (issue 23, item 2)."""

from __future__ import annotations

import time

import pytest
from support.tmux import AFTER_GRACE, TMUX, dm_cc_pane

from dm_cc.compose import open_world
from dm_cc.ui.approval_prompt import QUIET

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def test_always_offers_the_script_warns_on_the_interpreter_and_never_saves_a_repeat(project):
    (project / "setup.sh").write_text("echo set up\n")
    pane = dm_cc_pane(project, [
        {"tool": "bash", "args": {"command": "bash setup.sh", "description": "Set up"}},
        *[{"tool": "bash", "args": {"command": "ls"}}] * 3,
        {"text": "All set."},
    ])
    try:
        pane.wait_for("/help lists commands")
        pane.type("set things up")
        pane.send("Enter")
        pane.answer('a always (bash "bash setup.sh *")', "a")
        pane.wait_for("allow bash bash setup.sh *")
        pane.send("C-u")
        pane.type("bash *")
        pane.send("Enter")                  # the whole interpreter: a warning, not saved
        screen = pane.wait_for("y keep it anyway")
        assert '! allow bash "bash *" lets bash run any script' in screen
        assert "saved for this project" in screen
        assert open_world(cwd=project).approvals.rules_for("build") == ()
        time.sleep(AFTER_GRACE)                   # a person reads the warning first
        pane.send("e")                      # back to the line, the broad rule in it
        deadline = time.monotonic() + 10
        while pane.screen().count("allow bash bash *") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        pane.send("C-u")
        pane.type("bash setup.sh *")
        pane.send("Enter")
        pane.wait_for("always allowed (saved)")   # said as the answer is given, saved just after
        saved = _saved(project, lambda saved: bool(saved))
        assert [(r.permission, r.pattern) for r in saved] == [("bash", "bash setup.sh *")]

        # the third `ls` in a row; its legend is drawn a moment after its lines
        screen = pane.wait_for('s this session (doom_loop "bash")')
        question = screen[screen.rindex("? build wants to use bash"):]
        assert 's this session (doom_loop "bash")' in question and "a always" not in question
        time.sleep(AFTER_GRACE)
        pane.send("a")                      # no such answer here: ignored (kept for the prompt)
        time.sleep(QUIET)                   # a key right after another is typing, not an answer
        pane.send("y")
        pane.wait_for("All set.")
        saved = open_world(cwd=project).approvals.rules_for("build")   # the turn is over
        assert [r.permission for r in saved] == ["bash"]
        pane.send("C-u", "C-d")             # the kept "a" is at the prompt: clear it, exit
        pane.wait_for("[dm_cc exited 0]")
    finally:
        pane.close()


def _saved(project, done, seconds: float = 5.0):
    """The saved rules once ``done`` says they are complete (or ``seconds`` passed)."""
    deadline = time.monotonic() + seconds
    while True:
        saved = open_world(cwd=project).approvals.rules_for("build")
        if done(saved) or time.monotonic() > deadline:
            return saved
        time.sleep(0.05)
