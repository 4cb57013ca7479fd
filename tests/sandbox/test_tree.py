"""The project's tree as the spec needs it: listed once, kept while unchanged."""

from __future__ import annotations

import os
import time

from dm_cc.sandbox.tree import TreeLister


def paths(tree) -> set[str]:
    return {entry.path for entry in tree.entries}


def test_unchanged_the_same_tree_comes_back(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").touch()
    old = time.time_ns() - 10**9          # mtimes long past: listings may be kept
    for directory in (tmp_path / "src", tmp_path):
        os.utime(directory, ns=(old, old))
    lister = TreeLister()
    first = lister.list(tmp_path.as_posix())
    assert lister.list(tmp_path.as_posix()) is first
    (tmp_path / "src" / "b.py").touch()
    again = lister.list(tmp_path.as_posix())
    assert paths(again) == {"src", "src/a.py", "src/b.py"}
    assert again.signature != first.signature


def test_a_listing_taken_in_the_same_clock_tick_as_a_change_is_not_kept(tmp_path):
    """An entry added right after a listing can leave the directory's mtime as it
    was (a coarse file system clock): such a listing is listed again next time."""
    (tmp_path / "a").touch()
    now = time.time_ns()
    os.utime(tmp_path, ns=(now, now))
    lister = TreeLister()
    assert paths(lister.list(tmp_path.as_posix())) == {"a"}
    (tmp_path / "b").touch()
    os.utime(tmp_path, ns=(now, now))     # the same tick: the mtime did not move
    assert paths(lister.list(tmp_path.as_posix())) == {"a", "b"}


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


def test_the_indexes_find_paths_by_last_segment_and_directory_ignoring_case(tmp_path):
    for name in ("Secrets/a.PEM", "secrets-old/b", "src/secrets/c", "é/.env"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    tree = TreeLister().list(tmp_path.as_posix())
    assert tree.by_last_segment()["a.pem"] == ["Secrets/a.PEM"]
    assert sorted(tree.folded_under("secrets")) == ["Secrets", "Secrets/a.PEM"]
    assert set(tree.not_ascii()) == {"é", "é/.env"}
