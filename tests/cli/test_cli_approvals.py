"""``dm_cc approvals list|add|revoke|clear`` through main(), and as real processes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dm_cc.cli import main
from dm_cc.compose import open_world


@pytest.fixture
def cli(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def store_path(project: Path) -> Path:
    return open_world(cwd=project).approvals.path


def added(capsys, *argv: str) -> str:
    assert main(["approvals", "add", *argv]) == 0
    return capsys.readouterr().out.strip()


def test_add_then_list(cli, capsys):
    build = added(capsys, "bash", "npm test *")
    plan = added(capsys, "read", "docs/**", "--agent", "plan", "--for", "8h")
    assert build.startswith("apr_") and plan.startswith("apr_")
    assert main(["approvals", "list"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["ID", "AGENT", "PERMISSION", "PATTERN", "EXPIRES", "CREATED"]
    assert rows[0].startswith(build) and rows[0].split()[1:5] == ["build", "bash", "npm", "test"]
    assert " never " in rows[0] and " never " not in rows[1]
    assert main(["approvals", "list", "--json", "--agent", "plan"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["id"] == plan and entry["permission"] == "read" and entry["agent"] == "plan"
    assert 8 * 3600 - 60 < entry["expires"] - entry["created"] <= 8 * 3600 + 1


def test_the_file_lives_in_the_data_dir_not_the_project(cli, capsys):
    added(capsys, "bash", "make *")
    path = store_path(cli)
    assert path.is_relative_to(Path(os.environ["DM_CC_HOME"]) / "data" / "approvals")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in cli.iterdir()] == [".git"]  # nothing written into the repo


def test_add_refuses_nonsense(cli, capsys):
    for argv, problem in [
        (["bahs", "x"], "unknown permission 'bahs'"),
        (["bash*", "x"], "unknown permission"),
        (["bash", "x", "--agent", "nobody"], "unknown agent 'nobody'"),
        (["bash", "x", "--for", "soon"], "bad duration 'soon'"),
        (["read", "src/{1..1000}"], "bad path pattern"),
        (["bash", ""], "pattern must not be empty"),
    ]:
        assert main(["approvals", "add", *argv]) == 2
        assert problem in capsys.readouterr().err
    assert main(["approvals", "add", "mcp__github__create_issue", "*"]) == 0
    capsys.readouterr()
    assert main(["approvals", "list", "--json"]) == 0
    assert [a["permission"] for a in json.loads(capsys.readouterr().out)] == [
        "mcp__github__create_issue"]


def test_revoke_and_clear(cli, capsys):
    first = added(capsys, "bash", "make *")
    added(capsys, "bash", "npm *")
    assert main(["approvals", "revoke", first]) == 0
    assert capsys.readouterr().out == f"revoked {first}: allow bash 'make *' for agent build\n"
    assert main(["approvals", "revoke", first]) == 2
    err = capsys.readouterr().err
    assert str(store_path(cli)) in err and f"no saved approval {first!r}" in err
    assert main(["approvals", "clear"]) == 0
    assert capsys.readouterr().out.startswith("removed 1 saved approval (")
    assert main(["approvals", "list"]) == 0
    assert capsys.readouterr().out.startswith("no saved approvals (")


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n garbage", b'{"approvals": "nope"}'])
def test_a_damaged_file_is_reported_and_kept(cli, capsys, data):
    added(capsys, "bash", "make *")
    path = store_path(cli)
    path.write_bytes(data)
    assert main(["approvals", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dm_cc: {path}") and "moved aside" in err
    [aside] = path.parent.glob(path.name + ".corrupt-*")
    assert aside.read_bytes() == data and str(aside) in err
    assert main(["approvals", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_two_processes_of_ten_dm_cc_approvals_add(cli):
    def adds(name: str) -> list[str]:
        ids = []
        for number in range(10):
            done = subprocess.run(
                [sys.executable, "-m", "dm_cc", "approvals", "add", "bash", f"echo {name}{number}"],
                cwd=cli, env=dict(os.environ), capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            ids.append(done.stdout.strip())
        return ids

    with ThreadPoolExecutor(2) as pool:
        ids = [i for batch in pool.map(adds, "ab") for i in batch]
    listed = open_world(cwd=cli).approvals.list()
    assert sorted(a.id for a in listed) == sorted(ids) and len(set(ids)) == 20
    assert {a.pattern for a in listed} == {f"echo {n}{i}" for n in "ab" for i in range(10)}


@pytest.mark.parametrize(("permission", "pattern", "why"), [
    ("bash", "*", "matches any command"),
    ("bash", "bash *", "lets bash run any script"),
    ("bash", "python3 *", "lets python3 run any script"),
    ("bash", "python3 -c *", "lets python3 run any code given on its command line"),
    ("bash", "eval *", "lets eval run any code given on its command line"),
    ("edit", "**", "matches every path in the project"),
    ("webfetch", "https://*", "matches every URL"),
])
def test_a_pattern_as_broad_as_an_interpreter_needs_force(cli, capsys, permission, pattern, why):
    assert main(["approvals", "add", permission, pattern]) == 2
    err = capsys.readouterr().err
    assert why in err and "--force" in err
    assert open_world(cwd=cli).approvals.list() == []          # nothing saved
    assert main(["approvals", "add", permission, pattern, "--force"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("apr_") and f"warning: allow {permission} {pattern!r} {why}" in err
    assert [(a.permission, a.pattern) for a in open_world(cwd=cli).approvals.list()] \
        == [(permission, pattern)]


def test_a_named_program_or_one_tool_needs_no_force(cli, capsys):
    for permission, pattern in [("bash", "bash setup.sh *"), ("bash", "python3 -m pytest *"),
                                ("bash", "git log *"), ("edit", "src/**"),
                                ("mcp__github__create_issue", "*")]:
        assert main(["approvals", "add", permission, pattern]) == 0
        assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("permission", ["doom_loop", "sandbox_escape"])
def test_a_session_only_permission_cannot_be_added(cli, capsys, permission):
    assert main(["approvals", "add", permission, "edit", "--force"]) == 2
    assert f"{permission} approvals are never saved" in capsys.readouterr().err
    assert open_world(cwd=cli).approvals.list() == []


def test_list_says_an_old_session_only_entry_is_not_used(cli, capsys):
    kept = added(capsys, "bash", "make *")
    path = store_path(cli)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["approvals"].append(dict(document["approvals"][0], id="apr_00ff",
                                      permission="doom_loop", pattern="edit"))
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["approvals", "list"]) == 0
    out = capsys.readouterr().out
    assert kept in out and ("apr_00ff: not used: doom_loop approvals last one session "
                            "(dm_cc approvals revoke apr_00ff removes it)") in out
