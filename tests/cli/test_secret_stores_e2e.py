"""The person's secret stores (dm_cc.permissions.secrets) through the real front
doors: a broad read allow of the person's own does not open one, a trusted
repository's allow never does, a rule of the person's own naming the store does;
``policy check`` says why; ``sandbox status`` and every confined command have them
hidden. Real tools, real bubblewrap, the scripted model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from support.bwrap import needs_bwrap
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.config import config_dir
from dm_cc.permissions import SECRET_STORES

BROAD = ("rules:\n  - {permission: read, pattern: '~/**', action: allow}\n"
         "  - {permission: external_directory, pattern: '~/**', action: allow}\n"
         "  - {permission: grep, pattern: '~/**', action: allow}\n")


def home() -> Path:
    return Path(os.environ["HOME"])


@pytest.fixture
def stores(project) -> Path:
    for name, text in ((".ssh/id_rsa", "KEY-CANARY"), (".aws/credentials", "AWS-CANARY"),
                       (".netrc", "NETRC-CANARY"), ("notes.txt", "ordinary")):
        (home() / name).parent.mkdir(parents=True, exist_ok=True)
        (home() / name).write_text(text + "\n")
    os.chdir(project)
    return home()


def my_policy(text: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "policy.yaml").write_text(text)


def run(project, capsys, script: list[dict]) -> list[dict]:
    path = project.parent / "script.yaml"
    path.write_text(yaml.safe_dump([*script, {"text": "done"}]))
    capsys.readouterr()
    assert main(["run", "--json", "--model", f"scripted:{path}", "go"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return [e for e in events if e["type"] == "tool_finished"]


def reads(*paths: str) -> list[dict]:
    return [{"tool": "read", "args": {"path": p}} for p in paths]


def test_a_broad_read_allow_of_your_own_opens_no_store(project, stores, capsys):
    my_policy(BROAD)
    ssh, aws, netrc, notes = (str(stores / n) for n in (".ssh/id_rsa", ".aws/credentials",
                                                          ".netrc", "notes.txt"))
    finished = run(project, capsys, [*reads(ssh, aws, netrc, notes),
                                     {"tool": "grep", "args": {"pattern": "CANARY",
                                                               "path": str(stores)}}])
    for result in finished[:3]:
        assert result["is_error"] and "CANARY" not in result["output"], result["output"]
    assert not finished[3]["is_error"] and "ordinary" in finished[3]["output"]  # no question
    for canary in ("KEY-CANARY", "AWS-CANARY", "NETRC-CANARY"):
        assert canary not in finished[4]["output"], finished[4]["output"]
    capsys.readouterr()
    assert main(["policy", "check", "read", f"{stores}/.ssh/id_rsa"]) == 0
    said = capsys.readouterr().out
    assert "ask" in said and "secret store" in said and "~/.ssh" in said, said


def test_a_rule_of_your_own_naming_the_store_opens_it(project, stores, capsys):
    my_policy(BROAD + "  - {permission: read, pattern: '~/.aws/**', action: allow}\n"
              f"  - {{permission: read, pattern: '{stores}/.netrc', action: allow}}\n")
    finished = run(project, capsys, reads(str(stores / ".aws/credentials"),
                                          str(stores / ".netrc"), str(stores / ".ssh/id_rsa")))
    assert "AWS-CANARY" in finished[0]["output"] and "NETRC-CANARY" in finished[1]["output"]
    assert finished[2]["is_error"]
    capsys.readouterr()
    assert main(["sandbox", "status"]) == 0
    status = capsys.readouterr().out
    assert "~/.ssh/" in status and "secret store: private keys" in status, status
    hidden = [line.split()[0] for line in status.splitlines() if line.startswith("  ~/")]
    assert "~/.ssh/" in hidden and "~/.aws/" not in hidden and "~/.netrc" not in hidden, status
    assert f"secret stores: {len(SECRET_STORES)} known" in status and "1 here" in status, status


def test_a_trusted_repository_opens_no_store_even_naming_it(project, stores, capsys):
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: '*', pattern: '*', action: allow}\n"
        f"  - {{permission: read, pattern: '{stores}/.ssh/id_rsa', action: allow}}\n"
        "  - {permission: read, pattern: '~/.ssh/**', action: allow}\n")
    trust_project(project)
    my_policy(BROAD)
    [finished] = run(project, capsys, reads(str(stores / ".ssh/id_rsa")))
    assert finished["is_error"] and "KEY-CANARY" not in finished["output"]


def test_a_policy_file_may_add_a_secret_store(project, stores, capsys):
    (stores / ".config" / "acme").mkdir(parents=True)
    (stores / ".config" / "acme" / "token").write_text("ACME-CANARY\n")
    my_policy(BROAD + "secret_stores:\n  - {path: '~/.config/acme', why: 'the acme token'}\n")
    [finished] = run(project, capsys, reads(str(stores / ".config/acme/token")))
    assert finished["is_error"] and "ACME-CANARY" not in finished["output"]
    capsys.readouterr()
    assert main(["policy", "check", "read", f"{stores}/.config/acme/token"]) == 0
    assert "the acme token" in capsys.readouterr().out


def test_a_bad_secret_store_is_refused_at_load(project, stores, capsys):
    my_policy("secret_stores:\n  - {path: '~/.config/*'}\n")
    capsys.readouterr()
    assert main(["policy", "check", "read", "x"]) != 0
    assert "bad secret store" in capsys.readouterr().err


@needs_bwrap
def test_an_allowed_command_finds_the_stores_empty(project, stores, capsys):
    my_policy("rules:\n  - {permission: bash, pattern: '*', action: allow}\n")
    command = (f"python3 -c \"import os; print(sorted(os.listdir('{stores}'))); "
               f"print(os.listdir('{stores}/.ssh'), repr(open('{stores}/.netrc').read()), "
               f"open('{stores}/notes.txt').read())\"")
    [finished] = run(project, capsys, [{"tool": "bash", "args": {"command": command}}])
    out = finished["output"]
    assert "[] ''" in out and "ordinary" in out, out       # the stores are there, empty
