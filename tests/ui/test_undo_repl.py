"""/undo and /rewind in the REPL on prompt_toolkit's pipe input: the real loop, the
real edit and write tools in tmp_path, the undo store in the state dir, a scripted
model."""

from __future__ import annotations

import pytest
from support.repl_driver import ENTER, drive
from support.trust import trust_project

from dm_cc.compose import Options, open_world

READY = "/help lists commands"
ALLOW_EDITS = "rules:\n  - {permission: edit, pattern: '**', action: allow}\n"


@pytest.fixture
def project(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(ALLOW_EDITS)
    trust_project(project)
    (project / "a.txt").write_text("one\n")
    return project


def edit_a(old: str, new: str) -> dict:
    return {"tool": "edit", "args": {"path": "a.txt", "old_string": old, "new_string": new}}


def typed(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages
            if m.role == "user" and not m.synthetic]


def test_undo_restores_the_last_step_and_the_model_is_told(project):
    run = drive(project, [edit_a("one", "two"), {"text": "changed it"}, {"text": "noted"}],
                [(READY, "change a" + ENTER), ("changed it", "/undo list" + ENTER),
                 ("edit a.txt", "/undo" + ENTER), ("restored a.txt", "/undo" + ENTER),
                 ("nothing was undone", "what now" + ENTER), ("noted", "")])
    assert not run.errors, run.screen
    assert (project / "a.txt").read_text() == "one\n"
    assert "undid step 1: edit a.txt" in run.screen
    assert "session ses_" in run.after("nothing was undone") and "has no step to undo" \
        in run.after("nothing was undone")
    told = [m.content for m in run.repl.loop.session.messages if m.synthetic]
    assert told and "undid these changes with /undo: step 1 (edit a.txt)" in told[0]
    assert "a.txt" in told[0]
    # the model saw it with the next message
    assert "undid these changes" in str(run.repl.loop.rt.model.calls[-1][1])


def test_undo_refuses_when_the_file_changed_since(project):
    run = drive(project, [edit_a("one", "two"), {"text": "ok"}],
                [(READY, "change a" + ENTER), ("ok", "")])
    assert (project / "a.txt").read_text() == "two\n"
    (project / "a.txt").write_text("mine\n")
    again = drive(project, [], [(READY, "/undo" + ENTER), ("nothing was undone", "")],
                  options=Options(resume=run.repl.loop.session.info.id))
    assert not again.errors
    assert "a.txt changed since step 1: its content changed" in again.screen
    assert (project / "a.txt").read_text() == "mine\n"


def test_rewind_lists_the_messages_and_goes_back_with_files_and_history(project):
    write_b = {"tool": "write", "args": {"path": "b.txt", "content": "b\n"}}
    run = drive(project, [write_b, {"text": "wrote b"}, edit_a("one", "two"),
                          {"text": "edited a"}, {"text": "asked again"}],
                [(READY, "first" + ENTER), ("wrote b", "second" + ENTER),
                 ("edited a", "/rewind" + ENTER), ("your messages", "/rewind 2" + ENTER),
                 ("back at the prompt", ENTER), ("asked again", "")])
    assert not run.errors, run.screen
    listing = run.after("your messages")
    assert "  1  first  (2 file steps since)" in listing
    assert "  2  second  (1 file step since)" in listing
    assert "undid step 2: edit a.txt" in run.screen
    assert (project / "a.txt").read_text() == "one\n"          # the second turn's edit undone
    assert (project / "b.txt").read_text() == "b\n"            # the first turn's write stays
    # the history was cut before "second", which came back at the prompt and was sent again
    assert typed(run) == ["first", "second"]
    contents = [m.content for m in run.repl.loop.session.messages]
    assert "edited a" not in contents and contents[-1] == "asked again"
    saved = open_world(cwd=project).sessions.load(run.repl.loop.session.info.id)
    assert [m.content for m in saved.messages] == contents     # the file says the same


def test_rewind_changes_nothing_when_the_undo_is_refused(project):
    run = drive(project, [edit_a("one", "two"), {"text": "edited a"}],
                [(READY, "first" + ENTER), ("edited a", "")])
    (project / "a.txt").write_text("mine\n")
    again = drive(project, [], [(READY, "/rewind 1" + ENTER), ("nothing was rewound", "")],
                  options=Options(resume=run.repl.loop.session.info.id))
    assert not again.errors
    assert "a.txt changed since step 1" in again.screen
    assert (project / "a.txt").read_text() == "mine\n"
    assert typed(again) == ["first"] and len(again.repl.loop.session.messages) == 4
