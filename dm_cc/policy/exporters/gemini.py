"""A dm_cc policy → Gemini CLI policy TOML (``[[rule]]`` tables).

Gemini CLI takes the highest-priority matching rule; dm_cc the last match. Each
rule gets the priority of its place (the first 1, the next 2, …), so the order is
kept exactly, with no ties. A first rule ``toolName = "*"``, ``ask_user``,
priority 0 stands for what dm_cc decides when no rule matches (Gemini's own
defaults allow its read-only tools everywhere). Gemini's rules name a tool and,
for shell commands, a ``commandPrefix``; they have no path or URL conditions that
dm_cc's patterns map to, so a path- or URL-scoped allow is left out and a deny or
ask of one is written for the whole tool (docs/exporters.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from dm_cc.errors import UsageError
from dm_cc.permissions import Rule
from dm_cc.policy.exporters.model import (
    Exported,
    SaysNothing,
    Unexpressible,
    catch_all,
    denies_again,
    leading_words,
    literal_words,
    prefix_words,
    said,
)

DECISIONS = {"allow": "allow", "ask": "ask_user", "deny": "deny"}
# dm_cc permission → Gemini CLI tools (geminicli.com/docs/tools)
TOOLS: dict[str, tuple[str, ...]] = {
    "*": ("*",),
    "bash": ("run_shell_command",),
    "read": ("read_file", "read_many_files"),
    "edit": ("write_file", "replace"),
    "glob": ("glob",),
    "grep": ("search_file_content", "grep_search"),
    "list": ("list_directory",),
    "webfetch": ("web_fetch",),
    "todo": ("write_todos",),
}
NOTHING: dict[str, str] = {
    "task": "Gemini CLI's subagents are not named by policy rules dm_cc maps to",
    "external_directory": "Gemini CLI keeps its file tools in the workspace by itself",
    "doom_loop": "Gemini CLI has its own loop detection",
    "plan_exit": "Gemini CLI's modes are not policy rules",
    "plan_enter": "Gemini CLI's modes are not policy rules",
    "sandbox_escape": "Gemini CLI's sandbox is configured apart from its policy",
    "network": "Gemini CLI's sandbox is configured apart from its policy",
    "delete": "Gemini CLI has no transactions",
}
#: Gemini CLI reads a priority within a tier as a fraction of it (0-999)
MAX_PRIORITY = 999


class GeminiRule(NamedTuple):
    tool: str | None               # toolName (None: mcpName alone)
    mcp: str | None = None         # mcpName
    prefix: str | None = None      # commandPrefix

    def __str__(self) -> str:
        parts = [f"toolName={self.tool}"] if self.tool else []
        parts += [f"mcpName={self.mcp}"] if self.mcp else []
        parts += [f"commandPrefix={self.prefix!r}"] if self.prefix is not None else []
        return " ".join(parts)


def gemini_rules(rule: Rule) -> list[GeminiRule]:
    permission, pattern, action = rule.permission, rule.pattern, rule.action
    if permission in NOTHING:
        raise SaysNothing(NOTHING[permission])
    if permission.startswith("mcp__"):
        server, _, tool = permission[len("mcp__"):].partition("__")
        if pattern != "*":
            raise Unexpressible("a condition on an MCP call's input")
        if not server or not tool or any(c in server + tool.rstrip("*") for c in "*?"):
            raise Unexpressible("Gemini CLI names an MCP tool, or every tool of one server")
        return [GeminiRule(None if tool == "*" else tool, server)]
    if permission not in TOOLS:
        raise Unexpressible(f"Gemini CLI has no tool like dm_cc's {permission!r}")
    tools = TOOLS[permission]
    if permission == "*" and action == "allow" and pattern == "*":
        # each tool by name: toolName "*" would also allow what dm_cc asks apart
        # (leaving the project), which these rules cannot say
        return [GeminiRule(tool) for p, named in TOOLS.items() if p != "*" for tool in named]
    if pattern == "*":
        return [GeminiRule(tool) for tool in tools]
    if permission != "bash":
        raise Unexpressible("Gemini CLI's rules have no path or URL condition")
    if action == "allow":
        words = prefix_words(pattern)
        if words is None:
            raise Unexpressible("a commandPrefix also matches longer commands and has no "
                                "wildcards: this allow is narrower")
        return [GeminiRule(tools[0], prefix=" ".join(words))]
    words = literal_words(pattern) or prefix_words(pattern) or leading_words(pattern)
    return [GeminiRule(tools[0], prefix=" ".join(words) if words else None)]


def _wider(rule: Rule) -> list[GeminiRule]:
    """A deny or ask as its whole tools (an MCP rule: its server's every tool)."""
    if rule.permission.startswith("mcp__"):
        server = rule.permission[len("mcp__"):].partition("__")[0]
        return [GeminiRule(None, server)] if server and "*" not in server else []
    return [GeminiRule(tool) for tool in TOOLS.get(rule.permission, ())]


def _table(found: GeminiRule, action: str, priority: int, comment: str) -> list[str]:
    lines = [f"# {comment}", "[[rule]]"]
    if found.tool is not None:
        lines.append(f"toolName = {json.dumps(found.tool)}")
    if found.mcp is not None:
        lines.append(f"mcpName = {json.dumps(found.mcp)}")
    if found.prefix is not None:
        lines.append(f"commandPrefix = {json.dumps(found.prefix)}")
    lines += [f"decision = {json.dumps(DECISIONS[action])}", f"priority = {priority}", ""]
    return lines


def export_gemini(rules: Sequence[Rule]) -> Exported:
    out = Exported("gemini")
    lines = ["# Written by `dm_cc policy export gemini`: the highest priority wins, and each",
             "# rule's priority is its place in the dm_cc policy (the last match wins there).",
             ""]
    rules = list(rules)
    if not rules or not catch_all(rules[0]):
        lines += _table(GeminiRule("*"), "ask", 0, "no rule matches: dm_cc asks")
    priority = 0
    written: dict[Rule, list[GeminiRule]] = {}
    for index, rule in enumerate(rules):
        written[rule] = said(out, rule, gemini_rules, _wider)
        for one in [rule, *denies_again(rules, index)]:
            if not written.get(one):
                continue
            priority += 1
            if priority > MAX_PRIORITY:
                raise UsageError(f"more than {MAX_PRIORITY} rules to write: Gemini CLI's "
                                 "priorities within a tier do not reach")
            comment = f"{one.action} {one.permission} {one.pattern!r}" + \
                (f" ({one.source})" if one.source not in ("inline", "") else "") + \
                (" (again: the ask above must not override it)" if one is not rule else "")
            for found in dict.fromkeys(written[one]):
                lines += _table(found, one.action, priority, comment.replace("\n", " "))
    out.text = "\n".join(lines)
    return out
