"""Shared by the sandbox tests: ``needs_bwrap`` skips a test (with the reason)
where bubblewrap cannot confine a command on this machine, as a fixture (which
gives the bwrap program) or as a mark (``bwrap_required``)."""

from __future__ import annotations

import pytest

from dm_cc.sandbox.host import availability

bwrap_required = pytest.mark.skipif(not availability().usable, reason=availability().reason)


@pytest.fixture
def needs_bwrap() -> str:
    """The bwrap program; the test is skipped when bubblewrap does not work here."""
    found = availability()
    if not found.usable or found.bwrap is None:
        pytest.skip(f"bubblewrap cannot confine commands here: {found.reason}")
    return found.bwrap
