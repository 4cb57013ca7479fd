"""`dm_cc run` and the project's instruction files: a repository's AGENTS.md or
CLAUDE.md that leads elsewhere (a link out of the project, a file the read rules
deny) never reaches the model, and the person is told why."""

from __future__ import annotations

import json

import pytest

from dm_cc.cli import main
from dm_cc.llm import factory


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def models(monkeypatch):
    """Every scripted model `dm_cc run` loads, to read what it was sent."""
    loaded = []
    real = factory.load_script

    def load(path, name="scripted"):
        loaded.append(real(path, name))
        return loaded[-1]

    monkeypatch.setattr(factory, "load_script", load)
    return loaded


def run(project, capsys) -> list[dict]:
    script = project.parent / "script.yaml"
    script.write_text("- {text: done}\n")
    assert main(["run", "--json", "--model", f"scripted:{script}", "hello"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_an_agents_md_linked_out_of_the_project_is_not_sent(project, tmp_path, models, capsys):
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = AWS-CANARY\n")
    (project / "AGENTS.md").symlink_to(secret)
    (project / "CLAUDE.md").write_text("Use tabs.\n")
    events = run(project, capsys)
    [system] = [call[0] for call in models[0].calls]
    assert "AWS-CANARY" not in system and "Use tabs." in system
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert notices == [f"AGENTS.md was not given to the model: it leads outside the project "
                       f"({secret}), and an instruction file is read only inside it."]


def test_a_claude_md_the_policy_denies_is_not_sent(project, models, capsys):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: read, pattern: 'CLAUDE.md', action: deny}\n")
    (project / "CLAUDE.md").write_text("DENIED-CANARY\n")
    events = run(project, capsys)
    assert "DENIED-CANARY" not in models[0].calls[0][0]
    assert any(e["type"] == "notice" and e["text"].startswith("CLAUDE.md was not given")
               for e in events)
