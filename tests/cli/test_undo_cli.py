"""``dm_cc undo`` over the steps of real ``dm_cc run``s: the scripted model edits and
writes with the real tools, the undo store lives in the state dir (DM_CC_HOME)."""

from __future__ import annotations

import pytest
import yaml
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.compose import open_world

ALLOW_EDITS = "rules:\n  - {permission: edit, pattern: '**', action: allow}\n"
EDIT_AND_WRITE = [
    {"tool": "edit", "args": {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}},
    {"tool": "write", "args": {"path": "new/c.txt", "content": "c\n"}},
    {"text": "done"},
]


@pytest.fixture
def project(project, monkeypatch):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(ALLOW_EDITS)
    trust_project(project)
    (project / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(project)
    return project


def run(project, capsys, script: list[dict]) -> str:
    """One headless turn of the scripted model; the session's id."""
    path = project.parent / "script.yaml"
    path.write_text(yaml.safe_dump(script))
    assert main(["run", "--json", "--model", f"scripted:{path}", "go"]) == 0
    capsys.readouterr()
    return open_world(cwd=project).sessions.latest(project).id


def undo(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["undo", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_undo_restores_an_edited_file_and_removes_a_written_one(project, capsys):
    session = run(project, capsys, EDIT_AND_WRITE)
    assert (project / "a.py").read_text() == "x = 2\n" and (project / "new/c.txt").exists()

    code, out, _ = undo(capsys, "--list")
    assert code == 0 and f"session {session}:" in out
    lines = [line.split() for line in out.splitlines()[1:3]]
    assert [line[0] for line in lines] == ["1", "2"]
    assert "edit a.py  (1 path)" in out
    assert "write new/c.txt  (2 paths)" in out        # the file and the directory made for it

    code, out, _ = undo(capsys)
    assert code == 0 and "undid step 2: write new/c.txt" in out
    assert not (project / "new").exists() and (project / "a.py").read_text() == "x = 2\n"

    code, out, _ = undo(capsys)
    assert code == 0 and "undid step 1: edit a.py" in out and "restored a.py" in out
    assert (project / "a.py").read_text() == "x = 1\n"

    code, _, err = undo(capsys)
    assert code == 1 and "has a step to undo" in err


def test_undo_to_a_step_undoes_every_later_one(project, capsys):
    run(project, capsys, EDIT_AND_WRITE)
    code, out, _ = undo(capsys, "1")
    assert code == 0 and out.index("undid step 2") < out.index("undid step 1")
    assert (project / "a.py").read_text() == "x = 1\n" and not (project / "new").exists()


def test_a_file_changed_since_is_a_refusal_that_restores_nothing(project, capsys):
    run(project, capsys, EDIT_AND_WRITE)
    (project / "a.py").write_text("x = 3  # mine\n")
    code, out, err = undo(capsys, "1")
    assert code == 1 and out == ""
    assert "nothing was undone" in err and "a.py changed since step 1: its content changed" in err
    assert (project / "a.py").read_text() == "x = 3  # mine\n"
    assert (project / "new/c.txt").read_text() == "c\n"      # not even the other step
    code, out, _ = undo(capsys, "--list")
    assert "edit a.py" in out and "write new/c.txt" in out   # both still there


def test_the_default_session_is_this_projects_latest_with_steps(project, capsys, tmp_path,
                                                                 monkeypatch):
    first = run(project, capsys, EDIT_AND_WRITE[:1] + [{"text": "done"}])
    second = run(project, capsys, [{"text": "nothing changed"}])
    assert first != second
    code, out, _ = undo(capsys, "--list")
    assert code == 0 and f"session {first}:" in out     # the latest session has no step

    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    monkeypatch.chdir(other)
    code, out, err = undo(capsys, "--list")
    assert code == 0 and "no session of" in out and str(other) in out
    code, out, _ = undo(capsys, "--session", first, "--list")   # any session, by its id
    assert code == 0 and "edit a.py" in out
    code, out, _ = undo(capsys, "--session", first)
    assert code == 0 and (project / "a.py").read_text() == "x = 1\n"


def test_a_step_that_does_not_exist_or_is_not_a_number(project, capsys):
    run(project, capsys, EDIT_AND_WRITE)
    code, _, err = undo(capsys, "7")
    assert code == 1 and "has no step 7 (its steps are 1-2)" in err
    code, _, err = undo(capsys, "0")
    assert code == 2 and "numbered from 1" in err
    code, _, err = undo(capsys, "--session", "../x")
    assert code == 2 and "not a session id" in err
