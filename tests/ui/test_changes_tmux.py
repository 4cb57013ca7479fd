"""A command's changes asked about in a real terminal (tmux), as a person sees them:
the command ran as a transaction (real bubblewrap), and the effect question lists
what it changed with the diffs; y applies the changes marked ?, n discards them.
Skipped where tmux is not installed."""

from __future__ import annotations

import json
import time

import pytest
from support.policy import COMMANDS_AND_EDITS, my_policy
from support.tmux import AFTER_GRACE, TMUX, dm_cc_pane

from dm_cc.sandbox.host import availability

pytestmark = [pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
              pytest.mark.skipif(not availability().usable, reason="bubblewrap cannot run here")]

READY = "/help lists commands"
LEGEND = "y apply them"
CODE = ("import os; t = open('notes.txt').read(); "
        "open('notes.txt', 'w').write(t.replace('two', 'TWO')); os.remove('old.txt')")
SCRIPT = [{"tool": "bash", "args": {"command": "python3 -c " + json.dumps(CODE),
                                    "description": "Tidy the notes"}},
          {"text": "Tidied."}]


@pytest.fixture
def pane(project):
    """dm_cc in a project whose user policy allows every command and edit, and asks
    before anything is deleted."""
    my_policy(COMMANDS_AND_EDITS, "  - {permission: delete, pattern: '**', action: ask}\n")
    (project / "notes.txt").write_text("one\ntwo\nthree\n")
    (project / "old.txt").write_text("old\n")
    opened = dm_cc_pane(project, SCRIPT, width=100)
    opened.wait_for(READY)
    opened.type("tidy the notes")
    opened.send("Enter")
    yield opened
    opened.close()


def asked(pane) -> list[str]:
    """The question's rows, from its heading to its legend, once a person has read it
    (a key sooner does not answer it)."""
    rows = pane.wait_for(LEGEND).splitlines()
    time.sleep(AFTER_GRACE)
    first = max(n for n, row in enumerate(rows) if row.startswith("? The command changed"))
    return rows[first:next(n for n in range(first, len(rows)) if LEGEND in rows[n]) + 1]


def test_the_question_lists_the_changes_with_the_diffs_and_y_applies_them(pane, project):
    question = asked(pane)
    assert question[0] == "? The command changed the project. Apply the changes marked ?"
    assert "  $ python3 -c " + json.dumps(CODE) in question
    assert "    modified notes.txt" in question
    assert any(row.startswith("  ? deleted old.txt  (asked about by rule `ask delete **` at ")
               and row.endswith("policy.yaml:4)") for row in question)
    for row in ("  -old", "  -two", "  +TWO", "  (the changes below land whatever you answer)"):
        assert row in question
    assert "s session" not in question[-1] and "always" not in question[-1]
    pane.send("y")
    assert "\n  applied\n" in pane.wait_for("Tidied.")
    assert not (project / "old.txt").exists()
    assert (project / "notes.txt").read_text() == "one\nTWO\nthree\n"
    assert "did not" not in pane.screen()           # all landed: no word about it
    pane.at_prompt()
    pane.type("/undo")                               # and /undo takes the command back
    pane.send("Enter")
    pane.wait_for("restored old.txt")
    assert (project / "old.txt").read_text() == "old\n"
    assert (project / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_n_discards_the_asked_changes_and_stops_the_turn(pane, project):
    asked(pane)
    pane.send("n")
    screen = pane.wait_for("stopped: you said no")
    assert "  discarded\n  changes: 1 landed, 1 did not:\n    ✗ deleted old.txt: " in screen
    assert "Tidied." not in screen and "(of this command" not in screen   # the model's words
    assert (project / "old.txt").read_text() == "old\n"
    # the edit was allowed: it lands whatever the answer, as the question said
    assert (project / "notes.txt").read_text() == "one\nTWO\nthree\n"


def test_shift_tab_reaches_auto_and_the_toolbar_says_effects_are_judged(project):
    opened = dm_cc_pane(project, [{"text": "hello"}], width=140)
    try:
        opened.wait_for(READY)
        opened.send("BTab")                     # build → accept edits → auto
        opened.wait_for("accept edits")
        opened.send("BTab")
        screen = opened.wait_for("auto · effects judged")
        assert "→ agent: auto" in screen or "auto>" in screen
    finally:
        opened.close()
