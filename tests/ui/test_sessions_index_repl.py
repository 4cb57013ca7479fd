"""/sessions in the REPL with a damaged session index: the listing is the files', and the
damage is said once, as a notice."""

from __future__ import annotations

from support.repl_driver import CTRL_D, ENTER, drive

from dm_cc.compose import open_world
from dm_cc.session.messages import Message

READY = "/help lists commands"   # the welcome line, once the session is loaded


def test_sessions_reports_a_damaged_index_and_lists_from_the_files(project):
    store = open_world().sessions
    saved = store.create(project, title="an earlier session")
    saved.append(Message("user", "an earlier session"))
    store.list()
    (store.root / "index.json").write_bytes(b"\x00 damaged")
    run = drive(project, [], [(READY, "/sessions" + ENTER),
                              ("resume one with", "/sessions" + ENTER),
                              ("resume one with", CTRL_D)])
    assert not run.errors
    first, second, _ = run.after(READY).split("resume one with", 2)   # the two listings' ends
    assert saved.id in first and saved.id in second
    assert f"! {store.root / 'index.json'}: unreadable session index (" in first
    assert "session index" not in second       # rebuilt: said once
