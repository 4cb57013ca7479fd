"""The skip marker for tests that run commands in real bubblewrap."""

from __future__ import annotations

import pytest

from dm_cc.sandbox.host import availability

needs_bwrap = pytest.mark.skipif(not availability().usable,
                                 reason=f"bubblewrap cannot confine here: {availability().reason}")
