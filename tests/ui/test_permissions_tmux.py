"""``/permissions`` in a real terminal of 80 columns (tmux): the screen fits and folds
dm_cc's own rules, a rule added to the project's file decides the very next call,
the lint's refusal loses nothing, an approval is revoked and the rule removed. One
start of dm_cc for the whole story (each start costs seconds)."""

from __future__ import annotations

import re

import pytest
from support.tmux import TMUX, dm_cc_pane
from support.trust import trust_project

from dm_cc.compose import open_world

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

POLICY = """\
rules:
  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible"}
"""


def test_a_person_adds_a_project_rule_sees_it_decide_revokes_and_removes_it(project):
    (project / ".dm_cc").mkdir()
    policy = project / ".dm_cc" / "policy.yaml"
    policy.write_text(POLICY)
    trust_project(project)
    pane = dm_cc_pane(project, [
        {"tool": "bash", "args": {"command": "git status", "description": "Look"}},
        {"text": "looked once"},
        {"tool": "bash", "args": {"command": "git status", "description": "Look again"}},
        {"text": "looked twice"},
    ], width=80)
    try:
        pane.wait_for("/help lists commands")
        pane.type("/permissions")
        pane.send("Enter")
        pane.wait_for("mcp trust|untrust NAME")
        screen = pane.at_prompt()
        shown = screen[screen.rindex("build> /permissions"):]
        rows = shown[:shown.index("\nbuild>")].splitlines()[1:]
        assert len(rows) < 20 and all(len(row) < 80 for row in rows), shown   # none wrapped
        assert any(re.fullmatch(r"\[guardrails\] \d+ denies no rule can open · /permissions "
                                "guardrails", row) for row in rows), shown
        assert '   1 ask   bash "git push *"  :2  # pushes are visible' in rows

        # the lint refuses a rule that would change nothing; the command comes back
        pane.type("/permissions add --project ask bash git push *")
        pane.send("Enter")
        screen = pane.wait_for("the command is back at the prompt")
        assert "redundant: ask bash 'git push *' never decides" in screen
        assert policy.read_text() == POLICY
        pane.wait_for("\nbuild> /permissions add --project ask bash git push *")
        pane.send("C-u")

        pane.type("/permissions add --project ask bash git status * # look first")
        pane.send("Enter")
        pane.wait_for(".dm_cc/policy.yaml: still trusted: the change is yours")
        pane.at_prompt()
        pane.type("look")
        pane.send("Enter")
        screen = pane.answer("a always", "a")    # read first: a key at once is typing
        assert '← ask bash "git status *" at .dm_cc/policy.yaml:3' in screen
        assert "reason: look first" in screen
        pane.wait_for("Enter keeps it")
        pane.send("Enter")
        pane.wait_for("looked once")
        saved = open_world(cwd=project).approvals.list(agent="build")
        assert [(a.permission, a.agent) for a in saved] == [("bash", "build")]
        pane.at_prompt()

        pane.type("/permissions approvals")
        pane.send("Enter")
        pane.wait_for(f"  {saved[0].id}  build  bash ")
        pane.at_prompt()
        pane.type(f"/permissions revoke {saved[0].id}")
        pane.send("Enter")
        pane.wait_for(f"revoked {saved[0].id}")
        pane.at_prompt()
        pane.type("/permissions remove 2")
        pane.send("Enter")
        pane.wait_for("removed from .dm_cc/policy.yaml:3, in force from now on:")
        pane.at_prompt()
        pane.type("again")
        pane.send("Enter")
        screen = pane.wait_for("looked twice")
        assert 'allowed by allow bash "git status *" at builtin:defaults' in screen
        pane.send("C-d")
        pane.wait_for("[dm_cc exited 0]")
    finally:
        pane.close()
    assert policy.read_text() == POLICY
    world = open_world(cwd=project)
    assert world.approvals.list(agent="build") == [] and not world.trust.pending
