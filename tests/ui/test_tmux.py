"""dm_cc in a real terminal (tmux): what a person sees and types. Skipped where
tmux is not installed (.ci/run installs it where apt is available)."""

from __future__ import annotations

import time

import pytest
from support.tmux import AFTER_GRACE, TMUX, dm_cc_pane

from dm_cc.compose import open_world

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

POLICY = """\
rules:
  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible to the whole team"}
"""


@pytest.fixture
def pane(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(POLICY)
    opened = dm_cc_pane(project, [
        {"text": "Writing it.", "tool": "write", "args": {"path": "notes.txt", "content": "hi\n"}},
        {"text": "notes.txt is written."},
        {"tool": "bash", "args": {"command": "git push origin main --force-with-lease",
                                  "description": "Publish the branch"}},
        {"text": "Not pushed."},
    ])
    yield opened
    opened.close()


def test_a_person_approves_a_write_for_good_and_denies_a_push(pane, project):
    # the project's policy only asks: trusting it would open nothing, so no question,
    # and no word about trust (its ask rule applies all the same)
    screen = pane.wait_for("/help lists commands")
    assert "Trust this project" not in screen and "not trusted" not in screen
    pane.type("write some notes")
    pane.send("Enter")
    screen = pane.wait_for("a always")
    assert "build wants to use write" in screen and "+hi" in screen
    time.sleep(AFTER_GRACE)                                    # a person reads it first
    pane.send("a")
    pane.wait_for("allow edit notes.txt")
    pane.send("Enter")                                   # save the rule as shown
    pane.wait_for("notes.txt is written.")
    pane.at_prompt()
    assert (project / "notes.txt").read_text() == "hi\n"
    saved = open_world(cwd=project).approvals.list()
    assert [(a.permission, a.pattern) for a in saved] == [("edit", "notes.txt")]

    pane.type("push it")
    pane.send("Enter")
    screen = pane.wait_for("a always")
    assert "$ git push origin main --force-with-lease" in screen
    assert "Publish the branch" in screen
    assert "reason: pushes are visible to the whole team" in screen
    assert ".dm_cc/policy.yaml:2" in screen
    time.sleep(AFTER_GRACE)
    pane.send("C-d")                                     # Ctrl-D at the question denies
    pane.wait_for("stopped: you said no")
    pane.at_prompt()

    pane.type("/help")
    pane.send("Enter")
    pane.wait_for("/permissions")
    screen = pane.at_prompt()
    assert "/agent" in screen and "/why" in screen
    pane.type("/agent list")
    pane.send("Enter")
    screen = pane.wait_for("general ")
    for name in ("build", "plan", "explore", "general"):
        assert f" {name} " in screen
    pane.send("C-d")
    pane.wait_for("[dm_cc exited 0]")


def test_a_running_subagent_has_a_live_progress_line(project):
    (project / "app.py").write_text("print('hi')\n")
    pane = dm_cc_pane(project, {
        "replies": [{"tool": "task", "args": {"description": "scan the tree", "prompt": "scan it all",
                                              "subagent_type": "explore"}},
                    {"text": "Scanned."}],
        "tasks": {"scan it all": [{"tool": "glob", "args": {"pattern": "*.py"}},
                                  {"text": "found app.py", "delay": 1.5}]}})
    try:
        screen = pane.wait_for("/help lists commands")
        # a repository without .dm_cc/: nothing to trust, nothing said about it
        assert "Trust this project" not in screen and "trust" not in screen.lower()
        pane.type("scan")
        pane.send("Enter")
        screen = pane.wait_for("[explore #1] scan the tree … 1 tool, ", timeout=5)
        assert "running task" in screen                       # the spinner above it
        assert '  [explore #1] ● glob "*.py" in .' in screen  # its call, indented under it
        screen = pane.wait_for("Scanned.", timeout=5)
        assert "✓ [explore #1] done · 1 tool, " in screen
        assert "scan the tree … " not in screen and "running task" not in screen  # erased
    finally:
        pane.close()


def test_a_large_paste_is_a_placeholder_in_the_box_and_reaches_the_model_whole(project):
    (project / "big.py").write_text("".join(f"x = {n}\n" for n in range(120)))
    log = "".join(f"Traceback line {n}\n" for n in range(3000))
    pane = dm_cc_pane(project, [{"tool": "read", "args": {"path": "big.py"}},
                                {"text": "Read the log."}], width=100)
    try:
        pane.wait_for("/help lists commands")
        pane.type("why does this fail? ")
        pane.paste(log)
        screen = pane.wait_for("[pasted 3000 lines #1]", timeout=5)
        assert "why does this fail? [pasted 3000 lines #1]" in screen
        assert "Traceback line 2999" not in screen and "Traceback line 1" not in screen
        pane.type(" thanks")
        pane.send("Enter")
        screen = pane.wait_for("Read the log.", timeout=5)
        assert "  Read 120 lines" in screen                  # not "read 1 lines"
        assert "Traceback line" not in screen                 # the box kept the placeholder
        session = open_world(cwd=project).sessions.list(project)[-1]
        sent = open_world(cwd=project).sessions.load(session.id).messages[0].content
        assert sent == f"why does this fail? {log} thanks"   # what the model is given
        pane.send("C-d")
    finally:
        pane.close()
