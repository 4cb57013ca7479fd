"""A reference of opencode's permission decision (sst/opencode, packages/opencode/
src/permission: the merged ruleset, ``findLast`` -- the last matching rule wins --
over ``Wildcard.match`` of permission and pattern; nothing matched: ask), for the
property that an import is never looser than its source. It reads the config
itself: ``permission`` (an action, or keys to an action or to patterns → action,
in the order written), V2's ordered ``permissions`` (``{action, resource,
effect}``), then an agent's own rules, and a disabled agent (no such agent: it
may do nothing).
"""

from __future__ import annotations

import re
from typing import Any


def wildcard(text: str, pattern: str) -> bool:
    """opencode's Wildcard.match: ``*`` any run of characters (``/`` too), ``?``
    one; a trailing `` *`` is optional (``git *`` matches ``git``)."""
    optional = pattern.endswith(" *")
    body = pattern[:-2] if optional else pattern
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in body)
    return re.fullmatch(regex + ("( .*)?" if optional else ""), text, re.S) is not None


def _block(value: Any) -> list[tuple[str, str, str]]:
    if isinstance(value, str):
        return [("*", "*", value)]
    rules = []
    for key, rule in value.items():
        for pattern, action in (rule.items() if isinstance(rule, dict) else [("*", rule)]):
            rules.append((key, pattern, action))
    return rules


def _ordered(value: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    return [(r["action"], r["resource"], r["effect"]) for r in value]


def ruleset(config: dict[str, Any], agent: str) -> list[tuple[str, str, str]] | None:
    """The merged rules of ``agent``; None when the agent is disabled."""
    rules = _block(config.get("permission", {})) + _ordered(config.get("permissions", []))
    own = {**config.get("agent", {}), **config.get("agents", {})}.get(agent, {})
    if own.get("disable") or own.get("disabled"):
        return None
    return rules + _block(own.get("permission", {})) + _ordered(own.get("permissions", []))


# the shell tool is `bash` to opencode V1 and `shell` to V2 (which reads V1's rules);
# dm_cc's `todo` replaces the list: opencode's todowrite
NAMES = {"bash": ("bash", "shell"), "todo": ("todowrite",)}


def names_of(permission: str) -> tuple[str, ...]:
    """What opencode asks for the call dm_cc asks ``permission`` for: an MCP tool
    by its flat name ``<server>_<tool>``."""
    if permission.startswith("mcp__"):
        server, _, tool = permission[5:].partition("__")
        return (f"{server}_{tool}",)
    return NAMES.get(permission, (permission,))


def decide(config: dict[str, Any], agent: str, permission: str, pattern: str) -> str:
    """opencode's decision for the tool dm_cc calls ``permission``; a disabled agent
    decides nothing: deny (it cannot run), and nothing may start it."""
    rules = ruleset(config, agent)
    if rules is None:
        return "deny"
    if permission == "task" and ruleset(config, pattern) is None:
        return "deny"
    names = names_of(permission)
    for key, rule_pattern, action in reversed(rules):
        if any(wildcard(name, key) for name in names) and wildcard(pattern, rule_pattern):
            return action
    return "ask"
