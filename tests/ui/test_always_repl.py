"""The "always" line in the pipe-driven REPL: a rule as broad as a whole interpreter is
kept only after a warning and y; for the session the warning says so."""

from __future__ import annotations

from support.repl_driver import ENTER, drive

LEGEND = "y once"
READY = "/help lists commands"
RUN = "python3 mk.py one"


def _script(project):
    (project / "mk.py").write_text("import os, sys\nos.makedirs(sys.argv[1], exist_ok=True)\n")
    return [{"tool": "bash", "args": {"command": RUN}}, {"text": "made"}]


def test_a_broad_rule_is_saved_only_once_the_person_insists(project):
    run = drive(project, _script(project), [
        (READY, "go" + ENTER), ('a always (bash "python3 mk.py *")', "a"),
        ("allow bash ", "\x7f" * len("python3 mk.py *") + "python3 *" + ENTER),
        ("y keep it anyway", "y"), ("made", "")])
    assert not run.errors
    assert '! allow bash "python3 *" lets python3 run any script or code' in run.screen
    assert "saved for this project" in run.screen
    saved = run.repl.world.approvals.list()
    assert [(a.permission, a.pattern) for a in saved] == [("bash", "python3 *")]


def test_the_session_warning_says_session_and_esc_goes_back_to_edit(project):
    run = drive(project, _script(project), [
        (READY, "go" + ENTER), (LEGEND, "s"),
        ("allow bash ", "\x7f" * len("python3 mk.py *") + "*" + ENTER),
        ("y keep it anyway", "\x1b"),
        ("allow bash ", "\x7f" + "python3 mk.py *" + ENTER), ("made", "")])
    assert not run.errors
    assert '! allow bash "*" matches any command: it would be kept for this session' in run.screen
    assert run.screen.count("y keep it anyway") == 1           # the narrow rule: no warning
    assert run.repl.world.approvals.list() == []
    kept = run.repl.world.answers.rules("build")
    assert [r.pattern for r in kept] == ["python3 mk.py *"]
