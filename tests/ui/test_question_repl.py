"""The question's keys and the full views on prompt_toolkit's pipe input: a key pressed
as a question appears is no answer (it is kept for the prompt); ``v`` and
``/expand`` show what the screen cut, whole. (In a real terminal:
test_question_tmux.py.)"""

from __future__ import annotations

import pytest
from support.repl_driver import ENTER, drive
from support.trust import trust_project

from dm_cc.ui.approval_prompt import GRACE, QUIET, TYPING

READY = "/help lists commands"
LEGEND = "y once"
WRITE = {"tool": "write", "args": {"path": "a.txt", "content": "hello\n"}}


def user_messages(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages
            if m.role == "user" and not m.synthetic]


def test_a_key_pressed_as_the_question_appears_is_kept_for_the_prompt(project):
    # the driver types 50 ms after the question appears: sooner than the grace, so the
    # "y" is no answer; once the grace is over and the person has stopped for QUIET, n
    # is. The grace is GRACE's triple here: on a loaded machine the REPL may take
    # longer than GRACE to read a key typed 50 ms after the question was drawn.
    grace = 3 * GRACE
    run = drive(project, [WRITE, {"text": "ok"}],
                [(READY, "write" + ENTER), (LEGEND, "y"), (TYPING, ""),
                 (max(grace, QUIET) + 0.1, "n"), ("you said no", ENTER), ("ok", "")],
                grace=grace)
    assert not run.errors, run.errors
    assert not (project / "a.txt").exists()
    assert user_messages(run) == ["write", "y"]       # the y went to the prompt


@pytest.fixture
def seq_allowed(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'seq *', action: allow}\n")
    trust_project(project)


def test_expand_shows_a_cut_output_whole_and_says_what_it_cannot(project, seq_allowed):
    script = [{"tool": "bash", "args": {"command": "seq 1 40"}}, {"text": "Counted."}]
    run = drive(project, script, [
        (READY, "/expand" + ENTER), ("nothing to expand", "count" + ENTER),
        ("Counted.", "/expand 7" + ENTER), ("no cut output 7", "/expand" + ENTER),
        ("output 1: bash seq 1 40", "G"), ("lines ", "q"), ("build>", "/thinking" + ENTER),
        ("thinking (last turn)", "q")])
    assert not run.errors, run.errors
    assert "  │ … 31 lines hidden (/expand 1) …" in run.screen
    assert "the last 1 are kept (1-1)" in run.screen
    shown = run.after("output 1: bash seq 1 40")
    assert "\n40" in shown and "\n23" in shown            # the lines the screen cut
    assert "The model has shown no thinking in this session" in run.after("/thinking")
