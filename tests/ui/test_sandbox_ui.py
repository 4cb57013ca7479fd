"""The sandbox as the person sees it: the start-up warning (said once), the
toolbar's state, and the question to run a command the sandbox stopped outside
it, with its answers and rules; on prompt_toolkit's pipe input and in tmux."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
import yaml
from support.bwrap import kept_out
from support.repl_driver import ENTER, drive
from support.tmux import AFTER_GRACE, TMUX, Pane
from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.sandbox.host import availability
from dm_cc.ui.sandbox_text import ESCAPE_QUESTION

needs_bwrap = pytest.mark.skipif(not availability().usable,
                                 reason=f"bubblewrap cannot confine here: {availability().reason}")

READY = "/help lists commands"
LEGEND = "y run it outside once"    # the escape question's keys, drawn last


@pytest.fixture
def without_bwrap(monkeypatch, tmp_path):
    """PATH without bwrap (and availability() asked again) for this test only."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for name in ("bash", "git"):
        if (found := shutil.which(name)) is not None:
            (bin_dir / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    availability.cache_clear()
    yield
    availability.cache_clear()


def set_mode(mode: str) -> None:
    config = Path(os.environ["DM_CC_HOME"]) / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'sandbox: "{mode}"\n')


def toolbar(run) -> str:
    return "".join(text for _, text in run.repl.prompt._toolbar())


# ---------------------------------------------------------------------- warning, toolbar


def test_without_bubblewrap_the_repl_says_so_once_and_the_toolbar_shows_it(project,
                                                                           without_bwrap):
    run = drive(project, [{"text": "hello"}, {"text": "again"}],
                [(READY, "hi" + ENTER), ("hello", "/clear" + ENTER), ("build>", "")])
    assert not run.errors
    warning = "! sandbox: commands run unconfined: bubblewrap (bwrap) is not installed"
    assert run.screen.count(warning) == 1
    assert run.screen.index(warning) < run.screen.index("hello")
    assert "sandbox: none (bubblewrap missing) · policy:" in toolbar(run)


def test_required_without_bubblewrap_warns_that_bash_will_refuse(project, without_bwrap):
    set_mode("required")
    run = drive(project, [{"text": "hello"}], [(READY, "hi" + ENTER), ("hello", "")])
    assert "! sandbox: required, but bubblewrap cannot confine commands here, so the bash " \
           "tool will refuse to run" in run.screen
    assert "sandbox: required: unavailable · " in toolbar(run)


def test_off_says_nothing(project, without_bwrap):
    set_mode("off")
    run = drive(project, [{"text": "hello"}], [(READY, "hi" + ENTER), ("hello", "")])
    assert "! sandbox" not in run.screen
    assert "sandbox: off · " in toolbar(run)


@needs_bwrap
def test_with_bubblewrap_nothing_is_said_and_the_toolbar_says_bwrap(project):
    run = drive(project, [{"text": "hello"}], [(READY, "hi" + ENTER), ("hello", "")])
    assert "! sandbox" not in run.screen
    assert "sandbox: bwrap · " in toolbar(run)


# ---------------------------------------------------------------------- the escape question


def probe_call(target: Path) -> list[dict]:
    """An allowed python3 call whose code writes outside the project, then an answer."""
    code = f"open('{target}', 'w').write('escaped')"
    return [{"tool": "bash", "args": {"command": f'python3 -c "{code}"',
                                      "description": "Write the probe file"}},
            {"text": "the turn went on"}]


@pytest.fixture
def allowed_python(project):
    def write(*more: str) -> None:
        (project / ".dm_cc").mkdir(exist_ok=True)
        rules = ["  - {permission: bash, pattern: 'python3 *', action: allow}", *more]
        (project / ".dm_cc" / "policy.yaml").write_text("rules:\n" + "\n".join(rules) + "\n")
        trust_project(project)
    write()
    return write


@needs_bwrap
def test_yes_runs_the_stopped_command_outside_the_sandbox(project, allowed_python, tmp_path):
    target = tmp_path / "outside.txt"
    run = drive(project, probe_call(target),
                [(READY, "go" + ENTER), (LEGEND, "y"), ("the turn went on", "")])
    assert not run.errors
    question = run.after(ESCAPE_QUESTION)
    assert question.startswith(ESCAPE_QUESTION)
    assert "build's bash call: Write the probe file" in question
    assert f"$ python3 -c \"open('{target}'" in question
    seen = open_world(cwd=project).sandbox.transactional
    said = kept_out(seen, target)
    assert said in question.split("the sandbox stopped it")[0]      # what it printed
    why = said if seen else "it wrote outside the writable paths"
    assert f"the sandbox stopped it: {why}" in question
    assert f'asks: sandbox_escape "python3 -c open({str(target)!r}, ' in question
    assert '← ask sandbox_escape "*" at builtin:defaults' in question
    assert "(run outside the sandbox)" in question
    assert target.read_text() == "escaped"


@needs_bwrap
def test_no_stops_the_turn_as_at_any_question_and_keeps_the_failed_result(
        project, allowed_python, tmp_path):
    target = tmp_path / "outside.txt"
    run = drive(project, probe_call(target),
                [(READY, "go" + ENTER), (LEGEND, "n"), ("stopped: you said no", "")])
    assert not run.errors
    after = run.after(ESCAPE_QUESTION)
    assert "not run outside the sandbox" in after
    assert kept_out(open_world(cwd=project).sandbox.transactional, target) in after
    assert "The user did not let it run outside the sandbox." in after
    assert "the turn went on" not in after
    assert not target.exists()


@needs_bwrap
@pytest.mark.parametrize("action", ["allow", "deny"])
def test_a_sandbox_escape_rule_decides_without_a_question(project, allowed_python, tmp_path,
                                                          action):
    rule_line = ("  - {permission: sandbox_escape, pattern: 'python3 *', action: "
                 f"{action}, reason: the team decided}}")
    if action == "allow":   # the user's own policy: a project's may not open the sandbox
        allowed_python()
        mine = Path(os.environ["DM_CC_HOME"]) / "config" / "policy.yaml"
        mine.parent.mkdir(parents=True, exist_ok=True)
        mine.write_text("rules:\n" + rule_line + "\n")
        source = f"{mine}:2"
    else:                   # a project may close it
        allowed_python(rule_line)
        source = f"{project}/.dm_cc/policy.yaml:3"
    target = tmp_path / "outside.txt"
    run = drive(project, probe_call(target), [(READY, "go" + ENTER), ("the turn went on", "")])
    assert not run.errors
    assert ESCAPE_QUESTION not in run.screen
    rule = f"sandbox_escape \"python3 *\" at {source}"
    if action == "allow":
        assert f"↳ run again outside the sandbox, allowed by allow {rule}" in run.screen
        assert "(run outside the sandbox)" in run.screen
        assert target.read_text() == "escaped"
    else:
        assert f"↳ not run outside the sandbox: denied by deny {rule}: the team decided" \
            in run.screen
        assert "It may not run outside the sandbox" in run.screen   # the result is shown
        assert not target.exists()


# ---------------------------------------------------------------------- tmux


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@needs_bwrap
def test_in_a_terminal_the_toolbar_and_the_escape_question_read_well(project, allowed_python,
                                                                     tmp_path):
    target = tmp_path / "outside.txt"
    script = project / ".script.yaml"
    script.write_text(yaml.safe_dump(probe_call(target)))
    env = {k: os.environ[k] for k in ("HOME", "DM_CC_HOME", "DM_CC_MANAGED_DIR", "PATH",
                                      "PYTHONPATH") if k in os.environ}
    pane = Pane(project, {**env, "TERM": "xterm-256color"}, "--model", f"scripted:{script}")
    try:
        pane.wait_for(READY)    # typing is taken from here; the toolbar follows the load
        screen = pane.wait_for("· sandbox: bwrap · policy:")
        assert "! sandbox" not in screen
        pane.type("go")
        pane.send("Enter")
        pane.wait_for(LEGEND)
        screen = pane.wait_for("cancel")   # the legend's last word: the question is whole
        lines = screen.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("? "))
        assert lines[at] == f"? {ESCAPE_QUESTION}"
        assert lines[at + 1] == "  build's bash call: Write the probe file"
        assert lines[at + 2].startswith("  $ python3 -c")
        printed = [line for line in lines[at + 3:] if line.startswith("  │ ")]
        said = kept_out(open_world(cwd=project).sandbox.transactional, target)
        assert said.split(":")[0] in "".join(printed)
        after = at + 3 + len(printed)
        while not lines[after].startswith("  the sandbox stopped it: "):  # a wrapped line
            after += 1
        assert lines[after].startswith("  the sandbox stopped it: it wrote outside")
        assert lines[after + 1].startswith('  asks: sandbox_escape "python3 -c open(')
        legend = "".join(lines).replace(" ", "")          # it may wrap, at a space too
        assert "nno,keepitinthesandboxandstoptheturn" in legend
        time.sleep(AFTER_GRACE)                                 # a person reads it first
        pane.send("y")
        screen = pane.wait_for("the turn went on")
        assert "(run outside the sandbox)" in screen
        assert target.read_text() == "escaped"
    finally:
        pane.close()
