"""The REPL started in a sub-directory holding a ``.dm_cc/`` of its own: the
session's project is the repository, and the ignored directory is named once."""

from __future__ import annotations

from support.repl_driver import ENTER, drive

READY = "/help lists commands"


def test_a_dm_cc_below_the_root_is_named_as_a_notice(project):
    sub = project / "sub"
    (sub / ".dm_cc").mkdir(parents=True)
    run = drive(sub, [{"text": "hello"}], [(READY, "hi" + ENTER), ("hello", "")])
    assert not run.errors
    assert f"· {project}" in run.screen                       # the session's project
    notice = f"! {sub / '.dm_cc'}/ is ignored: the project root is {project} (the repository)"
    assert run.screen.count(notice) == 1
