"""Stdio MCP servers run inside the sandbox with a spec of their own (DESIGN.md §8):
the project read-only unless an edit rule allows editing all of it, the read rules'
hidden paths hidden, the network as the network rules say, nothing left running."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.mcp_servers import TOOLBOX, toolbox_for_the_user

from dm_cc.cli import main

pytestmark = needs_bwrap


@pytest.fixture(autouse=True)
def in_project(project, monkeypatch):
    monkeypatch.chdir(project)   # dm_cc runs in the project, as from a shell there


def setup(project: Path, user_rules: str = "") -> None:
    """The toolbox as a user-config server (it starts without a trust question), its
    tools allowed, and ``user_rules`` in the user's own policy."""
    config = toolbox_for_the_user().parent
    (config / "policy.yaml").write_text(
        'rules:\n  - {permission: "mcp__box__*", pattern: "*", action: allow}\n' + user_rules)


def outputs(project: Path, capsys, *calls: str) -> list[str]:
    script = project.parent / "script.yaml"
    script.write_text("".join(f"- {call}\n" for call in (*calls, "{text: done}")))
    capsys.readouterr()
    main(["run", "--json", "--model", f"scripted:{script}", "go"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    return [r["output"] for r in records if r["type"] == "tool_finished"]


def call(tool: str, **args: str) -> str:
    return json.dumps({"tool": f"mcp__box__{tool}", "args": args})


def test_a_servers_project_is_read_only_and_its_secrets_hidden(project, capsys):
    setup(project)
    (project / ".env").write_text("SECRET=1")
    wrote, secret = outputs(project, capsys, call("write", path=str(project / "a.txt"), text="x"),
                            call("read", path=str(project / ".env")))
    assert "Read-only file system" in wrote and not (project / "a.txt").exists()
    assert secret == ""          # hidden: an empty file in its place


def test_an_edit_rule_for_the_whole_project_lets_it_write(project, capsys):
    setup(project, '  - {permission: edit, pattern: "**", action: allow}\n'
                   '  - {permission: edit, pattern: "*.lock", action: deny}\n')
    (project / "x.lock").write_text("locked")
    wrote, locked = outputs(project, capsys,
                            call("write", path=str(project / "a.txt"), text="x"),
                            call("write", path=str(project / "x.lock"), text="y"))
    assert wrote == "wrote" and (project / "a.txt").read_text() == "x"
    assert "Read-only file system" in locked and (project / "x.lock").read_text() == "locked"


def test_the_network_is_what_the_network_rules_say(project, capsys, loopback):
    setup(project)
    [refused] = outputs(project, capsys, call("fetch", url=loopback))
    assert refused.startswith("error:")
    setup(project, '  - {permission: network, pattern: "*", action: allow}\n')
    [fetched] = outputs(project, capsys, call("fetch", url=loopback))
    assert fetched == "hello from loopback"


def test_mcp_list_says_a_server_is_confined(project, capsys):
    setup(project)
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    [box] = json.loads(capsys.readouterr().out)["servers"]
    assert box["status"] == "running" and box["sandbox"].startswith("confined")


def test_nothing_of_a_confined_server_is_left_running(project, capsys):
    setup(project)
    outputs(project, capsys, call("spawn"))
    # this test's (other workers run toolboxes of their own meanwhile): in this project
    assert not [pid for pid in _pids() if TOOLBOX in _cmdline(pid) and _cwd(pid) == project.resolve()]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
