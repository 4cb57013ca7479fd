"""Gemini CLI policy TOML (``[[rule]]`` tables) → a dm_cc policy.

Gemini decides by the **highest priority** among the matching rules. The rules are
written lowest priority first, so the last match is the highest priority; on a tie
(which Gemini does not order by decision) the stricter rule is written later and
wins: allow, then ask, then deny. ``commandPrefix`` is read as a prefix of the
command: an allow as the whole words (``git`` → ``git *``: not ``gitk``), a deny or
ask as the plain text (``rm -rf`` → ``rm -rf*``: also ``rm -rfv``), each the
reading that errs toward asking.

What dm_cc cannot say is never dropped from a deny or ask (model.py): a
``commandRegex`` becomes the wildcards that cover it (regex.py), a condition dm_cc
has no equivalent of (``argsPattern``, ``toolAnnotations``, ``subagent``, a field
it does not know) is left off so the rule covers the whole tool, a priority that
is not a number ranks highest; an allow with any of these is left out. An MCP tool
name (``mcp_<server>_<tool>``) is every split of it at an ``_``, as Gemini's flat
name matches them all.
"""

from __future__ import annotations

import math
import re
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import read_source
from dm_cc.policy.importers.model import (
    Entry,
    Imported,
    InlineTestEntry,
    SaysNothing,
    Unexpressible,
    denial_pattern,
    literal_command,
    mcp_permission,
    mcp_wildcard,
)
from dm_cc.policy.importers.regex import covering_patterns

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
# Gemini CLI's documented tools dm_cc has no tool like: a rule about one decides
# nothing in dm_cc, whatever its decision (docs/reference/tools)
ABSENT = frozenset({"google_web_search", "web_search", "save_memory", "get_internal_docs",
                    "activate_skill", "delegate_to_agent", "codebase_investigator"})
KNOWN_FIELDS = {"toolName", "mcpName", "subagent", "toolAnnotations", "argsPattern",
                "commandPrefix", "commandRegex", "decision", "priority", "denyMessage",
                "modes", "interactive", "allowRedirection"}
# conditions dm_cc has no equivalent of: a deny or ask is imported without them
# (``interactive``: a rule for interactive or headless runs only; dm_cc's rules
# are the same in both)
UNSAID_CONDITIONS = ("argsPattern", "toolAnnotations", "subagent", "interactive")


class GeminiRule:
    def __init__(self, index: int, permissions: list[str], prefixes: list[str] | None,
                 action: str, priority: float, label: str, *, regex: str | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.index = index
        self.permissions = permissions
        self.prefixes = prefixes        # None: any input (or the regex's)
        self.action = action
        self.priority = priority
        self.label = label
        self.regex = regex              # commandRegex (a deny or ask: read wider)
        self.notes = notes              # what was read wider than written


class Unsaid(NamedTuple):
    """A [[rule]] that cannot be imported at all, with its action (None: unknown)."""

    action: str | None
    message: str
    says_nothing: bool = False


def _strings(value: Any, what: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise Unexpressible(f"{what} must be a string or a list of strings")
    return values


def _permissions(tool: str, server: str | None, action: str) -> list[str]:
    """The dm_cc permissions a Gemini tool name (with ``mcpName`` when given) covers."""
    if server is not None:
        return [mcp_permission(server, tool)]
    if tool in TOOLS:
        return [TOOLS[tool]]
    if tool.startswith("mcp_"):
        return _mcp_names(tool[4:], action)
    if "*" in tool and action != "allow":   # a wildcard over Gemini's names
        found = [TOOLS[name] for name in TOOLS if fnmatchcase(name, tool)]
        return list(dict.fromkeys(found)) or ["*"]
    if tool in ABSENT:
        raise SaysNothing(f"dm_cc has no tool like Gemini CLI's {tool!r}")
    raise Unexpressible(f"dm_cc has no tool like Gemini CLI's {tool!r}")


def _mcp_names(rest: str, action: str) -> list[str]:
    """``mcp_<server>_<tool>`` (``rest`` after ``mcp_``) as dm_cc names: Gemini's
    name is flat, so every ``_`` may be the one between server and tool."""
    if rest == "*":
        return ["mcp__*"]
    if "*" in rest:
        server, _, tool = rest.partition("_")
        if action != "allow":
            return [mcp_wildcard(rest)]
        if tool != "*" or not server or "*" in server:
            raise Unexpressible(f"a '*' in mcp_{rest} other than mcp_<server>_*")
        return [mcp_permission(server, "*")]   # the server up to the first '_': narrower
    splits = [(rest[:i], rest[i + 1:]) for i, c in enumerate(rest) if c == "_"]
    names = [mcp_permission(server, tool) for server, tool in splits if server and tool]
    if not names:
        raise Unexpressible(f"not mcp_<server>_<tool>: mcp_{rest}")
    return list(dict.fromkeys(names))


def _rule(index: int, table: Any) -> GeminiRule:
    """One [[rule]] as data; a deny or ask read wider where dm_cc cannot say it
    (``notes`` say how); Unexpressible (SaysNothing) when it cannot be imported."""
    if not isinstance(table, dict):
        raise Unexpressible("a [[rule]] is a table")
    decision = table.get("decision")
    if decision not in DECISIONS:
        raise Unexpressible(f"decision {decision!r} is not allow, deny or ask_user")
    action = DECISIONS[decision]
    notes: list[str] = []

    def unsaid(what: str) -> None:
        """A condition dm_cc cannot say: an allow is not imported; a deny or ask
        is, without it (wider)."""
        if action == "allow":
            raise Unexpressible(what)
        notes.append(what)

    modes = table.get("modes")
    if modes and "default" not in modes:
        raise SaysNothing(f"modes {modes} (not the default mode)")
    if unknown := set(table) - KNOWN_FIELDS:
        unsaid(f"unknown field(s) {', '.join(sorted(unknown))}")
    for field in UNSAID_CONDITIONS:
        if field in table:
            unsaid(f"{field} has no dm_cc equivalent")
    priority: float = table.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        unsaid("priority must be a whole number (ranked highest)")
        priority = math.inf
    regex = table.get("commandRegex")
    if regex is not None:
        if not isinstance(regex, str):
            unsaid("commandRegex must be a string")
            regex = ".*"
        unsaid("commandRegex is a regular expression dm_cc's wildcards cannot say exactly")
    tools, prefixes = _tools(table, unsaid)
    server = table.get("mcpName")
    if server is not None and not isinstance(server, str):
        raise Unexpressible("mcpName must be a string")
    label = ", ".join(f"{k} = {v!r}" for k, v in table.items() if k != "denyMessage")
    permissions = list(dict.fromkeys(p for t in tools for p in _permissions(t, server, action)))
    return GeminiRule(index, permissions, prefixes, action, priority, label,
                      regex=regex if "bash" in permissions else None, notes=tuple(notes))


def _tools(table: dict[str, Any], unsaid: Any) -> tuple[list[str], list[str] | None]:
    """The tool names a rule is about, and its command prefixes (None: any)."""
    shell_only = "commandPrefix" in table or "commandRegex" in table
    prefixes = _strings(table["commandPrefix"], "commandPrefix") \
        if "commandPrefix" in table else None
    named = table.get("toolName")
    if shell_only:
        if named not in (None, "run_shell_command"):
            unsaid("commandPrefix or commandRegex with a toolName other than run_shell_command")
            return _strings(named, "toolName"), None
        return ["run_shell_command"], prefixes
    if named is None:   # no toolName: every tool (mcpName alone: every tool of its server)
        if "mcpName" not in table:
            unsaid("no toolName: read as every tool")
        return ["*"], None
    return _strings(named, "toolName"), None


def gemini_decision(rules: list[GeminiRule], command: str) -> str | None:
    """Gemini's decision for a shell command: the highest-priority matching rule
    (the stricter one on a tie); None when no rule matches."""
    hits = [r for r in rules if "bash" in r.permissions or "*" in r.permissions
            if (r.prefixes is None or any(command.startswith(p) for p in r.prefixes))
            and (r.regex is None or re.search(r.regex, command))]
    if not hits:
        return None
    return max(hits, key=lambda r: (r.priority, STRICTNESS[r.action])).action


def parse_rules(text: str, shown: str) -> tuple[list[GeminiRule], list[Unsaid]]:
    """The importable rules of a policy file, and each one that is not."""
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
    others = [Unsaid("allow", f"top-level {key!r}: only [[rule]] tables are imported",
                     says_nothing=True) for key in data if key != "rule"]
    for index, table in enumerate(tables):
        try:
            rules.append(_rule(index, table))
        except Unexpressible as exc:
            what = ", ".join(f"{k} = {v!r}" for k, v in table.items()) \
                if isinstance(table, dict) else repr(table)
            action = DECISIONS.get(str(table.get("decision"))) if isinstance(table, dict) \
                else None
            others.append(Unsaid(action, f"rule {index + 1} ({what}): {exc}",
                                 isinstance(exc, SaysNothing)))
    return rules, others


def _patterns(rule: GeminiRule) -> list[str]:
    if rule.regex is not None:
        return covering_patterns(rule.regex)
    if rule.prefixes is None:
        return ["*"]
    out = []
    for prefix in rule.prefixes:
        if rule.action == "allow":
            out.append(literal_command(prefix.rstrip()) + " *")
        else:
            out.append(denial_pattern(literal_command(prefix.rstrip()) + "*"))
    return list(dict.fromkeys(out))


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
        out.unsaid(out.rules, other.action, other.message, says_nothing=other.says_nothing)
    for rule in sorted(rules, key=lambda r: (r.priority, STRICTNESS[r.action], r.index)):
        _add(out, rule)
    _tests(out, rules)
    return out


def _add(out: Imported, rule: GeminiRule) -> None:
    comment = f"rule {rule.index + 1}: {rule.label}"
    entries = [Entry(permission, pattern, rule.action)
               for permission in rule.permissions
               for pattern in (_patterns(rule) if permission == "bash" else ["*"])]
    if rule.notes:
        wider = ", ".join(f"{e.permission} {e.pattern!r}" for e in entries)
        out.widen(f"rule {rule.index + 1} ({rule.label}): {'; '.join(rule.notes)}", wider)
        comment += f"  (written wider: {'; '.join(rule.notes)})"
    for index, entry in enumerate(entries):
        out.rules.append(Entry(entry.permission, entry.pattern, entry.action,
                               comment=comment if index == 0 else None))


def _tests(out: Imported, rules: list[GeminiRule]) -> None:
    """For each commandPrefix, Gemini's decision for the prefix itself -- unless a
    rule read wider than written could decide it (Gemini's answer is then unknown)."""
    if any(rule.notes and rule.regex is None and ("bash" in rule.permissions
                                                  or "*" in rule.permissions)
           for rule in rules):
        return
    seen: set[str] = set()
    for rule in rules:
        for prefix in rule.prefixes or ():
            sample = prefix.strip()
            decision = gemini_decision(rules, sample)
            if sample and sample not in seen and decision is not None:
                seen.add(sample)
                out.tests.append(InlineTestEntry("bash", sample, decision,
                                                 name=f"Gemini CLI rule {rule.index + 1}"))
