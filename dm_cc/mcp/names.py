"""The names MCP tools get: ``mcp__<server>__<tool>``, each part in [A-Za-z0-9_-].

A server's name is checked where it is configured (``dm_cc.config.mcp_servers``);
a tool's name is the server's choice, so what is outside the alphabet becomes
``_``. Two tools of a server that end up with one name are an error naming both:
a rule written for one must never silently judge the other. A name longer than
MAX_NAME (what model APIs accept for a function name) is left out, and said so:
offered, it would make every model call of the session fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dm_cc.permissions import MCP_PREFIX

_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64   # OpenAI's and Anthropic's limit for a tool (function) name


class NameCollision(ValueError):
    """Two tools of one server share a dm_cc name."""


def tool_name(server: str, tool: str) -> str:
    """The dm_cc name (and permission) of ``tool`` of ``server``."""
    return f"{MCP_PREFIX}{server}__{_OUTSIDE.sub('_', tool) or '_'}"


def tool_names(server: str, tools: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """(dm_cc name → the server's name of each tool, the tools left out because
    their name would be too long); NameCollision naming both of two that clash."""
    names: dict[str, str] = {}
    too_long: list[str] = []
    for tool in tools:
        name = tool_name(server, tool)
        if len(name) > MAX_NAME:
            too_long.append(tool)
            continue
        if name in names:
            raise NameCollision(f"server {server}: tools {names[name]!r} and {tool!r} both "
                                f"become {name}")
        names[name] = tool
    return names, too_long
