"""``/permissions trust|untrust`` on prompt_toolkit's pipe input: the project's rules
count (or stop counting) from the very next call of the session; bad input gets a
message and changes nothing. (The screen and rule changes in a real terminal:
test_permissions_tmux.py.)"""

from __future__ import annotations

from support.repl_driver import CTRL_D, ENTER, drive

from dm_cc.compose import open_world

READY = "/help lists commands"
MAKE = {"tool": "bash", "args": {"command": "make all", "description": "Build"}}


def test_trusting_and_forgetting_the_project_holds_from_the_next_call(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'make *', action: allow}\n")
    run = drive(project, [MAKE, {"text": "built once"}, MAKE, {"text": "built twice"}], [
        ("y trust them", CTRL_D),                                   # not now, at start
        (READY, "/permissions trust" + ENTER),
        ("trusted 1 file of", "build it" + ENTER),
        ("built once", "/permissions untrust" + ENTER),
        ("forgot 1 trusted file of", "once more" + ENTER),
        ("build wants to use bash", "n"),
        ("stopped: you said no", "/permissions revoke s9" + ENTER),
        ("no approval 's9'", "/permissions mcp trust nope" + ENTER),
        ("no MCP server 'nope'", "/permissions remove 7" + ENTER),
        ("no rule 7", ""),
    ])
    assert not run.errors and run.code == 0, run.errors
    once = run.after("build it")
    assert 'allowed by allow bash "make *" at ' in once and ".dm_cc/policy.yaml:2" in once
    again = run.after("once more")
    assert '← ask * "*" at builtin:defaults' in again and "allowed by" not in again
    assert "built twice" not in run.screen
    assert open_world(cwd=project).trust.pending          # forgotten for later sessions too
