"""A file replaced whole in one step (``replace_file``): the bytes, the mode, no
temporary file left behind, and nothing written through what is already there."""

from __future__ import annotations

import os
import stat

import pytest

from dm_cc.config import replace_file


def test_a_file_is_replaced_whole_with_its_mode_and_nothing_left_beside_it(tmp_path):
    path = tmp_path / "store.json"
    replace_file(path, b"one")
    assert path.read_bytes() == b"one"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    replace_file(path, b"two", 0o644, sync=False)
    assert path.read_bytes() == b"two"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.json"]


def test_a_link_in_place_of_the_file_is_replaced_not_written_through(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_bytes(b"kept")
    path = tmp_path / "store.json"
    path.symlink_to(target)
    replace_file(path, b"new")
    assert target.read_bytes() == b"kept"
    assert not path.is_symlink() and path.read_bytes() == b"new"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "store.json"
    replace_file(path, b"old")

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        replace_file(path, b"new")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.json"]

