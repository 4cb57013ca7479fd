"""A ``sandbox_escape`` rule is judged against each simple command of a stopped
command line, as bash rules are, never against the whole line (red team class 4).

Through the real entry point: ``dm_cc run`` in a subprocess, a scripted model, real
bubblewrap. The person's own policy allows every command at the first decision
(``bash "*"``), so each line runs confined, the sandbox stops it, and only the
escape decides whether it runs again outside. Files outside the project are
checked after the run: what the escape let out is what landed there. Each table
of lines is one run (one bash call per line), so the tables stay cheap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from support.bwrap import needs_bwrap

pytestmark = needs_bwrap

# The person's first word: every command may run (confined). A perl one-liner
# writes where the gate cannot see (no file operand), so the sandbox stops it.
FIRST = '  - {permission: bash, pattern: "*", action: allow}\n'
ESCAPE_ALLOW_PYTHON = '{permission: sandbox_escape, pattern: "python3 *", action: allow}'
ESCAPE_ALLOW_ALL = '{permission: sandbox_escape, pattern: "*", action: allow}'
ESCAPE_DENY_PERL = ('{permission: sandbox_escape, pattern: "perl *", action: deny, '
                    'reason: "perl runs in the sandbox"}')


class Called(NamedTuple):
    """One bash call of a run: its line, its tool output, its escape's decision record."""

    line: str
    output: str
    escape: dict


class Run:
    """A project, the person's own policy file and config (sandbox: auto, where an
    escape can be offered), and a directory outside everything."""

    def __init__(self, project: Path, tmp: Path) -> None:
        self.project = project
        self.outside = tmp / "outside"
        self.outside.mkdir()
        self.config = Path(os.environ["DM_CC_HOME"]) / "config"
        self.config.mkdir(parents=True)
        (self.config / "config.yaml").write_text("sandbox: auto\n")

    def policy(self, *rules: str) -> None:
        (self.config / "policy.yaml").write_text("rules:\n" + FIRST + "".join(
            f"  - {rule}\n" for rule in rules))

    def lines(self, templates: list[str]) -> list[str]:
        """Each template with {write} (python3 writing outside/a<i>: stopped), {evil}
        (perl writing outside/evil<i>), {quoted} ({evil} for inside double quotes) and
        {path} (where {evil} writes)."""
        def evil(path: Path) -> str:
            return f"perl -e 'open(F, q(>{path})) or die $!'"
        return [template.format(
            write=f"python3 -c 'open(\"{self.outside}/a{i}\", \"w\").write(\"x\")'",
            evil=evil(self.outside / f"evil{i}"), path=self.outside / f"evil{i}",
            quoted=evil(self.outside / f"evil{i}").replace("$", "\\$"))
            for i, template in enumerate(templates)]

    def dm_cc(self, lines: list[str], *options: str) -> subprocess.CompletedProcess[str]:
        script = self.project / ".script.json"
        script.write_text(json.dumps([*({"tool": "bash", "args": {"command": line}}
                                        for line in lines), {"text": "done"}]))
        done = subprocess.run([sys.executable, "-m", "dm_cc", "run", *options, "--model",
                               f"scripted:{script}", "go"], cwd=self.project,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    def run(self, lines: list[str]) -> list[Called]:
        """``dm_cc run --json``, one bash call per line; each call was allowed at first
        and stopped by the sandbox (so its second ``tool_decided`` is its escape)."""
        events = [json.loads(line) for line in self.dm_cc(lines, "--json").stdout.splitlines()
                  if line.strip()]
        outputs = [e["output"] for e in events if e["type"] == "tool_finished"]
        decided = [e for e in events if e["type"] == "tool_decided"]
        assert [e["decision"] for e in decided[::2]] == ["allow"] * len(lines)
        return [Called(*called) for called in zip(lines, outputs, decided[1::2], strict=True)]

    def landed(self) -> list[str]:
        return sorted(p.name for p in self.outside.iterdir())


@pytest.fixture
def setup(project: Path, tmp_path: Path) -> Run:
    return Run(project, tmp_path)


JOINED = ["{write}; {evil}", "{write} && {evil}", "{write} || {evil}", "{write}\n{evil}",
          "{write} | {evil}", "{write} & {evil}", "{write}; ( {evil} )",
          "{write}; {{ {evil}; }}", '{write}; bash -c "{quoted}"', "{write}; timeout 5 {evil}"]


def test_an_allow_for_one_command_lets_nothing_else_it_is_joined_with_out(setup):
    setup.policy(ESCAPE_ALLOW_PYTHON)
    for called in setup.run(setup.lines(JOINED)):
        assert "did not let it run outside the sandbox" in called.output, called
        assert called.escape["decision"] == "ask", called
        asked = {r["pattern"] for r in called.escape["requests"] if r["decision"] == "ask"}
        assert asked and all(p.startswith(("perl", "bash -c", "timeout")) for p in asked), called
    assert setup.landed() == []


def test_the_allowed_command_alone_still_runs_outside(setup):
    setup.policy(ESCAPE_ALLOW_PYTHON)
    (called,) = setup.run(setup.lines(["{write} && {write}"]))
    assert called.output.endswith("(run outside the sandbox)")
    assert setup.landed() == ["a0"]


DODGES = ["true && {evil}", "true; {evil}", "echo hi | {evil}", "{write}; {evil}",
          "true && timeout 5 {evil}", "true; nice -n 5 {evil}", "echo x | xargs {evil}",
          'bash -c "true; {quoted}"', "/usr/bin/{evil}",
          "true; $'\\x70erl' -e 'open(F, q(>{path})) or die $!'",
          "p\\erl -e 'open(F, q(>{path})) or die $!'"]


def test_a_deny_of_one_command_is_not_dodged_by_what_it_is_joined_with(setup):
    setup.policy(ESCAPE_ALLOW_ALL, ESCAPE_DENY_PERL)
    for called in setup.run(setup.lines(DODGES)):
        assert "It may not run outside the sandbox" in called.output, called
        assert "'perl" in called.output and "perl runs in the sandbox" in called.output, called
        assert called.escape["decision"] == "deny", called
        denied = {r["rule"]["pattern"] for r in called.escape["requests"]
                  if r["decision"] == "deny"}
        assert denied == {"perl *"}, called
    assert setup.landed() == []


def test_without_the_denied_command_the_allow_lets_the_line_out(setup):
    setup.policy(ESCAPE_ALLOW_ALL, ESCAPE_DENY_PERL)
    (called,) = setup.run(setup.lines(["true && {write}"]))
    assert called.output.endswith("(run outside the sandbox)")
    assert setup.landed() == ["a0"]


def test_the_headless_line_names_each_command_that_asked(setup):
    setup.policy(ESCAPE_ALLOW_PYTHON)
    stderr = setup.dm_cc(setup.lines(["{write}; {evil}"])).stderr
    (line,) = [line for line in stderr.splitlines() if "run outside the sandbox" in line]
    assert "the sandbox stopped it: it wrote outside" in line
    assert "sandbox_escape perl -e open(F, q(>" in line and 'ask sandbox_escape "*"' in line
    assert "python3" not in line.split("run outside the sandbox")[1]   # it was allowed
