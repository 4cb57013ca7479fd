"""Opening a cloned repository with its own .dm_cc/ in a real terminal (tmux), as a
person does: the question at start, y and n, a second start, a changed file, and a
message typed while the question comes. (A project whose files only deny and ask,
and one without .dm_cc/, are in test_tmux.py: no question, no word of trust.)
Skipped where tmux is not installed."""

from __future__ import annotations

import time

import pytest
from support.tmux import AFTER_GRACE, TMUX, dm_cc_pane

from dm_cc.compose import open_world
from dm_cc.ui.approval_prompt import QUIET

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

READY = "/help lists commands"
QUESTION = "? Trust this project's dm_cc files as they are now?"
LEGEND = "y trust them"
POLICY = """\
rules:
  - {permission: bash, pattern: "npm test *", action: allow}
  - {permission: bash, pattern: "touch *", action: allow}
  - {permission: edit, pattern: "src/**", action: allow}
  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible"}
"""
# the model runs the project's tests: a command its policy allows, and nothing else does
TESTS = [{"tool": "bash", "args": {"command": "touch src/tests-ran",
                                   "description": "Run the tests"}},
         {"text": "The tests ran."}]


@pytest.fixture
def cloned(long_path_project):
    """A repository as cloned: its policy lets the agent run the tests and edit src/."""
    project = long_path_project
    (project / "src").mkdir()
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(POLICY)
    return project


def flat(screen: str) -> str:
    """The screen's words, one space apart: a paragraph reads the same however wrapped."""
    return " ".join(screen.split())


def wait_flat(pane, text: str, timeout: float = 20) -> str:
    """The screen once ``text`` is on it, however wrapped (a busy machine draws a long
    line in pieces: the whole of it, not its start)."""
    deadline = time.monotonic() + timeout
    while (screen := pane.screen()) and text not in flat(screen):
        assert time.monotonic() < deadline, f"{text!r} never appeared; the screen:\n{screen}"
        time.sleep(0.1)
    return screen


def question(pane) -> list[str]:
    """The question's rows as drawn, from its first line to its legend."""
    rows = pane.lines()
    first = max(n for n, row in enumerate(rows) if row.startswith(QUESTION))
    return rows[first:next(n for n in range(first, len(rows)) if LEGEND in rows[n]) + 1]


def test_y_trusts_the_files_their_rules_apply_and_the_next_start_does_not_ask(cloned):
    pane = dm_cc_pane(cloned, TESTS, width=80, starts=3)
    try:
        screen = pane.wait_for(LEGEND)
        said = flat(screen)
        assert QUESTION in screen and f"This project ({cloned}) has its own dm_cc files" in said
        assert "Once you trust them, what they allow happens without asking you" in said
        assert ".dm_cc/policy.yaml  (not trusted yet)" in screen
        for rule in ("allow bash 'npm test *'", "allow bash 'touch *'", "allow edit 'src/**'"):
            assert f"        {rule}\n" in screen                 # what trusting would open
        assert "git push" not in screen                          # an ask opens nothing
        assert "Even trusted, they never open a path outside the project, the network, " \
               "running outside the sandbox or dm_cc's own files" in said
        assert "Change your mind later: `dm_cc trust` trusts them, `dm_cc untrust` forgets " \
               "them" in said
        assert "n no (asked again only if they change)" in screen
        # it fits an 80-column terminal: no row was cut by the terminal mid-word
        shown = question(pane)
        assert len(shown) < 20 and all(len(row) < 80 for row in shown), shown

        time.sleep(AFTER_GRACE)                                        # read, then answer
        pane.send("y")
        pane.wait_for("trusted as they are now (dm_cc untrust forgets it)")
        screen = pane.wait_for(READY)
        assert "not trusted" not in screen[screen.index("trusted as they are now"):]
        pane.type("run the tests")
        pane.send("Enter")
        screen = pane.wait_for("The tests ran.")
        assert "wants to use" not in screen                      # no question: the rule allows it
        assert 'allowed by allow bash "touch *" at .dm_cc/policy.yaml:3' in screen
        assert (cloned / "src" / "tests-ran").exists()
        pane.send("C-d")

        pane.again()                                             # the next start: nothing to ask
        screen = pane.wait_for(READY)
        assert "Trust this project" not in screen and "not trusted" not in screen
        pane.send("C-d")

        pane.wait_for("[dm_cc exited 0]")
        with (cloned / ".dm_cc" / "policy.yaml").open("a") as policy:
            policy.write("  - {permission: bash, pattern: 'make *', action: allow}\n")
        pane.again()                                             # it changed: asked again
        screen = pane.wait_for(LEGEND)
        assert ".dm_cc/policy.yaml  (CHANGED since you trusted it)" in screen
        assert "        allow bash 'make *'\n" in screen
        time.sleep(AFTER_GRACE)
        pane.send("Escape")                                      # Esc says no
        pane.wait_for("not trusted: only their deny and ask rules apply (later: dm_cc trust)")
        pane.wait_for(READY)
        wait_flat(pane, "! the project's own files are not trusted (.dm_cc/policy.yaml)")
        pane.send("C-d")
        pane.wait_for("[dm_cc exited 0]")
    finally:
        pane.close()


def test_no_keeps_their_allow_rules_out_and_the_next_start_does_not_ask(cloned):
    """The person starts typing at once, before the question is there (the early prompt
    invites it): what they type never answers it and is not lost."""
    pane = dm_cc_pane(cloned, TESTS, width=220, starts=2)   # the toolbar names the script
    try:
        pane.type("run every test", pause=0.04)        # its y and n are no answer
        pane.wait_for(QUESTION)
        # a person reads, then answers: well after the last key (on a busy machine the
        # question can appear while the keys still arrive)
        time.sleep(QUIET + 0.8)
        assert LEGEND in pane.screen(), "what was typed answered the question"
        pane.send("n")
        # the notice after the answer (the question's own words say "not trusted" too,
        # and READY was drawn before it: wait for the notice itself)
        wait_flat(pane, "! the project's own files are not trusted (.dm_cc/policy.yaml): only "
                        "their deny and ask rules apply")
        # the toolbar, once redrawn after the answer (a busy machine draws it later)
        pane.wait_for("policy: .dm_cc/policy.yaml (not trusted: /trust)")
        screen = pane.wait_for("> run every test")               # what was typed, kept
        assert open_world(cwd=cloned).approvals.trusted_files() == {}
        pane.send("Enter")
        screen = pane.wait_for("n no, stop the turn")            # the call is asked
        assert "$ touch src/tests-ran" in screen
        assert 'asks: bash "touch src/tests-ran"  ← ask * "*" at builtin:defaults' in screen
        time.sleep(AFTER_GRACE)
        pane.send("n")
        pane.wait_for("stopped: you said no")
        assert not (cloned / "src" / "tests-ran").exists()
        pane.at_prompt()
        pane.type("/trust")
        pane.send("Enter")
        screen = pane.wait_for("This session runs without them.")
        assert ".dm_cc/policy.yaml  (not trusted: you said no)" in screen
        assert "run `dm_cc trust` in a shell and start dm_cc again" in flat(screen)
        pane.send("C-d")

        pane.again()                                     # said no to this content: not asked
        pane.wait_for(READY)
        # the notice under the first lines (drawn in pieces, above the prompt)
        screen = wait_flat(pane, "! the project's own files are not trusted")
        assert "Trust this project" not in screen
        pane.send("C-d")
        pane.wait_for("[dm_cc exited 0]")
    finally:
        pane.close()
