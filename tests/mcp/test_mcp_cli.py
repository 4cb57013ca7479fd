"""`dm_cc mcp list|trust|untrust` and `dm_cc run` with real MCP servers: the issue's
"done when" (mcp-server-time listed, a scripted call allowed or refused by policy,
a project's server not started until approved), user-config servers, and
read-only tools opened to explore within its parent's rights."""

from __future__ import annotations

import json

import pytest
from support.mcp_servers import gone, time_server, toolbox_for_the_user
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.compose import open_world
from dm_cc.config import config_dir
from dm_cc.permissions import Request
from dm_cc.policy.layers import Link
from dm_cc.tools.catalog import mcp_effects


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / ".dm_cc").mkdir()
    return project


def configure(project, text: str) -> None:
    (project / ".dm_cc" / "config.yaml").write_text(text)
    trust_project(project)


def policy(project, *rules: str) -> None:
    (project / ".dm_cc" / "policy.yaml").write_text("rules:\n" + "".join(
        f"  - {rule}\n" for rule in rules))
    trust_project(project)


def listed(capsys) -> dict:
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    return {server["name"]: server for server in json.loads(capsys.readouterr().out)["servers"]}


def run_json(project, capsys, *replies: str) -> list[dict]:
    script = project / "script.yaml"
    script.write_text("".join(f"- {reply}\n" for reply in replies))
    capsys.readouterr()
    main(["run", "--json", "--model", f"scripted:{script}", "what time is it?"])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


TIME_CALL = "{tool: mcp__time__get_current_time, args: {timezone: UTC}}"


def finished(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "tool_finished"]


def test_a_project_server_starts_once_approved_and_its_calls_are_gated(project, capsys):
    program = time_server().command
    configure(project, f"mcp:\n  servers:\n    time: {{command: {program}, "
                       "args: [--local-timezone, UTC]}\n")
    policy(project, '{permission: "mcp__time__*", pattern: "*", action: allow}')

    time = listed(capsys)["time"]
    assert (time["origin"], time["trust"], time["status"], time["tools"]) == (
        "project", "not approved", "not started", [])
    events = run_json(project, capsys, TIME_CALL, "{text: done}")
    [notice] = [e["text"] for e in events if e["type"] == "notice"]
    assert "MCP server time (.dm_cc/config.yaml:3) is defined by this project and is not " \
           "approved" in notice and "`dm_cc mcp trust time`" in notice
    assert finished(events)[0]["is_error"]  # no such tool: the server did not start

    assert main(["mcp", "trust", "time"]) == 0
    time = listed(capsys)["time"]
    assert (time["trust"], time["status"]) == ("approved", "running"), time.get("error")
    tools = {tool["name"]: tool for tool in time["tools"]}
    assert tools["mcp__time__get_current_time"] == {
        "name": "mcp__time__get_current_time", "tool": "get_current_time", "decision": "allow",
        "rule": ".dm_cc/policy.yaml:2", "read_only": True}

    [done] = finished(run_json(project, capsys, TIME_CALL, "{text: done}"))
    assert not done["is_error"] and '"timezone": "UTC"' in done["output"]

    policy(project, '{permission: "mcp__time__*", pattern: "*", action: allow}',
           '{permission: mcp__time__get_current_time, pattern: "timezone=UTC", action: deny, '
           'reason: "no UTC here"}')
    [refused] = finished(run_json(project, capsys, TIME_CALL, "{text: done}"))
    assert refused["is_error"] and "Permission denied: mcp__time__get_current_time" in \
        refused["output"] and "no UTC here" in refused["output"]

    policy(project, '{permission: "mcp__time__*", pattern: "*", action: deny}')
    [refused] = finished(run_json(project, capsys, TIME_CALL, "{text: done}"))
    assert refused["is_error"] and "is denied by rule `deny mcp__time__* *` at " \
        ".dm_cc/policy.yaml:2" in refused["output"]

    configure(project, f"mcp:\n  servers:\n    time: {{command: {program}}}\n")  # changed
    time = listed(capsys)["time"]
    assert (time["trust"], time["status"]) == ("changed since approved", "not started")
    assert main(["mcp", "untrust", "time"]) == 0
    assert listed(capsys)["time"]["trust"] == "not approved"


def test_a_user_server_starts_without_asking_and_is_judged_as_the_agent(project, capsys):
    toolbox_for_the_user("    old: {command: x, disabled: true}\n")
    policy(project, '{permission: mcp__box__echo, pattern: "text=hi*", action: allow}')
    servers = listed(capsys)
    box = servers["box"]
    assert (box["origin"], box["trust"], box["status"]) == ("user", "user config", "running")
    assert box["pid"] and servers["old"]["status"] == "disabled"
    decisions = {tool["name"]: tool["decision"] for tool in box["tools"]}
    assert decisions["mcp__box__echo"] == "ask"   # a call with no arguments
    capsys.readouterr()
    assert main(["mcp", "list"]) == 0
    shown = capsys.readouterr().out
    assert "box  running, pid " in shown and "trust: user config" in shown
    assert "  mcp__box__echo  ask (builtin:defaults)  read-only\n" in shown
    assert "old  disabled" in shown
    assert main(["mcp", "trust", "box"]) == 0
    assert "starts without approval" in capsys.readouterr().out
    assert main(["mcp", "trust", "nope"]) == 2


# What the toolbox's tools say of themselves (tests/mcp/servers/toolbox.py): echo only
# reads and stays in a closed world; crash says nothing, so it may do anything.
BOX_EFFECTS = {"mcp__box__echo": mcp_effects(True, False), "mcp__box__crash": mcp_effects(None, None)}


def gate_under_build(agent: str):
    world = open_world()
    agents = world.agents
    return world.policy.lineage_gate([Link(agents["build"]), Link(agents[agent])],
                                     world.capabilities().with_effects(BOX_EFFECTS))


def test_read_only_tools_open_explore_only_as_far_as_its_parent_may(project):
    def explore(tool: str, parent_rules: str = "") -> str:
        policy(project, '{permission: "*", pattern: "*", action: ask}', *filter(None, [
            parent_rules]))
        return gate_under_build("explore").decide([Request(tool, "{}")]).action

    assert explore("mcp__box__echo", '{permission: "mcp__box__*", pattern: "*", '
                                     'action: allow}') == "allow"
    assert explore("mcp__box__crash", '{permission: "mcp__box__*", pattern: "*", '
                                      'action: allow}') == "deny"  # not read-only
    assert explore("mcp__box__echo") == "ask"                      # as build would
    assert explore("mcp__box__echo", '{permission: "mcp__box__echo", pattern: "*", '
                                     'action: deny}') == "deny"
    policy(project, '{permission: "*", pattern: "*", action: ask}')
    gate = gate_under_build("explore")
    assert not gate.denies_outright("mcp__box__echo")              # offered to explore
    assert gate.denies_outright("mcp__box__crash")                 # not offered


def test_a_tool_that_says_nothing_of_itself_is_no_read_only_agents(project):
    policy(project, '{permission: "*", pattern: "*", action: allow}')
    world = open_world()
    capabilities = world.capabilities().with_effects(BOX_EFFECTS)
    plan = world.policy.gate(world.agents["plan"], capabilities=capabilities)
    assert plan.decide([Request("mcp__box__crash", "{}")]).action == "deny"
    assert plan.decide([Request("mcp__box__echo", "{}")]).action == "allow"
    # a read-only tool of an open world reaches the network: not for a read-only agent
    wide = capabilities.with_effects({"mcp__box__echo": mcp_effects(True, None)})
    plan = world.policy.gate(world.agents["plan"], capabilities=wide)
    assert plan.decide([Request("mcp__box__echo", "{}")]).action == "deny"


def test_mcp_list_judges_a_subagent_as_builds_child_with_read_only_tools_open(project, capsys):
    toolbox_for_the_user()
    policy(project, '{permission: "mcp__box__*", pattern: "*", action: allow}')
    capsys.readouterr()
    assert main(["mcp", "list", "--json", "--agent", "explore"]) == 0
    [box] = json.loads(capsys.readouterr().out)["servers"]
    decisions = {tool["name"]: tool["decision"] for tool in box["tools"]}
    assert (decisions["mcp__box__echo"], decisions["mcp__box__crash"]) == ("allow", "deny")


def test_a_run_leaves_no_server_process_behind(project, capsys):
    # unconfined, so the pids the server reports are the host's (confined, the
    # sandbox's PID namespace takes them all: tests/mcp/test_mcp_sandbox.py)
    toolbox_for_the_user(settings="sandbox: off\n")
    mine = config_dir() / "policy.yaml"    # the person's own: a project's allow never
    mine.write_text('rules: [{permission: "mcp__box__*", pattern: "*", action: allow}]\n')
    # opens a tool that may reach the network (these say nothing of themselves)
    results = finished(run_json(project, capsys, "{tool: mcp__box__pid, args: {}}",
                                "{tool: mcp__box__spawn, args: {}}", "{text: done}"))
    server, child = (int(result["output"]) for result in results)
    assert gone(server) and gone(child)
