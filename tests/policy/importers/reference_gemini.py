"""A reference of Gemini CLI's policy engine (google-gemini/gemini-cli,
packages/core/src/policy: toml-loader.ts, utils.ts buildArgsPatterns,
policy-engine.ts ruleMatches/check), for the property that an import is never
looser than its source. Independent of dm_cc's importer: it reads the TOML itself.

What it models: rules sorted by priority, highest first, ties in file order (a
stable sort), the first match decides; ``toolName`` exact or ``*``; a non-empty
``commandPrefix`` (each of a list a rule of its own, ``[]`` none) as the regex
``"command":"<prefix>(?:[\\s"]|\\\\")`` searched in the call's stable JSON; an empty
one is no condition; ``argsPattern`` searched in the same JSON; ``interactive`` and
``modes`` (the default mode); no match: ask (headless: deny), and headless an ask is
a deny. Not modelled (the generated calls avoid them): compound commands, shell
heuristics, redirection, MCP, safety checkers.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any

DECISION = {"allow": "allow", "ask_user": "ask", "deny": "deny"}
SHELL = "run_shell_command"


@dataclass(frozen=True)
class Rule:
    tool: str
    args: str | None          # a regex over the stable JSON of the arguments
    decision: str
    priority: int
    interactive: bool | None
    modes: tuple[str, ...] | None


def _escape(text: str) -> str:
    """escapeRegex of utils.ts: what it escapes, it escapes with a backslash."""
    return re.sub(r'([-\[\]{}()*+?.,\\^$|#\s"])', r"\\\1", text)


def _args_patterns(table: dict[str, Any]) -> list[str | None]:
    prefix = table.get("commandPrefix")
    if prefix:                              # JS truthiness: "" is no prefix, [] is one
        prefixes = prefix if isinstance(prefix, list) else [prefix]
        return [_escape('"command":' + json.dumps(p)[:-1]) + r'(?:[\s"]|\\")'
                for p in prefixes]
    if table.get("commandRegex"):
        return ['"command":"' + table["commandRegex"]]
    return [table.get("argsPattern")]


def load(text: str) -> list[Rule]:
    """The rules of a (valid) policy file, in the engine's order."""
    rules: list[Rule] = []
    for table in tomllib.loads(text).get("rule", []):
        tools = table["toolName"] if isinstance(table["toolName"], list) else [table["toolName"]]
        for args in _args_patterns(table):
            for tool in tools:
                modes = table.get("modes")
                rules.append(Rule(tool, args, DECISION[table["decision"]], table["priority"],
                                  table.get("interactive"), tuple(modes) if modes else None))
    return sorted(rules, key=lambda r: -r.priority)    # stable: ties keep file order


def _stable_json(args: dict[str, str]) -> str:
    return "{" + ",".join(f"\0{json.dumps(k)}:{json.dumps(args[k])}\0"
                          for k in sorted(args)) + "}"


def decide(rules: list[Rule], tool: str, args: dict[str, str], *, headless: bool) -> str:
    """Gemini CLI's decision for one call (tool, its arguments)."""
    text = _stable_json(args)
    for rule in rules:
        if rule.modes is not None and "default" not in rule.modes:
            continue
        if rule.tool not in ("*", tool):
            continue
        if rule.args is not None and not re.search(rule.args, text):
            continue
        if rule.interactive is not None and rule.interactive == headless:
            continue
        return "deny" if headless and rule.decision == "ask" else rule.decision
    return "deny" if headless else "ask"
