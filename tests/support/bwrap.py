"""The skip marker for tests that run commands in real bubblewrap, and what such a
command's result says of a write outside the project."""

from __future__ import annotations

import pytest

from dm_cc.sandbox.host import availability

needs_bwrap = pytest.mark.skipif(not availability().usable,
                                 reason=f"bubblewrap cannot confine here: {availability().reason}")


def kept_out(transactional: bool, target: object) -> str:
    """What says a confined command's write to ``target``, outside the project, did not
    happen: what the sandbox saw (a transaction's scratch area: docs/sandbox.md), or
    -- where commands do not run as transactions -- the error the command printed."""
    if transactional:
        return (f"it wrote outside the project, where the sandbox keeps no write: {target}; "
                "none of it happened")
    return "Read-only file system"
