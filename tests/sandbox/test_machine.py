"""What the spec is derived from, read from this machine: the project's tree
(listed once, kept while unchanged), paths outside it (git's directories:
test_git_dirs.py)."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from dm_cc.sandbox.machine import KnownMachine, LocalMachine, TreeLister


def paths(tree) -> set[str]:
    return {entry.path for entry in tree.entries}


# --------------------------------------------------------------------------- the tree

def settled() -> None:
    """Wait until what was just made is older than a clock tick: its listing may be kept."""
    time.sleep(TreeLister.RACY_NS / 1e9 + 0.01)


def test_unchanged_the_same_tree_comes_back(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").touch()
    settled()
    lister = TreeLister()
    first = lister.list(tmp_path.as_posix())
    assert lister.list(tmp_path.as_posix()) is first
    (tmp_path / "src" / "b.py").touch()
    again = lister.list(tmp_path.as_posix())
    assert paths(again) == {"src", "src/a.py", "src/b.py"}
    assert again.signature != first.signature


def test_a_listing_taken_in_the_same_clock_tick_as_a_change_is_not_kept(tmp_path, monkeypatch):
    """An entry added right after a listing can leave the directory's ctime as it
    was (a coarse file system clock): such a listing is listed again next time.
    The clock is played: the directory's ctime stands still."""
    (tmp_path / "a").touch()
    tick = time.time_ns()
    real = os.stat
    monkeypatch.setattr("dm_cc.sandbox.machine.os.stat", lambda path: SimpleNamespace(
        st_ctime_ns=tick) if str(path) == str(tmp_path) else real(path))
    lister = TreeLister()
    assert paths(lister.list(tmp_path.as_posix())) == {"a"}
    (tmp_path / "b").touch()
    assert paths(lister.list(tmp_path.as_posix())) == {"a", "b"}


def test_a_change_hidden_behind_an_mtime_set_back_is_seen(tmp_path):
    """The owner sets a directory's mtime at will (``git init lib && touch -d @OLD
    lib``), not its ctime."""
    (tmp_path / "lib").mkdir()
    settled()
    lister = TreeLister()
    assert paths(lister.list(tmp_path.as_posix())) == {"lib"}
    before = os.stat(tmp_path / "lib")
    (tmp_path / "lib" / ".git").mkdir()
    os.utime(tmp_path / "lib", ns=(before.st_atime_ns, before.st_mtime_ns))
    settled()
    assert paths(lister.list(tmp_path.as_posix())) == {"lib", "lib/.git"}


def test_symlinks_are_listed_not_followed_and_git_objects_are_skipped(tmp_path):
    (tmp_path / ".git" / "objects" / "ab").mkdir(parents=True)
    (tmp_path / ".git" / "objects" / "ab" / "cdef").touch()
    (tmp_path / ".git" / "modules" / "lib" / "objects" / "ab").mkdir(parents=True)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "x").touch()
    os.symlink("real", tmp_path / "link")
    tree = TreeLister().list(tmp_path.as_posix())
    assert "link" in paths(tree) and "link/x" not in paths(tree)
    assert not tree.is_dir("link") and tree.is_dir("real")
    assert ".git/objects" in paths(tree) and ".git/objects/ab" not in paths(tree)
    assert ".git/modules/lib/objects" in paths(tree)
    assert ".git/modules/lib/objects/ab" not in paths(tree)
    assert tree.children()[".git/objects"] == []


def test_a_directory_that_cannot_be_listed_is_said_and_its_failure_not_kept(tmp_path, monkeypatch):
    """A mode change moves no mtime: a refused listing kept would hide the directory's
    entries for good once it is readable again."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a").touch()
    settled()
    real = os.scandir

    def refusing(path="."):
        if str(path) == str(tmp_path / "x"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    lister = TreeLister()
    monkeypatch.setattr("dm_cc.sandbox.machine.os.scandir", refusing)
    tree = lister.list(tmp_path.as_posix())
    assert tree.unlisted == {"x"} and paths(tree) == {"x"}
    monkeypatch.setattr("dm_cc.sandbox.machine.os.scandir", real)
    again = lister.list(tmp_path.as_posix())
    assert again.unlisted == frozenset() and paths(again) == {"x", "x/a"}


# --------------------------------------------------------------------------- paths outside the tree

@pytest.fixture
def outside(tmp_path):
    """A directory with a file, a subdirectory, a link to it and a dangling link."""
    base = tmp_path / "outside"
    (base / "sub").mkdir(parents=True)
    (base / "sub" / "key").write_text("k")
    (base / "file").write_text("f")
    os.symlink("sub", base / "to-sub")
    os.symlink("nowhere", base / "dangling")
    return base


def test_this_machine_says_what_is_at_a_path_as_a_mount_meets_it(outside):
    machine = LocalMachine()
    assert machine.exists(str(outside / "dangling"))         # a link, even dangling
    assert not machine.exists(str(outside / "missing"))
    assert machine.is_dir(str(outside / "to-sub"))            # followed
    assert not machine.is_dir(str(outside / "dangling")) and not machine.is_dir(str(outside / "file"))


def test_this_machine_lists_under_a_directory_without_following_links_up_to_a_limit(outside):
    machine = LocalMachine()
    listed = machine.list_under(str(outside), 10)
    assert listed is not None
    assert sorted(listed) == sorted([(str(outside / "sub"), True), (str(outside / "sub" / "key"), False),
                                     (str(outside / "file"), False), (str(outside / "to-sub"), False),
                                     (str(outside / "dangling"), False)])
    assert machine.list_under(str(outside), 4) is None
    assert machine.list_under(str(outside / "missing"), 10) == []


def test_a_machine_described_as_data_answers_as_this_one_does(outside):
    """The fake answers every question as the real machine does on the same files."""
    real = LocalMachine()
    listed = real.list_under(str(outside), 10) or []
    known = KnownMachine(files=frozenset(p for p, is_dir in listed if not is_dir),
                         directories=frozenset({str(outside), *(p for p, is_dir in listed if is_dir)}))
    for path in (outside, outside / "sub", outside / "sub" / "key", outside / "file",
                 outside / "dangling", outside / "missing"):
        assert known.exists(str(path)) == real.exists(str(path)), path
        assert known.is_dir(str(path)) == real.is_dir(str(path)), path
    for limit in (4, 5, 10):
        assert sorted(known.list_under(str(outside), limit) or ()) == \
            sorted(real.list_under(str(outside), limit) or ()), limit
