"""The names MCP tools get: ``mcp__<server>__<tool>``, each part in [A-Za-z0-9_-].

A server's name is checked where it is configured (``dm_cc.config.mcp_servers``);
a tool's name is the server's choice, so what is outside the alphabet becomes
``_``. Two tools of a server that end up with one name are an error naming both:
a rule written for one must never silently judge the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dm_cc.permissions.rules import MCP_PREFIX

_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")


class NameCollision(ValueError):
    """Two tools of one server share a dm_cc name."""


def tool_name(server: str, tool: str) -> str:
    """The dm_cc name (and permission) of ``tool`` of ``server``."""
    return f"{MCP_PREFIX}{server}__{_OUTSIDE.sub('_', tool) or '_'}"


def tool_names(server: str, tools: Iterable[str]) -> dict[str, str]:
    """dm_cc name → the server's name of each tool; NameCollision naming both."""
    names: dict[str, str] = {}
    for tool in tools:
        name = tool_name(server, tool)
        if name in names:
            raise NameCollision(f"server {server}: tools {names[name]!r} and {tool!r} both "
                                f"become {name}")
        names[name] = tool
    return names
