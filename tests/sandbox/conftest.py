"""Fixtures the sandbox's real-bubblewrap tests share: who runs the confined command
(the tests' own user, and the unprivileged ``sbtest``: tests/support/as_user.py)
and a directory both may enter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.as_user import USERS, remove, shared_dir


@pytest.fixture(params=USERS, ids=("owner", "sbtest"))
def user(request: pytest.FixtureRequest) -> str | None:
    return request.param


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory another user may enter (pytest's tmp_path is its owner's only)."""
    base = shared_dir()
    yield base
    remove(base)
