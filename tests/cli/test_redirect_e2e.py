"""A command run with a redirection, through a real headless ``dm_cc run`` (scripted
model): under the defaults nothing asks (build and plan alike); under a Gemini CLI
policy imported without allowRedirection, `git status 2>&1` is asked about (headless:
denied) as Gemini asks, while `git status` runs (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.trust import trusted_policy

from dm_cc.cli import main
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.gemini import import_gemini

GEMINI = """\
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git"
decision = "allow"
priority = 5
"""


def run(project: Path, tmp_path: Path, commands: list[str], *extra: str) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n" + "".join(
        f"  - {{tool: bash, args: {{command: {json.dumps(c)}}}}}\n" for c in commands)
        + "  - {text: done}\n")
    done = subprocess.run([sys.executable, "-m", "dm_cc", "run", "--model", f"scripted:{script}",
                           *extra, "go"], cwd=project, env=os.environ, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def decisions(project: Path, capsys, monkeypatch) -> list[tuple[str, str, list[str]]]:
    monkeypatch.chdir(project)
    assert main(["audit", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return [(r["input"], r["decision"],
             [q["permission"] for q in r["requests"] if q.get("decision", q.get("action"))
              in ("ask", "deny")]) for r in records]


def test_nothing_asks_about_a_redirection_under_the_defaults(project, tmp_path, capsys,
                                                             monkeypatch):
    lines = ["git status 2>&1", "ls -la 2>/dev/null | head -3", "cat <<< hello"]
    run(project, tmp_path, lines)
    run(project, tmp_path, ["git log -1 2>&1"], "--agent", "plan")
    assert [(i, d) for i, d, _ in decisions(project, capsys, monkeypatch)] == [
        *((line, "allow") for line in lines), ("git log -1 2>&1", "allow")]


def test_an_imported_gemini_allow_asks_about_its_redirected_commands(project, tmp_path,
                                                                      capsys, monkeypatch):
    source = tmp_path / "policy.toml"
    source.write_text(GEMINI)
    trusted_policy(project, render_policy(import_gemini(source)))
    run(project, tmp_path, ["git status 2>&1", "git status"])
    found = decisions(project, capsys, monkeypatch)
    assert [(i, d) for i, d, _ in found] == [("git status 2>&1", "deny"),
                                             ("git status", "allow")]
    assert "redirect" in found[0][2], found
