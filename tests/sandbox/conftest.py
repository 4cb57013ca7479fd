"""Shared for sandbox tests: ``needs_bwrap`` skips a test, with the reason, where
bubblewrap cannot confine a command."""

from __future__ import annotations

import pytest

from dm_cc.sandbox.host import availability


@pytest.fixture
def needs_bwrap() -> str:
    """The bwrap program; the test is skipped when bubblewrap does not work here."""
    found = availability()
    if not found.usable or found.bwrap is None:
        pytest.skip(f"bubblewrap cannot confine commands here: {found.reason}")
    return found.bwrap
