"""Shared by the sandbox tests: ``needs_bwrap`` skips a test (with the reason)
where bubblewrap cannot confine a command on this machine."""

from __future__ import annotations

import pytest

from dm_cc.sandbox.host import availability

needs_bwrap = pytest.mark.skipif(not availability().usable, reason=availability().reason)
