"""The edit and write tools keep what they change as undo steps (a real UndoStore in
tmp_path): undone, the project is as it was; files outside it are not kept."""

from __future__ import annotations

import dataclasses

import pytest

from dm_cc.session import UndoStore
from dm_cc.tools.edit import EditTool
from dm_cc.tools.write import WriteTool

from .helpers import call

SESSION = "ses_0000000000aa_00000001"


@pytest.fixture
def store(tmp_path):
    return UndoStore(tmp_path / "undo")


@pytest.fixture
def undoing(ctx, store):
    """``ctx`` whose tool calls record undo steps in ``store``, at turn 3."""
    return dataclasses.replace(
        ctx, undo=lambda label: store.recorder(SESSION, ctx.root, label, turn=3))


def test_an_edit_is_a_step_and_undo_puts_the_file_back(undoing, store, project):
    (project / "a.py").write_text("x = 1\n")
    out = call(EditTool(), undoing, path="a.py", old_string="1", new_string="2")
    assert not out.is_error and (project / "a.py").read_text() == "x = 2\n"
    [step] = store.steps(SESSION)
    assert (step.label, step.paths, step.turn) == ("edit a.py", ("a.py",), 3)
    assert store.undo(SESSION).ok and (project / "a.py").read_text() == "x = 1\n"


def test_a_failed_edit_is_no_step(undoing, store, project):
    (project / "a.py").write_text("x = 1\n")
    out = call(EditTool(), undoing, path="a.py", old_string="nothing like it", new_string="2")
    assert out.is_error and store.steps(SESSION) == []


def test_a_write_that_made_directories_is_undone_with_them(undoing, store, project):
    (project / "old.txt").write_text("old")
    call(WriteTool(), undoing, path="old.txt", content="new")
    call(WriteTool(), undoing, path="deep/er/new.txt", content="hello")
    steps = store.steps(SESSION)
    assert [s.label for s in steps] == ["write old.txt", "write deep/er/new.txt"]
    assert set(steps[1].paths) == {"deep", "deep/er", "deep/er/new.txt"}
    result = store.undo(SESSION, 1)
    assert result.ok and [s.number for s in result.undone] == [2, 1]
    assert not (project / "deep").exists() and (project / "old.txt").read_text() == "old"


def test_writing_the_same_content_is_no_step(undoing, store, project):
    (project / "a.txt").write_text("same")
    call(WriteTool(), undoing, path="a.txt", content="same")
    assert store.steps(SESSION) == []


def test_a_write_through_a_symlink_keeps_its_target(undoing, store, project):
    (project / "real.txt").write_text("real")
    (project / "link.txt").symlink_to("real.txt")
    call(WriteTool(), undoing, path="link.txt", content="changed")
    [step] = store.steps(SESSION)
    assert step.paths == ("real.txt",)
    assert store.undo(SESSION).ok
    assert (project / "real.txt").read_text() == "real" and (project / "link.txt").is_symlink()


def test_a_file_outside_the_project_is_not_kept(undoing, store, project):
    outside = project.parent / "outside.txt"
    call(WriteTool(), undoing, path=str(outside), content="x")
    assert outside.read_text() == "x" and store.steps(SESSION) == []


def test_what_cannot_be_kept_is_said_and_the_edit_still_lands(ctx, project, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's directory should be")
    store = UndoStore(blocked / "undo")
    undoing = dataclasses.replace(
        ctx, undo=lambda label: store.recorder(SESSION, ctx.root, label, turn=0))
    (project / "a.py").write_text("x = 1\n")
    out = call(EditTool(), undoing, path="a.py", old_string="1", new_string="2")
    assert not out.is_error and (project / "a.py").read_text() == "x = 2\n"
    assert "this change cannot be undone" in out.display
