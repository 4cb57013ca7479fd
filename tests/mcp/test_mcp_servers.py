"""The MCP servers of a session, against real servers: mcp-server-time (stdio),
the toolbox over stdio and over streamable HTTP, and servers that fail to start,
answer slowly, crash mid-session or leave children behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import mcp_types
import pytest
from support.mcp_servers import gone, start_http_toolbox, stdio, time_server

from dm_cc.config.dirs import HostFilesystem
from dm_cc.config.mcp_servers import ServerDefinition
from dm_cc.mcp.manager import McpServers
from dm_cc.mcp.tools import MAX_OUTPUT_CHARS, McpTool
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.sandbox.host import Plan
from dm_cc.tools.base import JsonArguments, ToolContext, ToolOutput


def context(root: Path) -> ToolContext:
    return ToolContext(PathContextDirs(root, root, root, HostFilesystem()), "ses", "build")


def run(tool: McpTool, root: Path, **arguments: object) -> ToolOutput:
    return asyncio.run(tool.run(JsonArguments(arguments), context(root)))


@pytest.fixture(scope="module")
def servers(http_url, tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    definitions = [
        time_server(), stdio("box", env={"GIVEN": "yes"}),
        ServerDefinition("web", "user", "test:web", url=http_url, headers={"X-Token": "t0k3n"}),
        stdio("broken", "--exit-at-start"), stdio("clash", "--clash"),
        stdio("long", "--long-name"),
        ServerDefinition("missing", "user", "test:missing", command="no-such-mcp-server-here"),
    ]
    env = {**os.environ, "SECRET_API_KEY": "sk-not-for-servers"}
    with McpServers(definitions, root, env, call_timeout=2,
                    confine=lambda argv, cwd: Plan(["env", "DM_CC_WRAPPED=1", *argv], False)
                    ) as started:
        started.start()
        yield started, root


def test_servers_start_together_and_one_that_fails_leaves_the_others_working(servers):
    manager, _root = servers
    states = {s.definition.name: (s.state, s.error) for s in manager.statuses()}
    assert {name: state for name, (state, _e) in states.items()} == {
        "time": "running", "box": "running", "web": "running", "broken": "failed",
        "clash": "failed", "long": "running", "missing": "failed"}
    assert "toolbox: refusing to start" in states["broken"][1]  # what it printed on stderr
    assert "'get.time' and 'get_time' both become mcp__clash__get_time" in states["clash"][1]
    assert "no-such-mcp-server-here" in states["missing"][1]
    tools = {tool.name: tool for tool in manager.tools()}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time", "mcp__box__echo",
            "mcp__web__echo"} <= set(tools)
    assert not any(name.startswith(("mcp__broken", "mcp__clash")) for name in tools)
    [long] = [s for s in manager.statuses() if s.definition.name == "long"]
    assert long.left_out == ("a" * 60,) and "mcp__long__echo" in tools
    assert tools["mcp__time__get_current_time"].read_only and tools["mcp__box__echo"].read_only
    assert not tools["mcp__box__crash"].read_only
    # the server's schema goes to the model as it is
    assert tools["mcp__time__get_current_time"].input_schema["required"] == ["timezone"]


def test_calls_over_stdio_and_http(servers):
    manager, root = servers
    tools = {tool.name: tool for tool in manager.tools()}
    now = run(tools["mcp__time__get_current_time"], root, timezone="UTC")
    assert not now.is_error and '"timezone": "UTC"' in now.output
    assert run(tools["mcp__box__echo"], root, text="hi").output == "echo: hi"
    assert run(tools["mcp__web__echo"], root, text="over http").output == "echo: over http"
    failed = run(tools["mcp__box__fail"], root)
    assert failed.is_error and "fail" in failed.output


def test_what_a_server_is_given(servers):
    """Its env: and a few inherited variables (no secrets); what the wrap seam adds
    to its command line; an HTTP server's headers."""
    manager, root = servers
    tools = {tool.name: tool for tool in manager.tools()}

    def variable(name: str) -> str:
        return run(tools["mcp__box__variable"], root, name=name).output

    assert (variable("GIVEN"), variable("SECRET_API_KEY"), variable("DM_CC_WRAPPED")) == (
        "yes", "", "1")
    assert variable("PATH") == os.environ["PATH"]
    assert run(tools["mcp__web__header"], root, name="x-token").output == "t0k3n"


def test_output_is_capped(servers):
    manager, root = servers
    tools = {tool.name: tool for tool in manager.tools()}
    big = run(tools["mcp__web__big"], root, size=MAX_OUTPUT_CHARS * 3)
    assert len(big.output) < MAX_OUTPUT_CHARS + 100
    assert big.output.endswith(f"(cut at {MAX_OUTPUT_CHARS:,} of {MAX_OUTPUT_CHARS * 3:,} "
                               "characters)")


def test_a_call_that_takes_too_long_is_a_tool_error_and_the_server_stays(servers):
    manager, root = servers
    tools = {tool.name: tool for tool in manager.tools()}
    began = time.monotonic()
    slow = run(tools["mcp__box__slow"], root, seconds=30)
    assert slow.is_error and "did not answer within 2 s" in slow.output
    assert time.monotonic() - began < 10
    assert run(tools["mcp__box__echo"], root, text="still here").output == "echo: still here"


def test_a_server_too_slow_to_start_is_reported(tmp_path):
    began = time.monotonic()
    with McpServers([stdio("sleepy", "--start-delay", "30")], tmp_path, os.environ,
                    start_timeout=1.5) as manager:
        [status] = manager.start()
        assert status.state == "failed" and "did not start within 1.5 s" in status.error
        assert manager.tools() == []
    assert time.monotonic() - began < 8


def test_a_dead_server_is_a_tool_error_then_restarted_and_nothing_outlives_close(tmp_path):
    with McpServers([stdio("box")], tmp_path, os.environ) as manager:
        manager.start()
        tools = {tool.name: tool for tool in manager.tools()}
        first = int(run(tools["mcp__box__pid"], tmp_path).output)
        crashed = run(tools["mcp__box__crash"], tmp_path)
        assert crashed.is_error and "started again on the next call" in crashed.output
        assert gone(first)
        second = int(run(tools["mcp__box__pid"], tmp_path).output)  # restarted on next use
        assert second != first
        child = int(run(tools["mcp__box__spawn"], tmp_path).output)
        assert not gone(child, within=0.2)
        [status] = manager.statuses()
        assert (status.state, status.pid) == ("running", second)
    assert gone(second) and gone(child)  # the server and what it started


def test_an_http_server_that_went_away_is_a_tool_error_then_reconnected(tmp_path):
    server, url = start_http_toolbox()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        with McpServers([ServerDefinition("web", "user", "test:web", url=url)], tmp_path,
                        os.environ, call_timeout=5) as manager:
            manager.start()
            echo = next(t for t in manager.tools() if t.name == "mcp__web__echo")
            assert run(echo, tmp_path, text="1").output == "echo: 1"
            server.kill()
            server.wait(10)
            lost = run(echo, tmp_path, text="2")
            assert lost.is_error and "started again on the next call" in lost.output
            server, _url = start_http_toolbox(port)
            assert run(echo, tmp_path, text="3").output == "echo: 3"
    finally:
        server.kill()
        server.wait(10)


def test_a_call_the_server_refuses_is_a_tool_error_and_the_server_stays(servers):
    manager, root = servers
    [before] = [s.pid for s in manager.statuses() if s.definition.name == "box"]
    gone_tool = mcp_types.Tool(name="nothing", input_schema={"type": "object"})
    refused = run(McpTool(manager.call, "box", "mcp__box__nothing", gone_tool), root)
    assert refused.is_error and "nothing" in refused.output
    [after] = [s.pid for s in manager.statuses() if s.definition.name == "box"]
    assert after == before


def test_servers_left_open_are_stopped_at_interpreter_exit(tmp_path):
    """A front end that fails before closing them: the atexit backstop still does."""
    script = (
        "import asyncio, os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from pathlib import Path\n"
        "from support.mcp_servers import stdio\n"
        "from dm_cc.mcp.manager import McpServers\n"
        "manager = McpServers([stdio('box')], Path(sys.argv[2]), os.environ)\n"
        "manager.start()\n"
        "spawn = next(t for t in manager.tools() if t.name == 'mcp__box__spawn')\n"
        "print(asyncio.run(manager.call('box', 'spawn', {})).content[0].text)\n"
        "print(manager.statuses()[0].pid)\n")
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parents[1]),
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    child, server = (int(line) for line in done.stdout.split())
    assert gone(server) and gone(child)
