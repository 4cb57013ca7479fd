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
a deny.

Shell commands (policy-engine.ts checkShellCommand, applyShellHeuristics; shell-utils.ts
hasRedirection, parseCommandDetails), for the lines the property generates -- simple
commands of plain words joined by ``&&`` ``||`` ``;`` ``|``, a ``$( )`` holding one
simple command, redirections ``> f`` ``>> f`` ``< f`` ``2>&1`` ``2>/dev/null`` ``<<< w``: the
matched rule of the WHOLE line decides first; a rule without commandPrefix,
commandRegex or argsPattern (or no rule) then has its decision put through the
heuristics: the line's first command (shell-quote words) that commandSafety.ts
isDangerousCommand flags makes an allow an ask; then any redirection on the line
makes an allow an ask unless the matched rule says ``allowRedirection``; then every
simple command other than the whole line is checked alone (rules again, no
heuristics): a deny of one denies the line, an ask makes it ask, an allowed one with
a redirection asks (the top rule's allowRedirection). The known-safe upgrade (an
ask of a read-only command becomes an allow) is left out: it only makes Gemini
looser, and the reference stricter is the harder test. Not modelled: MCP, safety
checkers, untrusted folders (git asks there), YOLO and auto-edit modes.
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
    allow_redirection: bool = False


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
                                  table.get("interactive"), tuple(modes) if modes else None,
                                  bool(table.get("allowRedirection",
                                                 table.get("allow_redirection")))))
    return sorted(rules, key=lambda r: -r.priority)    # stable: ties keep file order


def _stable_json(args: dict[str, str]) -> str:
    return "{" + ",".join(f"\0{json.dumps(k)}:{json.dumps(args[k])}\0"
                          for k in sorted(args)) + "}"


def _first_match(rules: list[Rule], tool: str, args: dict[str, str], *,
                 headless: bool) -> Rule | None:
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
        return rule
    return None


def decide(rules: list[Rule], tool: str, args: dict[str, str], *, headless: bool,
           redirection: bool = True) -> str:
    """Gemini CLI's decision for one call (tool, its arguments). ``redirection=False``:
    without the redirection downgrade (to check what else decides a line)."""
    if tool == SHELL:
        decision = _shell(rules, args["command"], headless=headless, heuristics=True,
                          redirection=redirection)
    else:
        rule = _first_match(rules, tool, args, headless=headless)
        decision = rule.decision if rule else "deny" if headless else "ask"
    return "deny" if headless and decision == "ask" else decision


# ----------------------------------------------------------------------- shell lines

_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_REDIRECT = re.compile(r"\s*(?:2>&1|2>/dev/null|<<<\s*\S+|>>\s*\S+|>\s*\S+|<\s*\S+)")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")


def _simple_commands(line: str) -> list[str]:
    """The text of each command node tree-sitter finds: its own redirections lie
    outside it, those inside a ``$( )`` among its arguments do not."""
    outer = [_unredirected(part) for part in _SEPARATORS.split(line)]
    inner = [_REDIRECT.sub("", c).strip() for c in _SUBSTITUTION.findall(line)]
    return [c for c in outer + inner if c]


def _unredirected(part: str) -> str:
    """``part`` without the redirections outside its ``$( )``."""
    out, last = [], 0
    for found in _SUBSTITUTION.finditer(part):
        out += [_REDIRECT.sub("", part[last:found.start()]), found.group(0)]
        last = found.end()
    return ("".join(out) + _REDIRECT.sub("", part[last:])).strip()


def _has_redirection(line: str) -> bool:
    return _REDIRECT.search(line) is not None


def _dangerous(words: list[str]) -> bool:
    """sandbox/utils/commandSafety.ts isDangerousCommand (the words of shell-quote)."""
    if not words:
        return False
    cmd, rest = words[0], words[1:]
    if cmd == "rm":
        return bool(rest) and rest[0] in ("-f", "-rf", "-fr")
    if cmd == "sudo":
        return _dangerous(rest)
    if cmd == "find":
        return any(w in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                         "-fprint0", "-fprintf") for w in rest)
    if cmd.rsplit("/", 1)[-1] == "rg":
        return any(w in ("--search-zip", "-z") or w.split("=")[0] in ("--pre", "--hostname-bin")
                   for w in rest)
    if cmd == "git":
        return _git_dangerous(rest)
    if cmd == "base64":
        return any(w in ("-o", "--output") or w.startswith("--output=")
                   or (w.startswith("-o") and w != "-o") for w in rest)
    return False


def _git_dangerous(args: list[str]) -> bool:
    if any(a in ("-c", "--config-env") or (a.startswith("-c") and len(a) > 2)
           or a.startswith("--config-env=") for a in args):
        return True
    sub = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if sub is None or args[sub] not in ("status", "log", "diff", "show", "branch"):
        return False
    rest = args[sub + 1:]
    unsafe = any(a in ("--output", "--ext-diff", "--textconv", "--exec", "--paginate")
                 or a.startswith(("--output=", "--exec=")) for a in rest)
    if args[sub] != "branch":
        return unsafe
    listing = ("--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v",
               "-vv", "--verbose")
    read_only = not rest or (all(a in listing or a.startswith("--format=") for a in rest))
    return unsafe or not read_only


def _shell(rules: list[Rule], line: str, *, headless: bool, heuristics: bool,
           redirection: bool) -> str:
    """PolicyEngine.check of run_shell_command for ``line`` (before headless turns an
    ask into a deny)."""
    rule = _first_match(rules, SHELL, {"command": line}, headless=headless)
    decision = rule.decision if rule else "deny" if headless else "ask"
    redirect_ok = rule.allow_redirection if rule else False
    if heuristics and (rule is None or rule.args is None) and decision != "deny" \
            and _dangerous(line.split()):
        decision = "ask"
    if decision == "deny":
        return "deny"
    if redirection and _has_redirection(line) and not redirect_ok and decision == "allow":
        decision = "ask"
    for command in _simple_commands(line):
        if command == line.strip():
            continue
        alone = _shell(rules, command, headless=headless, heuristics=False,
                       redirection=redirection)
        if alone == "deny":
            return "deny"
        if alone == "ask":
            decision = "ask"
        elif redirection and _has_redirection(command) and not redirect_ok:
            decision = "ask"   # an allowed part with a redirection: the top rule's word
    return decision
