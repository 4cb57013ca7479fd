"""The REPL asks before a project's MCP server starts: y starts it (approval saved,
its tools offered), n leaves it stopped; the servers stop when the REPL ends."""

from __future__ import annotations

import sys

from support.mcp_servers import TOOLBOX
from support.repl_driver import drive

from dm_cc.compose import open_world

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
                [(QUESTION, "n"), (READY, "say hi" + ENTER)], timeout=20)
    assert not run.errors and run.code == 0, run.errors
    assert "not started (dm_cc mcp trust box approves it)" in run.screen
    assert "Unknown tool 'mcp__box__echo'" in tool_results(run)[0]
    assert open_world(cwd=project).approvals.trusted_servers() == {}
