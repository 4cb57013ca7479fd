"""The REPL asks before a project's MCP server starts: y starts it (approval saved,
its tools offered), n leaves it stopped (and /mcp says how to approve it); the
servers stop when the REPL ends. /mcp lists the servers as `dm_cc mcp list` does."""

from __future__ import annotations

import sys

from support.mcp_servers import TOOLBOX
from support.repl_driver import drive
from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.config import dirs

ENTER = "\r"
QUESTION = "start it and remember"
READY = "/help lists commands"
ECHO = {"tool": "mcp__box__echo", "args": {"text": "hi"}}


def configure(project) -> None:
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "config.yaml").write_text(
        f"mcp:\n  servers:\n    box: {{command: {sys.executable}, args: [{TOOLBOX}, stdio]}}\n")
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: 'mcp__box__*', pattern: '*', action: allow}\n")
    trust_project(project)


def tool_results(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages if m.role == "tool"]


def test_y_starts_the_server_and_remembers_it(project):
    configure(project)
    run = drive(project, [ECHO, {"text": "done"}],
                [(QUESTION, "y"), (READY, "say hi" + ENTER)], timeout=20)
    assert not run.errors and run.code == 0, run.errors
    assert "this project defines an MCP server box at " in run.screen
    assert ".dm_cc/config.yaml:3\r" in run.screen
    assert tool_results(run) == ["echo: hi"]
    server = open_world(cwd=project).settings.mcp["box"]
    assert open_world(cwd=project).approvals.trusted_servers() == {"box": server.fingerprint}
    assert all(s.state == "stopped" for s in run.repl.world.start_mcp().statuses())  # closed


def test_n_leaves_it_stopped_and_says_how_to_approve_it(project):
    configure(project)
    run = drive(project, [ECHO, {"text": "done"}],
                [(QUESTION, "n"), (READY, "/mcp" + ENTER), ("next time dm_cc", "say hi" + ENTER)],
                timeout=20)
    assert not run.errors and run.code == 0, run.errors
    assert "not started (dm_cc mcp trust box approves it)" in run.screen
    shown = run.after("MCP servers; each tool")
    assert "box  not started  trust: not approved  (project, " in shown
    assert ".dm_cc/config.yaml:3)\r" in shown
    assert "review it, then approve it with `dm_cc mcp trust box`" in shown
    assert "Unknown tool 'mcp__box__echo'" in tool_results(run)[0]
    assert open_world(cwd=project).approvals.trusted_servers() == {}


def user_servers(**servers: str) -> None:
    """Servers in the user config (they start without asking): name → its args."""
    config = dirs.config_dir() / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("mcp:\n  servers:\n" + "".join(
        f"    {name}: {{command: {sys.executable}, args: [{TOOLBOX}, stdio{args}]}}\n"
        for name, args in servers.items()))


def test_slash_mcp_lists_a_running_server_its_tools_and_the_agents_decisions(project):
    user_servers(box="")
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: mcp__box__echo, pattern: '*', action: allow}\n"
        "  - {permission: mcp__box__crash, pattern: '*', action: deny}\n")
    trust_project(project)
    run = drive(project, [], [(READY, "/help" + ENTER), ("/mcp", "/mcp" + ENTER),
                              ("mcp__box__pid", "")], timeout=20)
    assert not run.errors and run.code == 0, run.errors
    assert "MCP servers: trust, status, tools and their" in run.after("Commands:")   # wrapped at 80
    shown = run.after("MCP servers; each tool with what build decides")
    assert "box  running, pid " in shown and "  trust: user config  (user, " in shown
    assert "  mcp__box__echo  allow (" in shown and "/.dm_cc/policy.yaml:2)  read-only\r" in shown
    assert "  mcp__box__crash  deny (denied outright)\r" in shown
    assert "  mcp__box__pid  ask (builtin:defaults)\r" in shown
    assert "review it" not in shown


def test_slash_mcp_with_no_servers_says_where_they_are_configured(project):
    run = drive(project, [], [(READY, "/mcp" + ENTER), ("docs/mcp.md)", "")])
    assert not run.errors and run.code == 0, run.errors
    assert "no MCP servers configured (mcp.servers in .dm_cc/config.yaml or your config.yaml; " \
           "docs/mcp.md)" in run.after("> /mcp")


def test_slash_mcp_shows_why_a_server_failed_and_the_others_work(project):
    user_servers(broken=", --exit-at-start", box="")
    run = drive(project, [], [(READY, "/mcp" + ENTER), ("mcp__box__echo", "")], timeout=20)
    assert not run.errors and run.code == 0, run.errors
    shown = run.after("MCP servers; each tool")
    assert "broken  failed  trust: user config" in shown
    assert "  error: " in shown and "toolbox: refusing to start" in shown
    assert "box  running, pid " in shown
