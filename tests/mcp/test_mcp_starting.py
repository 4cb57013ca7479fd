"""MCP servers start in the background and lazily (docs/mcp.md, "Starting"), against
the real toolbox: a start never blocks, a server whose tools are known from an
earlier listing is not started until a tool of it is called, one whose tools are
not known is waited for before the model is asked, closing gives up a start under
way, and a broken entry is skipped with its file:line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from mcp_types import Tool, ToolAnnotations
from support.mcp_servers import TOOLBOX, gone, stdio

from dm_cc.cli import main
from dm_cc.config import config_dir
from dm_cc.config.dirs import HostFilesystem
from dm_cc.config.mcp_servers import ServerDefinition
from dm_cc.mcp import Listings, McpServers
from dm_cc.mcp.listing import MAX_AGE
from dm_cc.mcp.tools import McpTool
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.tools.base import JsonArguments, ToolContext, ToolOutput


def starts(log: Path) -> list[int]:
    """The pids of the toolbox's starts, as it logged them."""
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def run(tool: McpTool, root: Path, **arguments: object) -> ToolOutput:
    ctx = ToolContext(PathContextDirs(root, root, root, HostFilesystem()), "ses", "build")
    return asyncio.run(tool.run(JsonArguments(arguments), ctx))


def named(tools: list[McpTool]) -> dict[str, McpTool]:
    return {tool.name: tool for tool in tools}


def test_a_listing_is_kept_for_the_definition_as_it_runs_and_for_a_day(tmp_path, monkeypatch):
    listings = Listings(tmp_path / "cache", tmp_path, os.environ)
    box = stdio("box")
    echo = Tool(name="echo", input_schema={"type": "object"},
                annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    assert listings.get(box) is None
    listings.put(box, [echo])
    assert listings.get(box) == [echo]
    # another definition is not what was listed: other arguments, environment, program
    assert listings.get(stdio("box", "--long-name")) is None
    assert listings.get(stdio("box", env={"MODE": "x"})) is None
    assert listings.get(stdio("other")) is None
    script = tmp_path / "server.py"
    script.write_text("v1")
    local = ServerDefinition("local", "user", "t:1", command=sys.executable, args=(str(script),))
    listings.put(local, [echo])
    assert listings.get(local) == [echo]
    script.write_text("version 2")               # an upgraded server lists again
    assert listings.get(local) is None
    # a day later it lists again; an unreadable entry is no entry
    later = time.time() + MAX_AGE + 1
    monkeypatch.setattr(time, "time", lambda: later)
    assert listings.get(box) is None
    monkeypatch.undo()
    for kept in (tmp_path / "cache").iterdir():
        kept.write_text("{not json")
    assert listings.get(box) is None


def test_a_start_in_the_background_returns_at_once_and_closing_gives_it_up(tmp_path, capfd):
    log = tmp_path / "starts.log"
    # a server that never answers: it is starting until it is given up
    sleepy = ServerDefinition("sleepy", "user", "t:1", command="sh",
                              args=("-c", f"echo $$ >> {log}; exec sleep 30"))
    manager = McpServers([sleepy], tmp_path, os.environ)
    began = time.monotonic()
    manager.start_background()
    assert time.monotonic() - began < 0.5
    assert manager.unlisted() == ["sleepy"]
    deadline = time.monotonic() + 20
    while not starts(log):                        # the process runs, sleeping
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert manager.statuses()[0].state == "starting"
    began = time.monotonic()
    manager.close()
    assert time.monotonic() - began < 8
    assert gone(starts(log)[0])
    err = capfd.readouterr().err
    assert "Traceback" not in err and "never retrieved" not in err, err


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def user_config(log: Path, more: str = "") -> Path:
    """The toolbox as server ``box`` of the user's config (it logs each start),
    unconfined (so it can write its log), its tools allowed by the user's policy."""
    config = config_dir() / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"sandbox: off\nmcp:\n  servers:\n    box: {{command: {sys.executable}, "
                      f"args: [{TOOLBOX}, stdio, --log, {log}]}}\n{more}")
    (config_dir() / "policy.yaml").write_text(
        'rules: [{permission: "mcp__box__*", pattern: "*", action: allow}]\n')
    return config


def run_cli(project: Path, capsys, *replies: str) -> tuple[int, list[dict], str]:
    script = project / "script.yaml"
    script.write_text("".join(f"- {reply}\n" for reply in replies))
    capsys.readouterr()
    code = main(["run", "--json", "--model", f"scripted:{script}", "go"])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.strip()], err


def notices(events: list[dict]) -> list[str]:
    return [event["text"] for event in events if event["type"] == "notice"]


def finished(events: list[dict]) -> list[str]:
    """What each tool call gave (an error says so)."""
    return [("error: " if e["is_error"] else "") + e["output"] for e in events
            if e["type"] == "tool_finished"]


def test_a_run_starts_a_server_only_to_learn_its_tools_or_to_call_one(project, capsys):
    """The first run waits for box's tools (not known yet) and may call one on its
    first request; a later run that calls none starts none; one that calls a tool
    starts it then. A typo in another server's entry skips that server, with its
    file:line, and nothing else."""
    log = project.parent / "starts.log"
    config = user_config(log, "    typo: {comand: mcp-server-typo}\n")
    skipped = (f"MCP server typo is skipped: {config}:5: mcp.servers.typo: unknown key "
               "'comand' (did you mean command?) (known: args, command, cwd, disabled, env, headers, url)")
    echo = "{tool: mcp__box__echo, args: {text: hi}}"
    code, events, _err = run_cli(project, capsys, echo, "{text: done}")
    assert code == 0 and finished(events) == ["echo: hi"] and len(starts(log)) == 1
    assert notices(events) == [skipped, "waiting for MCP server box to list its tools"]

    code, events, _err = run_cli(project, capsys, "{text: done}")
    assert code == 0 and len(starts(log)) == 1 and notices(events) == [skipped]

    code, events, _err = run_cli(project, capsys, echo, "{text: done}")
    assert code == 0 and finished(events) == ["echo: hi"]
    assert len(starts(log)) == 2 and gone(starts(log)[1])

    config.write_text(config.read_text().replace("]}\n", "], disabled: true}\n", 1))   # (nothing to start)
    assert main(["mcp", "list"]) == 0
    listed = capsys.readouterr().out
    error = skipped.split("is skipped: ")[1]
    assert f"typo  skipped: its entry is broken  (user)\n  error: {error}\n" in listed
    assert "box  disabled  " in listed
    assert main(["mcp", "trust", "typo"]) == 2
    assert "MCP server typo cannot be used: " in capsys.readouterr().err
