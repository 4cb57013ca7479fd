"""The undo store on real files in tmp_path: what a step keeps (a changed, created,
deleted file, a symlink, a mode, a directory), undo all or nothing, the size
bound, damaged records kept, paths that would leave the project."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from dm_cc.errors import UndoError
from dm_cc.session.undo import UndoStore

SESSION = "ses_0000000000aa_00000001"
OTHER = "ses_0000000000bb_00000002"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def store(tmp_path: Path) -> UndoStore:
    return UndoStore(tmp_path / "state" / "undo")


def edit(store: UndoStore, root: Path, relative: str, content: str, *, session: str = SESSION,
         turn: int = 0):
    """One step writing ``content`` into ``relative`` in place, as the edit tool does."""
    with store.recorder(session, root, f"edit {relative}", turn=turn) as recorder:
        recorder.keep(relative)
        (root / relative).write_text(content)
    return recorder.close()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --------------------------------------------------------------------------- what is kept


def test_a_modified_file_comes_back_with_its_content_and_mode(store, root):
    target = root / "src" / "a.py"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    step = edit(store, root, "src/a.py", "new\n")
    assert step is not None and step.number == 1 and step.paths == ("src/a.py",)
    assert step.size == 4 and step.label == "edit src/a.py" and step.root == root.resolve()
    assert store.steps(SESSION) == [step]

    result = store.undo(SESSION)
    assert result.ok and result.restored == ("src/a.py",) and result.undone == (step,)
    assert target.read_text() == "old\n" and mode_of(target) == 0o640
    assert store.steps(SESSION) == []          # an undone step is gone
    assert not store.undo(SESSION).ok          # nothing left to undo


def test_a_created_file_and_the_directories_made_for_it_are_removed(store, root):
    with store.recorder(SESSION, root, "write new/deep/x.txt", turn=2) as recorder:
        recorder.keep("new")
        recorder.keep("new/deep")
        recorder.keep("new/deep/x.txt")
        (root / "new" / "deep").mkdir(parents=True)
        (root / "new" / "deep" / "x.txt").write_text("x")
    step = recorder.close()
    assert step is not None and step.size == 0 and step.turn == 2
    assert set(step.paths) == {"new", "new/deep", "new/deep/x.txt"}
    result = store.undo(SESSION)
    assert result.ok and not (root / "new").exists()
    assert set(result.restored) == {"new", "new/deep", "new/deep/x.txt"}


def test_a_directory_a_step_made_stays_when_it_holds_other_files(store, root):
    with store.recorder(SESSION, root, "write d/x", turn=0) as recorder:
        recorder.keep("d")
        recorder.keep("d/x")
        (root / "d").mkdir()
        (root / "d" / "x").write_text("x")
    (root / "d" / "mine").write_text("not dm_cc's")
    result = store.undo(SESSION)
    assert result.ok and result.left == ("d",)
    assert not (root / "d" / "x").exists() and (root / "d" / "mine").read_text() == "not dm_cc's"


def test_a_deleted_file_is_kept_by_a_hard_link_when_moving_and_comes_back(store, root):
    target = root / "data.bin"
    target.write_bytes(b"\x00payload")
    target.chmod(0o600)
    with store.recorder(SESSION, root, "bash: rm data.bin", turn=0) as recorder:
        recorder.keep("data.bin", moving=True)
        assert target.stat().st_nlink == 2      # linked into the store, not copied
        target.unlink()
    assert recorder.close() is not None
    result = store.undo(SESSION)
    assert result.ok and target.read_bytes() == b"\x00payload" and mode_of(target) == 0o600


def test_a_linked_file_changed_in_place_after_all_gets_a_copy_of_its_own(store, root):
    script = root / "run.sh"
    script.write_text("original\n")
    with store.recorder(SESSION, root, "bash: chmod +x run.sh", turn=0) as recorder:
        recorder.keep("run.sh", moving=True)   # linked; then changed in place, not replaced
        script.chmod(0o755)
    assert script.stat().st_nlink == 1         # no longer shares its content with the store
    edit(store, root, "run.sh", "written in place later\n")
    result = store.undo(SESSION, 1)
    assert result.ok and script.read_text() == "original\n"


def test_a_file_written_in_place_is_copied_not_linked(store, root):
    target = root / "a.txt"
    target.write_text("before")
    with store.recorder(SESSION, root, "edit a.txt", turn=0) as recorder:
        recorder.keep("a.txt")
        assert target.stat().st_nlink == 1
        target.write_text("after")
    store.undo(SESSION)
    assert target.read_text() == "before"


def test_a_symlink_is_kept_as_a_link_and_never_followed(store, root, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    link = root / "link"
    link.symlink_to(outside)
    with store.recorder(SESSION, root, "bash: replace link", turn=0) as recorder:
        recorder.keep("link", moving=True)
        link.unlink()
        link.write_text("a file now")
    result = store.undo(SESSION)
    assert result.ok and link.is_symlink() and os.readlink(link) == str(outside)
    assert outside.read_text() == "outside"


def test_a_mode_change_is_undone(store, root):
    script = root / "run.sh"
    script.write_text("echo\n")
    script.chmod(0o644)
    with store.recorder(SESSION, root, "bash: chmod +x run.sh", turn=0) as recorder:
        recorder.keep("run.sh", moving=True)
        script.chmod(0o755)
    assert recorder.close() is not None
    assert store.undo(SESSION).ok and mode_of(script) == 0o644


def test_a_directory_replaced_by_a_file_comes_back_with_its_files(store, root):
    (root / "d").mkdir(mode=0o750)
    (root / "d" / "x").write_text("x")
    with store.recorder(SESSION, root, "bash: rm -r d; echo > d", turn=0) as recorder:
        recorder.keep("d/x", moving=True)
        recorder.keep("d")
        (root / "d" / "x").unlink()
        (root / "d").rmdir()
        (root / "d").write_text("a file")
    result = store.undo(SESSION)
    assert result.ok, result
    assert (root / "d").is_dir() and mode_of(root / "d") == 0o750
    assert (root / "d" / "x").read_text() == "x"


def test_nothing_changed_is_no_step_and_costs_nothing(store, root):
    (root / "same.txt").write_text("same")
    assert edit(store, root, "same.txt", "same") is None
    with store.recorder(SESSION, root, "nothing", turn=0) as recorder:
        pass
    assert recorder.close() is None
    assert store.steps(SESSION) == [] and store.sessions() == [] and store.size() == 0
    pending = store.directory / ".pending"
    assert not pending.exists() or not any(pending.iterdir())


def test_a_path_kept_twice_keeps_its_first_state(store, root):
    (root / "a").write_text("first")
    with store.recorder(SESSION, root, "twice", turn=0) as recorder:
        recorder.keep("a")
        (root / "a").write_text("second")
        recorder.keep("a")
        (root / "a").write_text("third")
    assert store.undo(SESSION).ok and (root / "a").read_text() == "first"


# --------------------------------------------------------------------------- steps and undo


def test_steps_are_numbered_per_session_and_undo_to_a_step_undoes_it_and_all_after(store, root):
    (root / "a").write_text("0")
    for content in ("1", "2", "3"):
        edit(store, root, "a", content)
    edit(store, root, "a", "other session", session=OTHER)
    assert [s.number for s in store.steps(SESSION)] == [1, 2, 3]
    assert [s.number for s in store.steps(OTHER)] == [1]
    assert store.sessions() == [OTHER, SESSION]          # the newest step first
    assert store.sessions(root) == [OTHER, SESSION]
    assert store.sessions(root.parent) == []

    (root / "a").write_text("3")  # put the other session's change back by hand
    result = store.undo(SESSION, 2)
    assert result.ok and [s.number for s in result.undone] == [3, 2]
    assert (root / "a").read_text() == "1"
    assert [s.number for s in store.steps(SESSION)] == [1]
    assert edit(store, root, "a", "again").number == 2   # the first free number again


def test_undo_names_a_step_that_does_not_exist(store, root):
    (root / "a").write_text("0")
    edit(store, root, "a", "1")
    result = store.undo(SESSION, 7)
    assert not result.ok and "no step 7" in result.refused[0] and "1" in result.refused[0]


def test_a_file_changed_since_refuses_everything_and_names_it(store, root):
    (root / "a").write_text("a0")
    (root / "b").write_text("b0")
    edit(store, root, "a", "a1")
    edit(store, root, "b", "b1")
    (root / "a").write_text("mine")             # someone changed it since step 1
    result = store.undo(SESSION, 1)
    assert not result.ok and not result.undone and not result.restored
    assert result.refused == ("a changed since step 1: its content changed",)
    assert (root / "a").read_text() == "mine" and (root / "b").read_text() == "b1"
    assert len(store.steps(SESSION)) == 2
    assert store.undo(SESSION).ok and (root / "b").read_text() == "b0"   # step 2 alone can


def test_a_change_between_two_steps_refuses(store, root):
    (root / "a").write_text("0")
    edit(store, root, "a", "1")
    (root / "a").write_text("by hand")
    edit(store, root, "a", "2")
    result = store.undo(SESSION, 1)
    assert not result.ok and "a changed between step 1 and step 2" in result.refused[0]
    assert (root / "a").read_text() == "2"


def test_a_removed_and_a_retyped_file_say_what_changed(store, root):
    (root / "gone").write_text("0")
    (root / "mode").write_text("0")
    edit(store, root, "gone", "1")
    edit(store, root, "mode", "1")
    (root / "gone").unlink()
    (root / "mode").chmod(0o700)
    reasons = store.undo(SESSION, 1).refused
    assert "gone changed since step 1: it was removed" in reasons
    assert any(r.startswith("mode changed since step 2: its mode changed") for r in reasons)


def test_a_path_already_back_as_it_was_is_no_obstacle(store, root):
    (root / "a").write_text("old")
    edit(store, root, "a", "new")
    (root / "a").write_text("old")
    assert store.undo(SESSION).ok and (root / "a").read_text() == "old"


def test_a_parent_that_became_a_symlink_refuses_and_nothing_outside_is_touched(store, root,
                                                                              tmp_path):
    (root / "src").mkdir()
    (root / "src" / "a").write_text("old")
    edit(store, root, "src/a", "new")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a").write_text("new")       # the same content, outside the project
    (root / "src" / "a").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(elsewhere)
    result = store.undo(SESSION)
    # without following the link nothing is at src/a: it changed since, and stays so
    assert not result.ok and result.refused == ("src/a changed since step 1: it was removed",)
    assert (elsewhere / "a").read_text() == "new"


def test_a_missing_copy_refuses(store, root):
    (root / "a").write_text("old")
    step = edit(store, root, "a", "new")
    blob = store.directory / SESSION / f"{step.number:06d}" / "0"
    blob.unlink()
    result = store.undo(SESSION)
    assert not result.ok and "the copy step 1 kept of it is missing" in result.refused[0]
    assert (root / "a").read_text() == "new"


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize("bad", ["../outside", "/etc/passwd", "a/../../x", "", ".", "a\0b"])
def test_a_path_that_would_leave_the_project_is_rejected(store, root, bad):
    recorder = store.recorder(SESSION, root, "bad", turn=0)
    with pytest.raises(UndoError):
        recorder.keep(bad)
    (root / "a").write_text("x")
    with pytest.raises(UndoError):   # after an error the recorder keeps nothing more
        recorder.keep("a")
    assert recorder.close() is None and store.steps(SESSION) == []


def test_keep_never_follows_a_symlinked_parent(store, root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "via").symlink_to(outside)
    recorder = store.recorder(SESSION, root, "bad", turn=0)
    with pytest.raises(UndoError, match="via is now a symlink"):
        recorder.keep("via/secret")


def test_a_special_file_cannot_be_kept(store, root):
    os.mkfifo(root / "pipe")
    with pytest.raises(UndoError, match="special file"):
        store.recorder(SESSION, root, "fifo", turn=0).keep("pipe")


# --------------------------------------------------------------------------- the bound


def test_the_oldest_steps_across_sessions_are_dropped_past_the_limit(tmp_path, root):
    store = UndoStore(tmp_path / "undo", limit_bytes=2500)
    for name in ("one", "two", "three"):
        (root / name).write_bytes(b"x" * 1000)
    edit(store, root, "one", "1", session=SESSION)
    edit(store, root, "two", "2", session=OTHER)
    assert store.size() == 2000
    edit(store, root, "three", "3", session=SESSION)
    assert store.size() == 2000                       # the oldest step went
    assert [s.paths for s in store.steps(SESSION)] == [("three",)]
    assert [s.paths for s in store.steps(OTHER)] == [("two",)]
    assert not (store.directory / SESSION / "000001").exists()


def test_a_step_alone_past_the_limit_cannot_be_kept(tmp_path, root):
    store = UndoStore(tmp_path / "undo", limit_bytes=100)
    (root / "big").write_bytes(b"x" * 101)
    recorder = store.recorder(SESSION, root, "big", turn=0)
    with pytest.raises(UndoError, match="limit"):
        recorder.keep("big")
    (root / "big").write_bytes(b"y")
    assert recorder.close() is None and store.size() == 0


# --------------------------------------------------------------------------- damage


def test_a_damaged_record_is_reported_and_kept_and_undo_stops_before_it(store, root):
    (root / "a").write_text("0")
    edit(store, root, "a", "1")
    edit(store, root, "a", "2")
    record = store.directory / SESSION / "000001.json"
    record.write_bytes(b"{not json")
    assert [s.number for s in store.steps(SESSION)] == [2]
    problems = store.problems(SESSION)
    assert len(problems) == 1 and str(record) in problems[0] and "kept as it is" in problems[0]
    refused = store.undo(SESSION, 1)
    assert not refused.ok and refused.refused == tuple(problems)
    assert (root / "a").read_text() == "2"
    assert store.undo(SESSION).ok and (root / "a").read_text() == "1"   # step 2 alone can
    assert record.read_bytes() == b"{not json"                         # never rewritten
    assert not store.undo(SESSION).ok                                   # nor passed over
    assert record.read_bytes() == b"{not json"


def test_a_damaged_index_is_rebuilt_from_the_records(store, root):
    (root / "a").write_text("0")
    edit(store, root, "a", "1")
    (store.directory / "index.json").write_text("[]")
    assert store.sessions() == [SESSION] and store.size() == 1
    (store.directory / "index.json").unlink()
    assert store.sessions(root) == [SESSION]


def test_an_index_a_crash_left_behind_its_records_is_read_from_them(store, root, tmp_path):
    """The index is not fsynced (a step's one durable write is its record): one a crash
    left as it was before the last steps -- whole, but missing them, or naming one
    undone -- is found out on the first read and the records read instead."""
    (root / "a").write_text("0")
    (root / "b").write_text("0")
    edit(store, root, "a", "1")
    before = (store.directory / "index.json").read_bytes()
    edit(store, root, "b", "1", session=OTHER)
    (store.directory / "index.json").write_bytes(before)      # as a crash may leave it
    fresh = UndoStore(store.directory)
    assert fresh.sessions() == [OTHER, SESSION] and fresh.size() == 2
    assert fresh.sessions(root) == [OTHER, SESSION]
    assert fresh.undo(OTHER).ok and (root / "b").read_text() == "0"   # rewrote the index
    assert json.loads((store.directory / "index.json").read_text())["steps"][0]["session"] \
        == SESSION
    edit(fresh, root, "b", "2", session=OTHER)
    stale = (store.directory / "index.json").read_bytes()
    assert fresh.undo(OTHER).ok
    (store.directory / "index.json").write_bytes(stale)       # names a step undone since
    assert UndoStore(store.directory).sessions() == [SESSION]


def test_a_step_told_each_state_after_keeps_the_digest_so_a_same_sized_change_since_refuses(
        store, root):
    """A caller holding the parent directory open (a transaction applying) passes it and
    tells each path's state after as it lands, with the sha256 of what it put there
    when it read it: undo still tells a change since of the same size and time."""
    (root / "d").mkdir()
    (root / "d" / "a").write_text("old\n")
    (root / "d" / "new").write_text("new\n")
    info = (root / "d" / "new").stat()
    fd = os.open(root / "d", os.O_RDONLY | os.O_DIRECTORY)
    try:
        with store.recorder(SESSION, root, "bash: x", turn=0) as recorder:
            recorder.keep("d/a", moving=True, at=fd)
            os.replace("new", "a", src_dir_fd=fd, dst_dir_fd=fd)
            digest = hashlib.sha256(b"new\n").hexdigest()
            recorder.landed("d/a", fd, known=(info.st_ino, digest))
    finally:
        os.close(fd)
    step = recorder.close()
    assert step is not None
    record = json.loads((store.directory / SESSION / "000001.json").read_text())
    assert record["paths"][0]["after"]["sha256"] == digest
    target = root / "d" / "a"
    target.write_text("NEW\n")                              # same size, same time
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    refused = store.undo(SESSION)
    assert not refused.ok and "d/a changed since step 1" in refused.refused[0]
    target.write_text("new\n")
    assert store.undo(SESSION).ok and target.read_text() == "old\n"


def test_a_digest_told_for_another_file_is_not_taken(store, root):
    (root / "a").write_text("old\n")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with store.recorder(SESSION, root, "bash: x", turn=0) as recorder:
            recorder.keep("a", moving=True, at=fd)
            (root / "a").unlink()
            (root / "a").write_text("new\n")
            recorder.landed("a", fd, known=(os.stat(root).st_ino, "0" * 64))   # not its inode
    finally:
        os.close(fd)
    record = json.loads((store.directory / SESSION / "000001.json").read_text())
    assert record["paths"][0]["after"]["sha256"] == \
        hashlib.sha256(b"new\n").hexdigest()


def test_a_record_is_readable_json(store, root):
    (root / "a").write_text("0")
    edit(store, root, "a", "1", turn=5)
    record = json.loads((store.directory / SESSION / "000001.json").read_text())
    assert record["label"] == "edit a" and record["turn"] == 5
    assert record["paths"][0]["before"]["kind"] == "file"
    assert record["paths"][0]["after"]["sha256"]
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
