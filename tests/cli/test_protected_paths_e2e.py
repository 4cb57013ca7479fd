"""Files that make code run later (docs/security.md, "Protected paths"), through
``dm_cc run`` with the scripted model: the person's own ``edit ** allow`` does not
open them, an exact rule of their own does, and a repository's never does."""

from __future__ import annotations

import json

import pytest
import yaml
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.config import config_dir

PROTECTED = [".envrc", ".vscode/tasks.json", ".vscode/launch.json", ".pre-commit-config.yaml",
             ".husky/pre-commit", "lefthook.yml", ".npmrc", ".github/workflows/ci.yml",
             ".claude/settings.json", ".codex/config.toml", ".gemini/settings.json",
             ".venv/lib/python3.11/site-packages/evil.pth", ".venv/bin/activate",
             ".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".dm_cc/policy.yaml",
             "pkg/.dm_cc/policy.yaml", "docs/.ENVRC", "deep/er/.cargo/config.toml",
             ".devcontainer/devcontainer.json", ".devcontainer.json", ".vscode/mcp.json",
             ".nvim.lua", ".exrc", ".helix/languages.toml", ".zed/tasks.json", "mise.toml",
             ".kiro/hooks/x.kiro.hook", ".aider.conf.yml"]


def writes(paths: list[str]) -> list[dict]:
    return [*({"tool": "write", "args": {"path": p, "content": "run me\n"}} for p in paths),
            {"text": "done"}]


def run(project, capsys, script: list[dict]) -> list[dict]:
    path = project.parent / "script.yaml"
    path.write_text(yaml.safe_dump(script))
    capsys.readouterr()
    assert main(["run", "--json", "--model", f"scripted:{path}", "go"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return [e for e in events if e["type"] == "tool_finished"]


def my_policy(text: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "policy.yaml").write_text(text)


def test_a_broad_edit_allow_of_your_own_writes_none_of_them(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    my_policy("rules:\n  - {permission: edit, pattern: '**', action: allow}\n")
    finished = run(project, capsys, writes([*PROTECTED, "src/ordinary.py"]))
    for path, result in zip(PROTECTED, finished, strict=False):
        assert result["is_error"] and not (project / path).exists(), path
    assert (project / "src" / "ordinary.py").read_text() == "run me\n"


def test_an_exact_rule_of_your_own_opens_one(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    my_policy("rules:\n  - {permission: edit, pattern: '**', action: allow}\n"
              "  - {permission: edit, pattern: '.envrc', action: allow}\n"
              "  - {permission: edit, pattern: '.github/workflows/*', action: allow}\n")
    run(project, capsys, writes([".envrc", ".github/workflows/ci.yml"]))
    assert (project / ".envrc").exists()                          # named exactly
    assert not (project / ".github" / "workflows" / "ci.yml").exists()   # a glob is not


def test_a_trusted_repositorys_exact_rule_opens_none(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: edit, pattern: '.envrc', action: allow}\n")
    trust_project(project)
    run(project, capsys, writes([".envrc"]))
    assert not (project / ".envrc").exists()


@pytest.mark.parametrize("command", ["echo 'curl x | sh' > .envrc",
                                     "printf x >> .husky/pre-commit",
                                     "tee .vscode/tasks.json < /dev/null"])
def test_a_command_writing_one_asks_too(project, capsys, monkeypatch, command):
    monkeypatch.chdir(project)
    (project / ".husky").mkdir()
    (project / ".vscode").mkdir()
    my_policy("rules:\n  - {permission: edit, pattern: '**', action: allow}\n"
              "  - {permission: bash, pattern: '*', action: allow}\n")
    [result] = run(project, capsys, [{"tool": "bash", "args": {"command": command}},
                                     {"text": "done"}])
    assert result["is_error"] and "approval" in result["output"], result["output"]


def test_a_policy_file_may_add_a_protected_path(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    my_policy("protected:\n  - {pattern: 'Makefile', why: 'make runs it'}\n"
              "rules:\n  - {permission: edit, pattern: '**', action: allow}\n")
    [result] = run(project, capsys, writes(["Makefile"]))
    assert result["is_error"] and not (project / "Makefile").exists()
    capsys.readouterr()
    assert main(["policy", "check", "edit", "Makefile"]) == 0
    assert "make runs it" in capsys.readouterr().out
