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
name matches them all. A shell allow is followed by ``redirect`` rules of its
patterns: ``ask`` (Gemini asks about a redirected command), or ``allow`` with
``allowRedirection`` where that can be said (:func:`_redirection`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import read_source
from dm_cc.policy.importers.model import (
    Entry,
    Imported,
    InlineTestEntry,
    InvalidSource,
    SaysNothing,
    Unexpressible,
    denial_pattern,
    literal_command,
    may_meet,
    mcp_permission,
    mcp_wildcard,
    narrower,
)
from dm_cc.policy.importers.regex import covering_patterns

DECISIONS = {"allow": "allow", "ask_user": "ask", "deny": "deny"}
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
MODES = ("default", "autoEdit", "yolo", "plan")   # Gemini CLI's ApprovalMode

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
# Commands Gemini CLI asks about under a shell rule without commandPrefix,
# commandRegex or argsPattern (a whole-tool allow of run_shell_command or of "*"),
# though the rule allows: PolicyEngine.applyShellHeuristics asks when
# sandboxManager.isDangerousCommand holds for the line's words, and the default
# (no sandbox) manager uses sandbox/utils/commandSafety.ts isDangerousCommand: `rm`
# with -f/-rf/-fr, `sudo` of such a command, `find` with -exec/-execdir/-ok/-okdir/
# -delete/-fls/-fprint*, `rg` with --pre/--hostname-bin/--search-zip/-z, `git` with
# -c/--config-env, git status/log/diff/show/branch with --output/--ext-diff/--textconv/
# --exec/--paginate, `git branch` doing more than list, `base64` with -o/--output.
# Each becomes a dm_cc ask written right after the allow (so a higher-priority rule,
# written later, still decides as Gemini's does), read wider where that is simpler:
# every simple command of a line is judged (Gemini only looks at the line's first),
# `sudo rm -rf x` is judged as `rm -rf x` too (docs/shell.md, wrappers).
HEURISTIC_ASKS = (
    "rm -f*", "rm -rf*", "rm -fr*",
    "find *-exec*", "find *-ok*", "find *-delete*", "find *-fls*", "find *-fprint*",
    "rg *--pre*", "rg *--hostname-bin*", "rg *--search-zip*", "rg *-z*",
    "git -c*", "git * -c*", "git *--config-env*",
    "git *--output*", "git *--ext-diff*", "git *--textconv*", "git *--exec*",
    "git *--paginate*", "git *branch*",
    "base64 *-o*", "base64 *--output*",
)
# ...of which Gemini allows these exactly (a bare `git branch` only lists). Not
# written as allows: Gemini reads the words of the whole line, so `git branch 2>&1`
# and `git branch && make` are a `git branch` with arguments to it (an ask), while
# dm_cc judges each simple command without its redirections -- `git branch` --
# and an allow of it would let those through (stricter: a bare one asks too).
HEURISTIC_ALLOWS = ("git branch",)

# Gemini CLI's documented tools dm_cc has no tool like: a rule about one decides
# nothing in dm_cc, whatever its decision (docs/reference/tools)
ABSENT = frozenset({"google_web_search", "web_search", "save_memory", "get_internal_docs",
                    "activate_skill", "delegate_to_agent", "codebase_investigator"})


def _texts(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value))


def _whole(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and float(value).is_integer()


# Each field of a [[rule]] as Gemini CLI's loader checks it (packages/core/src/policy/
# toml-loader.ts, a zod schema): what it must be, and the check. A file one field
# of which fails is refused by Gemini CLI as a whole (none of its rules is used), so
# the import refuses it too (InvalidSource).
FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "toolName": ("a string or a list of strings", _texts),
    "subagent": ("a string", lambda v: isinstance(v, str)),
    "mcpName": ("a string", lambda v: isinstance(v, str)),
    "argsPattern": ("a string", lambda v: isinstance(v, str)),
    "commandPrefix": ("a string or a list of strings", _texts),
    "commandRegex": ("a string", lambda v: isinstance(v, str)),
    "decision": ("allow, deny or ask_user", lambda v: v in DECISIONS),
    "priority": ("a whole number from 0 to 999", lambda v: _whole(v) and 0 <= v <= 999),
    "modes": (f"a list of {', '.join(MODES)}",
              lambda v: isinstance(v, list) and all(m in MODES for m in v)),
    "interactive": ("true or false", lambda v: isinstance(v, bool)),
    "toolAnnotations": ("a table", lambda v: isinstance(v, dict)),
    "allowRedirection": ("true or false", lambda v: isinstance(v, bool)),
    "allow_redirection": ("true or false", lambda v: isinstance(v, bool)),
    "denyMessage": ("a string", lambda v: isinstance(v, str)),
    "deny_message": ("a string", lambda v: isinstance(v, str)),
}
REQUIRED = ("decision", "priority")
# conditions dm_cc has no equivalent of: a deny or ask is imported without them
# (wider), an allow is left out. ``interactive``: a rule for interactive (true) or
# headless (false) runs only; dm_cc's rules hold alike in the REPL and `dm_cc run`.
UNSAID_CONDITIONS = {
    "argsPattern": "argsPattern (a regular expression over the call's JSON arguments) "
                   "has no dm_cc equivalent",
    "toolAnnotations": "toolAnnotations has no dm_cc equivalent",
    "subagent": "subagent has no dm_cc equivalent",
    "interactive": "interactive = {value}: Gemini CLI applies it only to {runs} runs; "
                   "dm_cc's rules hold in the REPL and in `dm_cc run` alike",
}


class GeminiRule:
    def __init__(self, index: int, permissions: list[str], prefixes: list[str] | None,
                 action: str, priority: float, label: str, *, regex: str | None = None,
                 notes: tuple[str, ...] = (), unused: tuple[tuple[str, str], ...] = (),
                 shares: tuple[str, ...] = (), tools: tuple[str, ...] = (),
                 siblings: tuple[str, ...] = (), redirection: bool = False) -> None:
        self.index = index
        self.permissions = permissions
        self.prefixes = prefixes        # None: any input (or the regex's)
        self.action = action
        self.priority = priority
        self.label = label
        self.regex = regex              # commandRegex (a deny or ask: read wider)
        self.notes = notes              # what was read wider than written
        self.unused = unused            # (key, why) of what the rule does not use
        self.shares = shares            # an allow's tools whose dm_cc permission others share
        self.tools = tools              # the Gemini tool names it is about
        self.siblings = siblings        # the tools sharing its dm_cc permissions it does not name
        self.redirection = redirection  # allowRedirection: a redirected command stays allowed


class Unsaid(NamedTuple):
    """A [[rule]] that cannot be imported at all, with its action (None: unknown)."""

    action: str | None
    message: str
    says_nothing: bool = False


def _names(value: Any) -> list[str]:
    return value if isinstance(value, list) else [value]


def _permissions(tool: str, server: str | None, action: str, notes: list[str]) -> list[str]:
    """The dm_cc permissions a Gemini tool name (with ``mcpName`` when given) covers;
    a reading wider than Gemini's is said in ``notes``."""
    if server is not None:
        if server == "*":          # any MCP server's tool of that name
            if action == "allow":
                raise Unexpressible("mcpName = '*' with a tool name dm_cc cannot say")
            notes.append("mcpName = '*': every MCP tool")
            return ["mcp__*"]
        return [mcp_permission(server, tool)]
    if tool in TOOLS:
        return [TOOLS[tool]]
    if tool.startswith("mcp_"):
        return _mcp_names(tool[4:], action, notes)
    if "*" in tool and action != "allow":   # Gemini: a literal name; read wider
        found = [TOOLS[name] for name in TOOLS if fnmatchcase(name, tool)]
        notes.append(f"toolName {tool!r}: every tool it would match as a wildcard")
        return list(dict.fromkeys(found)) or ["*"]
    if tool in ABSENT:
        raise SaysNothing(f"dm_cc has no tool like Gemini CLI's {tool!r}")
    raise Unexpressible(f"dm_cc has no tool like Gemini CLI's {tool!r}")


def _mcp_names(rest: str, action: str, notes: list[str]) -> list[str]:
    """``mcp_<server>_<tool>`` (``rest`` after ``mcp_``) as dm_cc names: Gemini's
    name is flat, so every ``_`` may be the one between server and tool."""
    if rest == "*":
        return ["mcp__*"]
    if "*" in rest:
        server, _, tool = rest.partition("_")
        if action != "allow":
            notes.append(f"mcp_{rest}: every MCP tool whose flat name it may match")
            return [mcp_wildcard(rest)]
        if tool != "*" or not server or "*" in server:
            raise Unexpressible(f"a '*' in mcp_{rest} other than mcp_<server>_*")
        return [mcp_permission(server, "*")]   # the server up to the first '_': narrower
    splits = [(rest[:i], rest[i + 1:]) for i, c in enumerate(rest) if c == "_"]
    names = [mcp_permission(server, tool) for server, tool in splits if server and tool]
    if not names:
        raise Unexpressible(f"not mcp_<server>_<tool>: mcp_{rest}")
    return list(dict.fromkeys(names))


def invalid_field(table: Any) -> str | None:
    """Why Gemini CLI's loader refuses this [[rule]] (and so its whole file); None
    when it loads it."""
    if not isinstance(table, dict):
        return "a [[rule]] must be a table"
    for key in REQUIRED:
        if key not in table:
            return f"{key} is required"
    for key, value in table.items():
        if key in FIELDS and not FIELDS[key][1](value):
            return f"{key} must be {FIELDS[key][0]}, not {value!r}"
    for key in ("toolName", "mcpName", "subagent"):   # the engine refuses to start
        if key in table and "" in _names(table[key]):
            return f"{key} cannot be an empty string"
    return None


def _rule(index: int, table: dict[str, Any]) -> GeminiRule:
    """One valid [[rule]] as data; a deny or ask read wider where dm_cc cannot say
    it (``notes`` say how); Unexpressible (SaysNothing) when it cannot be imported."""
    action = DECISIONS[table["decision"]]
    notes: list[str] = []
    unused: list[tuple[str, str]] = []

    def unsaid(what: str) -> None:
        """A condition dm_cc cannot say: an allow is not imported; a deny or ask
        is, without it (wider)."""
        if action == "allow":
            raise Unexpressible(what)
        notes.append(what)

    modes = table.get("modes")
    if modes and "default" not in modes:
        raise SaysNothing(f"modes {modes} (not the default mode)")
    for key in sorted(set(table) - set(FIELDS)):
        unused.append((f"rule {index + 1}: {key}",
                       "Gemini CLI ignores a key it does not know; an allow with one is "
                       "left out, a deny or ask is read without it"))
        unsaid(f"unknown field {key}")
    for key, why in UNSAID_CONDITIONS.items():
        if key in table:
            runs = "interactive" if table[key] is True else "headless"
            unsaid(why.format(value=str(table[key]).lower(), runs=runs))
    for key in ("denyMessage", "deny_message"):
        if key in table:
            unused.append((f"rule {index + 1}: {key}",
                           "the message Gemini CLI shows on a deny; dm_cc shows the rule"))
    tools, prefixes, regex = _shell(table, action, unsaid, notes, unused, index)
    server = table.get("mcpName")
    label = ", ".join(f"{k} = {v!r}" for k, v in table.items()
                      if k not in ("denyMessage", "deny_message"))
    permissions = list(dict.fromkeys(p for t in tools
                                     for p in _permissions(t, server, action, notes)))
    shares = _shares(tools) if server is None else []
    if action != "allow":
        notes += shares
    siblings = tuple(dict.fromkeys(t for tool in tools if tool in TOOLS and server is None
                                   for t in TOOLS if TOOLS[t] == TOOLS[tool] and t not in tools))
    return GeminiRule(index, permissions, prefixes, action, float(table["priority"]), label,
                      regex=regex if "bash" in permissions else None, notes=tuple(notes),
                      unused=tuple(unused), shares=tuple(shares) if action == "allow" else (),
                      tools=tuple(tools), siblings=siblings,
                      redirection=bool(table.get("allowRedirection",
                                                 table.get("allow_redirection"))))


def _allowed_tools(rules: list[GeminiRule]) -> set[str]:
    """The Gemini tools some rule allows whole (no condition: an allow with one is
    not imported): a call of one always matches an allow, never Gemini's default."""
    return {tool for rule in rules if rule.action == "allow" and rule.prefixes is None
            and rule.regex is None for tool in rule.tools}


def _shares(tools: list[str]) -> list[str]:
    """For each named tool whose dm_cc permission other Gemini CLI tools also have
    (``replace`` and ``write_file`` are both dm_cc's ``edit``), unless the rule
    names those too: its rule reaches their calls as well (wider than written)."""
    out = []
    for tool in tools:
        others = [t for t in TOOLS if t != tool and tool in TOOLS and TOOLS[t] == TOOLS[tool]
                  and t not in tools]
        if others:
            out.append(f"toolName {tool!r}: dm_cc's {TOOLS[tool]!r} is also "
                       f"{', '.join(repr(t) for t in others)}'s")
    return out


def _shell(table: dict[str, Any], action: str, unsaid: Any, notes: list[str],
           unused: list[tuple[str, str]], index: int
           ) -> tuple[list[str], list[str] | None, str | None]:
    """The tool names a rule is about, its command prefixes (None: any command) and
    its commandRegex, as Gemini CLI's buildArgsPatterns reads them: an empty
    ``commandPrefix`` (``""``) is no condition at all; a list of prefixes is one rule
    each (``[]``: none); a prefix wins over a regex."""
    named = table.get("toolName")
    prefix = table.get("commandPrefix")
    regex = table.get("commandRegex")
    if prefix == []:
        raise SaysNothing("commandPrefix = [] makes no rule in Gemini CLI")
    if prefix == "":
        prefix = None               # falsy: Gemini reads no condition
    if prefix is not None and regex is not None:
        unused.append((f"rule {index + 1}: commandRegex",
                       "Gemini CLI uses commandPrefix when both are given"))
        regex = None
    if regex == "":
        regex = None
    if named is None:
        _no_tool_name(table, prefix is None and regex is None, unsaid, unused, index)
    if prefix is None and regex is None:
        return (["*"] if named is None else _names(named)), None, None
    if named not in (None, "run_shell_command"):
        # Gemini matches a prefix or regex against a "command" argument only the
        # shell tool has: on another tool the rule matches nothing
        unsaid("commandPrefix or commandRegex with a toolName other than run_shell_command")
        return _names(named), None, None
    if regex is not None:
        unsaid("commandRegex is a regular expression dm_cc's wildcards cannot say exactly")
        return ["run_shell_command"], None, regex
    return ["run_shell_command"], _prefixes(_names(prefix), action, notes, unused, index), None


def _no_tool_name(table: dict[str, Any], every_tool: bool, unsaid: Any,
                  unused: list[tuple[str, str]], index: int) -> None:
    """A rule without toolName: before 2026-03 Gemini CLI read it as every tool (of
    mcpName's server; a shell command with commandPrefix), since then its loader
    refuses the file. A deny or ask is read the old way (wider than nothing), an
    allow is left out -- never looser under either."""
    unused.append((f"rule {index + 1}: toolName",
                   "missing: Gemini CLI requires it since 2026-03 (`toolName = \"*\"` for "
                   "every tool) and refuses the file without it"))
    if table.get("decision") == "allow":
        unsaid("no toolName: Gemini CLI now refuses such a rule")
    if every_tool and "mcpName" not in table:
        unsaid("no toolName: read as every tool")


def _prefixes(prefixes: list[str], action: str, notes: list[str],
              unused: list[tuple[str, str]], index: int) -> list[str] | None:
    """The prefixes dm_cc's patterns are made from; None for the whole shell tool.
    Gemini CLI matches a prefix followed by a space or the command's end (a word);
    an empty one in a list then matches almost nothing, a trailing space only two
    spaces -- so an allow leaves those out, a deny or ask reads them wider."""
    out: list[str] = []
    for prefix in prefixes:
        odd = prefix == "" or prefix != prefix.rstrip()
        if not odd:
            if action == "ask" and denial_pattern(prefix) != prefix:
                notes.append(f"commandPrefix {prefix!r}: read as dm_cc judges commands "
                             f"({denial_pattern(prefix)!r})")
            out.append(prefix)
        elif action == "allow":
            unused.append((f"rule {index + 1}: commandPrefix {prefix!r}",
                           "Gemini CLI reads a prefix as a word: an empty one or one ending "
                           "in a space matches almost no command, so the allow is left out"))
        elif not prefix.strip():
            notes.append(f"commandPrefix {prefix!r}: every command")
            return None
        else:
            notes.append(f"commandPrefix {prefix!r}: read as {prefix.rstrip()!r}")
            out.append(prefix.rstrip())
    if not out:
        raise Unexpressible("no commandPrefix dm_cc can allow exactly")
    return list(dict.fromkeys(out))


def _matches(rule: GeminiRule, command: str) -> bool:
    """Whether a shell rule matches ``command`` as its dm_cc patterns do: a deny's
    prefix as plain text, an allow's or ask's as a word."""
    if rule.regex is not None:
        return re.search(rule.regex, command) is not None
    if rule.prefixes is None:
        return True
    if rule.action == "deny":
        return any(command.startswith(p) for p in rule.prefixes)
    return any(command == p or command.startswith(p + " ") for p in rule.prefixes)


def whole_shell_allow(rule: GeminiRule) -> bool:
    """An allow of every shell command: Gemini CLI applies its shell heuristics to it
    (HEURISTIC_ASKS), not to a rule with a command prefix or pattern."""
    return rule.action == "allow" and rule.prefixes is None and rule.regex is None \
        and ("bash" in rule.permissions or "*" in rule.permissions)


def _heuristic_ask(command: str) -> bool:
    """Whether the asks written after a whole-tool allow catch ``command``."""
    return command not in HEURISTIC_ALLOWS \
        and any(fnmatchcase(command, p) for p in HEURISTIC_ASKS)


def gemini_decision(rules: list[GeminiRule], command: str) -> str | None:
    """Gemini's decision for a shell command (one without redirection or a second
    command): the highest-priority matching rule (the stricter one on a tie), an
    allow of the whole tool read with HEURISTIC_ASKS; None when no rule matches."""
    hits = [r for r in rules if "bash" in r.permissions or "*" in r.permissions
            if _matches(r, command)]
    if not hits:
        return None
    best = max(hits, key=lambda r: (r.priority, STRICTNESS[r.action]))
    return "ask" if whole_shell_allow(best) and _heuristic_ask(command) else best.action


_RULE_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]", re.M)


def _load(text: str, shown: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise PolicyError(shown, int(found.group(1)) if found else None,
                          f"not valid TOML: {exc}") from None


def _check(data: dict[str, Any], text: str, shown: str) -> None:
    """InvalidSource naming ``file:line`` and the rule when Gemini CLI's loader would
    refuse the file (it then uses none of its rules: a guess would be a loosening)."""
    tables = data.get("rule", [])
    if not isinstance(tables, list):
        raise InvalidSource(shown, None, "rule must be an array of tables ([[rule]]); "
                                         "Gemini CLI refuses this file")
    lines = [text.count("\n", 0, m.start()) + 1 for m in _RULE_HEADER.finditer(text)]
    for index, table in enumerate(tables):
        why = invalid_field(table)
        if why is not None:
            what = ", ".join(f"{k} = {v!r}" for k, v in table.items()) \
                if isinstance(table, dict) else repr(table)
            raise InvalidSource(shown, lines[index] if index < len(lines) else None,
                                f"rule {index + 1} ({what}): {why}; Gemini CLI refuses "
                                "a file with such a rule and uses none of its rules")
    checkers = data.get("safety_checker", [])
    if not isinstance(checkers, list) or not all(isinstance(c, dict) for c in checkers):
        raise InvalidSource(shown, None, "safety_checker must be an array of tables; "
                                         "Gemini CLI refuses this file")


def parse_rules(text: str, shown: str) -> tuple[list[GeminiRule], list[Unsaid]]:
    """The importable rules of a policy file, and each one that is not;
    InvalidSource when Gemini CLI would refuse the file."""
    data = _load(text, shown)
    _check(data, text, shown)
    rules: list[GeminiRule] = []
    others: list[Unsaid] = []
    for index, checker in enumerate(data.get("safety_checker", [])):
        what = ", ".join(f"{k} = {v!r}" for k, v in checker.items())
        others.append(Unsaid("deny", f"safety_checker {index + 1} ({what}): runs a check "
                                     "dm_cc cannot, which may deny any call it covers"))
    for index, table in enumerate(data.get("rule", [])):
        try:
            rules.append(_rule(index, table))
        except Unexpressible as exc:
            what = ", ".join(f"{k} = {v!r}" for k, v in table.items())
            others.append(Unsaid(DECISIONS[table["decision"]],
                                 f"rule {index + 1} ({what}): {exc}",
                                 isinstance(exc, SaysNothing)))
    return rules, others


def _patterns(rule: GeminiRule) -> list[str]:
    """dm_cc shell patterns: a deny's prefix as plain text (``rm -rf*``, wider than
    Gemini's word), an allow's or ask's as the word Gemini CLI matches (``git *``)."""
    if rule.regex is not None:
        return covering_patterns(rule.regex)
    if rule.prefixes is None:
        return ["*"]
    out = []
    for prefix in rule.prefixes:
        if rule.action == "allow":
            out.append(literal_command(prefix) + " *")
        elif rule.action == "ask":
            out.append(denial_pattern(literal_command(prefix) + " *"))
        else:
            out.append(denial_pattern(literal_command(prefix) + "*"))
    return list(dict.fromkeys(out))


def import_gemini(path: Path) -> Imported:
    shown, text = read_source(path)
    out = Imported(shown, "gemini", header=[
        f"Imported by `dm_cc policy import gemini` from {shown}.",
        "Gemini CLI takes the highest-priority matching rule; dm_cc's last match wins, so",
        "rules are written lowest priority first (on a tie, the stricter one last).",
        "commandPrefix: an allow or ask covers the word as Gemini CLI does ('git *'), a",
        "deny the plain prefix ('rm -rf*'), each the reading that errs toward asking.",
    ])
    rules, others = parse_rules(text, shown)
    data = tomllib.loads(text)
    for key in data:
        if key not in ("rule", "safety_checker"):
            out.unused(key, "Gemini CLI reads only [[rule]] and [[safety_checker]] tables")
    for other in others:
        out.unsaid(out.rules, other.action, other.message, says_nothing=other.says_nothing)
    stricter: list[Entry] = []
    allowed = _allowed_tools(rules)
    redirection = _redirection(out, rules)
    for rule in sorted(rules, key=lambda r: (r.priority, STRICTNESS[r.action], r.index)):
        unallowed = [t for t in rule.siblings if t not in allowed and "*" not in allowed]
        if rule.action == "allow" and unallowed:
            out.drop(out.rules, f"rule {rule.index + 1} ({rule.label}): allow: dm_cc's "
                                f"{rule.permissions[0]!r} is also {', '.join(map(repr, unallowed))}'s, "
                                "which no rule allows (Gemini CLI asks): an allow of one would "
                                "allow the other's calls")
            continue
        _add(out, rule, stricter, redirection)
    out.rules.append(Entry("external_directory", "*", "deny", comment=OUTSIDE))  # whatever
    _tests(out, rules)
    return out


#: What Gemini CLI's file tools do whatever its policy says: a path outside the
#: workspace is refused by the tool itself (its shell is not held so: stricter here,
#: as dm_cc's external_directory request comes from commands too). Written last, as
#: no rule of the file can lift it.
OUTSIDE = ("Gemini CLI's file tools refuse a path outside the workspace whatever the policy "
           "says (its shell does not: stricter here)")


def _shell_allow(rule: GeminiRule) -> bool:
    return rule.action == "allow" and ("bash" in rule.permissions or "*" in rule.permissions)


def _redirection(out: Imported, rules: list[GeminiRule]) -> bool:
    """Whether a rule's ``allowRedirection`` can be imported as an allow of its
    commands' ``redirect`` requests. Gemini CLI (policy-engine.ts checkShellCommand,
    shell-utils.ts hasRedirection) asks about an allowed line with a redirection
    anywhere in it unless the rule matching the WHOLE line -- the one its first
    command's prefix matches -- says allowRedirection; dm_cc's ``redirect`` is the
    redirected command's own. So `ls && git log > f` asks in Gemini when `ls`'s rule
    lacks it, whatever `git`'s says: while any shell allow lacks it, every allow's
    redirect is written as an ask (stricter, reported)."""
    honoured = [r for r in rules if _shell_allow(r) and r.redirection]
    if honoured and any(_shell_allow(r) and not r.redirection for r in rules):
        for rule in honoured:
            out.approximate(f"rule {rule.index + 1} ({rule.label}): allowRedirection is "
                            "written as an ask of its redirected commands (stricter): Gemini "
                            "CLI honours it only for a line whose first command its rule "
                            "matches, and another shell allow here lacks it")
        return False
    return True


def _redirects(rule: GeminiRule, entries: list[Entry], honoured: bool) -> list[Entry]:
    """After a shell allow, what Gemini CLI says of its commands run with a
    redirection: an ask, or with ``allowRedirection`` (where ``honoured``) an allow --
    ``redirect`` rules of the same patterns as its ``bash`` ones."""
    if not _shell_allow(rule):
        return []
    action = "allow" if rule.redirection and honoured else "ask"
    said = (f"Gemini CLI {'allows' if action == 'allow' else 'asks about'} these commands "
            f"of rule {rule.index + 1} run with a redirection"
            + ("" if action == "allow" else " (its allowRedirection: stricter, said)"
               if rule.redirection else " (no allowRedirection)"))
    patterns = dict.fromkeys(e.pattern if e.permission == "bash" else "*"
                             for e in entries if e.permission in ("bash", "*"))
    return [Entry("redirect", p, action, comment=said if i == 0 else None)
            for i, p in enumerate(patterns)]


def _add(out: Imported, rule: GeminiRule, stricter: list[Entry],
         redirection: bool = True) -> None:
    """Write ``rule``. A rule read wider than Gemini's (an ask: ``notes``; an allow
    of a tool whose dm_cc permission others share: ``shares``) would, where it
    reaches further, override the lower-priority rules stricter than it before it
    (Gemini: those decide there); so they are written again after it -- stricter,
    never looser. ``stricter`` holds the denies and asks written so far."""
    comment = f"rule {rule.index + 1}: {rule.label}"
    entries = [Entry(permission, pattern, rule.action)
               for permission in rule.permissions
               for pattern in (_patterns(rule) if permission == "bash" else ["*"])]
    for key, why in rule.unused:
        out.unused(key, why)
    if rule.notes:
        wider = ", ".join(f"{e.permission} {e.pattern!r}" for e in entries)
        out.widen(f"rule {rule.index + 1} ({rule.label}): {'; '.join(rule.notes)}", wider)
        comment += f"  (written wider: {'; '.join(rule.notes)})"
    for share in rule.shares:
        out.approximate(f"rule {rule.index + 1} ({rule.label}): {share}: the lower-priority "
                        "denies and asks it reaches are written again after it")
    for index, entry in enumerate(entries):
        out.rules.append(Entry(entry.permission, entry.pattern, entry.action,
                               comment=comment if index == 0 else None))
    out.rules += _redirects(rule, entries, redirection)
    if whole_shell_allow(rule):
        out.rules += _heuristics(rule)
    if (rule.action == "ask" and rule.notes) or rule.shares:
        _again(out, rule, entries, stricter)
    if rule.action != "allow":
        stricter += entries


def _again(out: Imported, rule: GeminiRule, entries: list[Entry],
           stricter: list[Entry]) -> None:
    """The lower-priority rules stricter than ``rule`` that its wider ``entries``
    may override, written again after it."""
    again: list[Entry] = []
    for earlier in stricter:
        if earlier.permission is None or STRICTNESS[earlier.action] <= STRICTNESS[rule.action]:
            continue
        for wide in entries:   # only as far as the wider rule reaches (``* *`` → ``read *``)
            if wide.permission is not None and may_meet(earlier.permission, wide.permission):
                entry = Entry(narrower(earlier.permission, wide.permission),
                              narrower(earlier.pattern, wide.pattern), earlier.action)
                if entry not in again:
                    again.append(entry)
    said = f"again: the lower-priority rules the wider {rule.action} of rule " \
           f"{rule.index + 1} must not override"
    out.rules += [Entry(e.permission, e.pattern, e.action, comment=said if i == 0 else None)
                  for i, e in enumerate(again)]


def _heuristics(rule: GeminiRule) -> list[Entry]:
    """What Gemini CLI still asks about under ``rule`` (an allow of every shell
    command), written right after it."""
    said = f"Gemini CLI asks about these under rule {rule.index + 1} all the same " \
           "(its shell heuristics: a command it deems dangerous)"
    return [Entry("bash", p, "ask", comment=said if i == 0 else None)
            for i, p in enumerate(HEURISTIC_ASKS)]


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
