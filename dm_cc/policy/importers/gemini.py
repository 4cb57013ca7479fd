"""Gemini CLI policy TOML (``[[rule]]`` tables) → a dm_cc policy.

Gemini decides by the **highest priority** among the matching rules. The rules are
written lowest priority first, so the last match is the highest priority; on a tie
(which Gemini does not order by decision) the stricter rule is written later and
wins: allow, then ask, then deny. ``commandPrefix`` is read as a prefix of the
command: an allow as the whole words (``git`` → ``git *``: not ``gitk``), a deny or
ask as the plain text (``rm -rf`` → ``rm -rf*``: also ``rm -rfv``), each the
reading that errs toward asking. Regular expressions (``argsPattern``,
``commandRegex``) cannot be expressed in dm_cc's wildcards and are reported.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import read_source
from dm_cc.policy.importers.model import Entry, Imported, InlineTestEntry, Unexpressible

DECISIONS = {"allow": "allow", "ask_user": "ask", "deny": "deny"}
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}

# Gemini CLI built-in tool → dm_cc permission (docs/reference/tools)
TOOLS: dict[str, str] = {
    "*": "*",
    "run_shell_command": "bash",
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "edit",
    "replace": "edit",
    "glob": "glob",
    "search_file_content": "grep",
    "grep_search": "grep",
    "list_directory": "list",
    "web_fetch": "webfetch",
    "write_todos": "todo",
}
KNOWN_FIELDS = {"toolName", "mcpName", "subagent", "toolAnnotations", "argsPattern",
                "commandPrefix", "commandRegex", "decision", "priority", "denyMessage",
                "modes", "interactive", "allowRedirection"}


class GeminiRule:
    def __init__(self, index: int, permissions: list[str], prefixes: list[str] | None,
                 action: str, priority: int, label: str) -> None:
        self.index = index
        self.permissions = permissions
        self.prefixes = prefixes        # None: any input
        self.action = action
        self.priority = priority
        self.label = label


def _strings(value: Any, what: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise Unexpressible(f"{what} must be a string or a list of strings")
    return values


def _permission(tool: str, server: str | None) -> str:
    if server is not None:
        return f"mcp__{server}__{'*' if tool == '*' else tool}"
    if tool in TOOLS:
        return TOOLS[tool]
    if tool.startswith("mcp_"):
        rest = tool[4:]
        if rest == "*":
            return "mcp__*"
        server_name, _, name = rest.partition("_")
        if server_name and name and "*" not in server_name:
            return f"mcp__{server_name}__{name}"
    raise Unexpressible(f"dm_cc has no tool like Gemini CLI's {tool!r}")


def _rule(index: int, table: Any) -> GeminiRule:
    if not isinstance(table, dict):
        raise Unexpressible("a [[rule]] is a table")
    unknown = set(table) - KNOWN_FIELDS
    if unknown:
        raise Unexpressible(f"unknown field(s) {', '.join(sorted(unknown))}")
    decision = table.get("decision")
    if decision not in DECISIONS:
        raise Unexpressible(f"decision {decision!r} is not allow, deny or ask_user")
    priority = table.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise Unexpressible("priority must be a whole number")
    for field in ("argsPattern", "commandRegex", "toolAnnotations", "subagent"):
        if field in table:
            raise Unexpressible(f"{field} has no dm_cc equivalent")
    modes = table.get("modes")
    if modes and "default" not in modes:
        raise Unexpressible(f"modes {modes} (not the default mode)")
    prefixes = None
    if "commandPrefix" in table:
        prefixes = _strings(table["commandPrefix"], "commandPrefix")
        tools = ["run_shell_command"]
        if table.get("toolName", "run_shell_command") != "run_shell_command":
            raise Unexpressible("commandPrefix with a toolName other than run_shell_command")
    else:
        tools = _strings(table.get("toolName", "*" if "mcpName" in table else None),
                         "toolName")
    server = table.get("mcpName")
    if server is not None and not isinstance(server, str):
        raise Unexpressible("mcpName must be a string")
    label = ", ".join(f"{k} = {v!r}" for k, v in table.items() if k != "denyMessage")
    permissions = list(dict.fromkeys(_permission(t, server) for t in tools))
    return GeminiRule(index, permissions, prefixes,
                      DECISIONS[decision], priority, label)


def gemini_decision(rules: list[GeminiRule], command: str) -> str | None:
    """Gemini's decision for a shell command: the highest-priority matching rule
    (the stricter one on a tie); None when no rule matches."""
    hits = [r for r in rules if "bash" in r.permissions or "*" in r.permissions
            if r.prefixes is None or any(command.startswith(p) for p in r.prefixes)]
    if not hits:
        return None
    return max(hits, key=lambda r: (r.priority, STRICTNESS[r.action])).action


def parse_rules(text: str, shown: str) -> tuple[list[GeminiRule], list[str]]:
    """The importable rules of a policy file, and a line for each one that is not."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise PolicyError(shown, int(found.group(1)) if found else None,
                          f"not valid TOML: {exc}") from None
    tables = data.get("rule", [])
    if not isinstance(tables, list):
        raise PolicyError(shown, None, "rule must be an array of tables ([[rule]])")
    rules: list[GeminiRule] = []
    others = [f"top-level {key!r}: only [[rule]] tables are imported"
              for key in data if key != "rule"]
    for index, table in enumerate(tables):
        try:
            rules.append(_rule(index, table))
        except Unexpressible as exc:
            what = ", ".join(f"{k} = {v!r}" for k, v in table.items()) \
                if isinstance(table, dict) else repr(table)
            others.append(f"rule {index + 1} ({what}): {exc}")
    return rules, others


def _patterns(rule: GeminiRule) -> list[str]:
    if rule.prefixes is None:
        return ["*"]
    out = []
    for prefix in rule.prefixes:
        literal = re.sub(r"([\\?*])", r"\\\1", prefix.rstrip())
        out.append(literal + (" *" if rule.action == "allow" else "*"))
    return out


def import_gemini(path: Path) -> Imported:
    shown, text = read_source(path)
    out = Imported(shown, "gemini", header=[
        f"Imported by `dm_cc policy import gemini` from {shown}.",
        "Gemini CLI takes the highest-priority matching rule; dm_cc's last match wins, so",
        "rules are written lowest priority first (on a tie, the stricter one last).",
        "commandPrefix: an allow covers whole words ('git *'), a deny or ask the plain",
        "prefix ('rm -rf*'), each the reading that errs toward asking.",
    ])
    rules, others = parse_rules(text, shown)
    for other in others:
        out.drop(out.rules, other)
    for rule in sorted(rules, key=lambda r: (r.priority, STRICTNESS[r.action], r.index)):
        first = True
        for permission in rule.permissions:
            for pattern in (_patterns(rule) if permission == "bash" else ["*"]):
                out.rules.append(Entry(permission, pattern, rule.action,
                                       comment=f"rule {rule.index + 1}: {rule.label}"
                                       if first else None))
                first = False
    seen: set[str] = set()
    for rule in rules:
        for prefix in rule.prefixes or ():
            sample = prefix.strip()
            decision = gemini_decision(rules, sample)
            if sample and sample not in seen and decision is not None:
                seen.add(sample)
                out.tests.append(InlineTestEntry("bash", sample, decision,
                                                 name=f"Gemini CLI rule {rule.index + 1}"))
    return out
