"""A session over a store of many saved approvals, on prompt_toolkit's pipe input: a
saved one allows at once, "s" holds for the session, and ``/permissions revoke s1``
takes it back from the very next call (the session's approvals are compared on each
lookup, never taken from a stale copy); the store is read once and left unchanged."""

from __future__ import annotations

import json

from support.repl_driver import ENTER, drive

from dm_cc.compose import open_world
from dm_cc.session import SavedApproval

READY = "/help lists commands"
TASK = {"tool": "bash", "args": {"command": "make task1999 -n", "description": "Task"}}
MAKE = {"tool": "bash", "args": {"command": "make all", "description": "Build"}}


def test_a_session_approval_revoked_asks_again_among_two_thousand_saved(project):
    store = open_world(cwd=project).approvals
    store.add("bash", "ls -la *", agent="build")  # the directory, as dm_cc makes it
    saved = [SavedApproval(f"apr_{n:08x}", "bash", f"make task{n} *", "build",
                           1_780_000_000.0 + n).to_json() for n in range(2_000)]
    store.path.write_text(json.dumps({"version": 1, "project": None, "approvals": saved}),
                          encoding="utf-8")
    before = store.path.read_bytes()
    run = drive(project, [TASK, MAKE, {"text": "built once"}, MAKE, {"text": "built twice"}], [
        (READY, "go" + ENTER),
        ("build wants to use bash", "s"),
        ("Enter keeps it", ENTER),
        ("built once", "/permissions revoke s1" + ENTER),
        ("revoked s1", "again" + ENTER),
        ("build wants to use bash", "n"),
        ("stopped: you said no", ""),
    ])
    assert not run.errors and run.code == 0, run.errors
    first = run.after("go")
    assert 'allowed by allow bash "make task1999 *" at approval:apr_000007cf' in first
    again = run.after("again")
    assert '← ask * "*" at builtin:defaults' in again and "allowed by" not in again
    assert "built twice" not in run.screen
    assert store.path.read_bytes() == before  # "s" saves nothing
