"""MCP servers as tools: the only part of dm_cc that imports the ``mcp`` SDK.

    names.py      mcp__<server>__<tool>: sanitised names, collisions refused (pure)
    stdio.py      a stdio server's process: its own process group, killed whole
    connection.py one server's session: start, list tools, call, stop, restart
    listing.py    what each server listed last time, kept: its tools without starting it
    manager.py    every server of a session, in one thread with its own event loop
    tools.py      each server tool as a dm_cc Tool (gated like any other)

Nothing here is imported until a command needs MCP servers (``dm_cc run``, the
REPL, ``dm_cc mcp …``): the front door is lazy, so ``dm_cc --help`` and
``dm_cc policy …`` never load the SDK. See docs/mcp.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.mcp.listing import Listings
    from dm_cc.mcp.manager import McpServers, ServerStatus

__all__ = ["Listings", "McpServers", "ServerStatus"]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.mcp.listing": ("Listings",),
    "dm_cc.mcp.manager": ("McpServers", "ServerStatus"),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
