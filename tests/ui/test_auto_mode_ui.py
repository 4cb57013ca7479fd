"""Auto mode in the REPL: Shift+Tab reaches it (build → accept edits → auto → plan),
the toolbar says whether it is in effect, and a command build would ask about runs without a
question -- or, where commands do not run as transactions, the start says so and
the question comes as in build."""

from __future__ import annotations

import os
from pathlib import Path

from support.repl_driver import ENTER, SHIFT_TAB, drive

from dm_cc.compose import Options

READY = "/help lists commands"
LEGEND = "y once"
TOUCH = {"tool": "bash", "args": {"command": "touch made.txt"}}


def toolbar(run) -> str:
    return "".join(text for _, text in run.repl.prompt._toolbar())


def sandbox_off() -> None:
    config = Path(os.environ["DM_CC_HOME"]) / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('sandbox: "off"\n')


def test_shift_tab_reaches_auto_and_a_command_runs_without_a_question(project):
    run = drive(project, [TOUCH, {"text": "touched"}],
                [(READY, SHIFT_TAB), ("accept edits", SHIFT_TAB), ("agent: auto", "make it" + ENTER),
                 ("touched", "")])
    assert not run.errors
    assert (project / "made.txt").exists()
    assert LEGEND not in run.screen
    assert toolbar(run).startswith(" auto · effects judged · ")


def test_where_auto_is_not_in_effect_the_toolbar_and_the_start_say_why(project):
    sandbox_off()
    run = drive(project, [TOUCH], [(READY, "make it" + ENTER), (LEGEND, "n")],
                options=Options(agent="auto"))
    assert not run.errors
    assert "! auto mode is not in effect: " in run.screen
    assert not (project / "made.txt").exists()
    assert toolbar(run).startswith(" auto (not in effect: ")


def test_where_no_transaction_can_be_set_up_the_toolbar_says_effects_are_not_judged(
        project, monkeypatch):
    monkeypatch.setenv("DM_CC_HOME", str(project / ".dmhome"))   # state dir in the project
    run = drive(project, [TOUCH], [(READY, "make it" + ENTER), (LEGEND, "n")],
                options=Options(agent="auto"))
    assert not run.errors
    assert "! auto mode is not in effect: dm_cc's state directory is inside the project" \
        in run.screen
    assert not (project / "made.txt").exists()
    bar = toolbar(run)
    assert bar.startswith(" auto (not in effect: ") and "bwrap, effects not judged" in bar, bar


def test_build_says_nothing_of_auto_mode(project):
    run = drive(project, [{"text": "hello"}], [(READY, "hi" + ENTER), ("hello", "")])
    assert not run.errors
    assert toolbar(run).startswith(" build · ")
    assert "auto mode" not in run.screen
