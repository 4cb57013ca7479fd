"""opencode ``opencode.json`` → a dm_cc policy.

opencode's ``permission`` block is already last-match-wins in the order written
(top-level keys included: ``{"*": "ask", "bash": "allow"}``), like dm_cc, so the
rules keep their order. What changes is the pattern language of paths: opencode's
``*`` crosses ``/`` (``docs/*.mdx`` matches ``docs/a/b.mdx``) and a pattern is
matched against the path relative to the project, while dm_cc's path globs keep
``*`` inside one segment. Each path pattern is rewritten into the dm_cc globs
that together match the same paths (docs/importers.md).

A key dm_cc has no permission for is never dropped from a deny or ask (model.py):
an MCP tool (``<server>_<tool>``, opencode's flat name) becomes every
``mcp__<server>__<tool>`` split of it, a wildcard key every dm_cc permission
whose opencode name it matches and every MCP tool it may match; a documented
opencode tool dm_cc does not have decides nothing; any other name is refused.

Order keeps meaning, so a rule written wider than its source (an ask whose program
is a path, read as every command) would override the earlier denies opencode still
applies where the source rule never reached: after it, those denies -- every rule
dm_cc decides before it, the top-level ones for an agent's -- are written again.
"""

from __future__ import annotations

import itertools
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from dm_cc.errors import PolicyError
from dm_cc.permissions import STRICTNESS
from dm_cc.policy.importers.jsonfile import line_with, read_json
from dm_cc.policy.importers.model import (
    Entry,
    Imported,
    SaysNothing,
    Unexpressible,
    denial_pattern,
    may_meet,
    mcp_permission,
    mcp_wildcard,
    narrower,
)

ACTIONS = ("allow", "ask", "deny")

# opencode permission key → dm_cc permission, and whether its patterns are paths
KEYS: dict[str, tuple[str, bool]] = {
    "*": ("*", False),
    "bash": ("bash", False),
    "shell": ("bash", False),            # the shell tool's name in opencode V2
    "edit": ("edit", True),
    "write": ("edit", True),
    "patch": ("edit", True),
    "read": ("read", True),
    "list": ("list", True),
    "glob": ("glob", True),
    "grep": ("grep", True),
    "external_directory": ("external_directory", True),
    "webfetch": ("webfetch", False),
    "task": ("task", False),
    "doom_loop": ("doom_loop", False),
    "todowrite": ("todo", False),
}
# opencode's documented tools dm_cc has no tool like: a rule about one decides
# nothing in dm_cc, whatever its action (opencode.ai/docs/tools, /docs/permissions).
# ``todoread`` among them: dm_cc's ``todo`` replaces the list (opencode's
# todowrite), so a todoread allow read as ``todo`` would let writes through.
ABSENT = frozenset({"websearch", "codesearch", "lsp", "skill", "question", "invalid",
                    "todoread"})
# keys opencode asks nothing under: its write and patch tools ask ``edit``
# (anomalyco/opencode#40150), so a rule of these decides nothing there. A deny or
# ask is kept as dm_cc's ``edit`` (wider: what its author meant), an allow left out
# (as ``edit`` it would let through edits opencode's ``edit`` rules stop).
SHARED = frozenset({"write", "patch"})


def _segment(segment: str, action: str, notes: list[str]) -> list[str]:
    """The dm_cc segment sequences matching what an opencode segment matches when its
    ``*`` may also span ``/``."""
    if "*" not in segment:
        return [segment]
    if segment == "*":
        return ["*/**"]                 # one or more whole segments
    if segment.count("*") == 1:
        head, tail = segment.split("*")
        return [segment, f"{head}*/**/*{tail}"]
    # several stars: the exact set needs every split; deny/ask take the wider
    # reading (first star to last star may span segments), allow the narrower
    head, tail = segment.split("*", 1)[0], segment.rsplit("*", 1)[1]
    notes.append(f"{segment!r} has several '*': "
                 + ("read more widely (stricter)" if action != "allow"
                    else "read inside one path segment (narrower: may ask more)"))
    return [segment] if action == "allow" else [segment, f"{head}*/**/*{tail}"]


def path_patterns(pattern: str, action: str, notes: list[str], *,
                  directory: bool = False) -> list[str]:
    """An opencode path wildcard as dm_cc path globs (their union matches the same).
    For ``directory`` patterns (external_directory is asked for a file's directory)
    a final ``/*`` also takes the directory itself: ``~/p/**`` covers ``~/p/a.txt``."""
    text = re.sub(r"\*+", "*", pattern)
    if text == "*":
        return ["*"]
    text = re.sub(r"([\[\]{}])", r"\\\1", text)   # literal in opencode: escaped for dm_cc
    for home in ("$HOME", "${HOME}"):
        if text == home or text.startswith(home + "/"):
            text = "~" + text[len(home):]
    if text.startswith("/"):
        prefix, body = "/", text[1:]
    elif text == "~" or text.startswith("~/"):
        prefix, body = "~/", text[2:]
    else:
        prefix, body = "./", text[2:] if text.startswith("./") else text
    if not body:
        return [prefix.rstrip("/") or "/"]
    choices = [_segment(s, action, notes) for s in body.split("/")]
    if directory and body.split("/")[-1] == "*":
        choices[-1] = ["**"]
    out = []
    for combination in itertools.product(*choices):
        joined = "/".join(combination)
        if prefix == "./" and "/" in joined:
            out.append(joined)          # already anchored at the project root
        else:
            out.append(prefix + joined)
    return list(dict.fromkeys(out))


def _patterns(key: str, pattern: str, action: str, notes: list[str]) -> list[str]:
    permission, is_path = KEYS[key]
    if is_path:
        return path_patterns(pattern, action, notes,
                             directory=permission == "external_directory")
    if permission == "bash":
        literal = pattern.replace("\\", "\\\\")   # opencode's backslash is plain text
        return [literal if action == "allow" else denial_pattern(literal)]
    return [pattern]


# dm_cc's permissions whose patterns are paths (globs whose `*` stays in a segment):
# what opencode's `*` key says of them is rewritten as its path keys' patterns are
PATH_PERMISSIONS = ("edit", "read", "list", "glob", "grep", "external_directory", "delete")
# the other dm_cc permissions an opencode key names: what a `*` allow may reach
PLAIN_PERMISSIONS = tuple(dict.fromkeys(p for p, is_path in KEYS.values()
                                        if not is_path and p != "*"))


def _pairs(key: str, pattern: str, action: str, notes: list[str]) -> list[tuple[str, str]]:
    """The dm_cc (permission, pattern) rules of a rule of a known key. The ``*`` key
    with a pattern is about paths too, which dm_cc matches as globs: a deny or ask
    keeps ``* <pattern>`` (wider where dm_cc's glob reaches further) and adds each
    path permission's rewrite and the shell's reading; an allow names each plain
    permission and each path permission's rewrite (an MCP tool or a permission
    opencode has no key for: left to ask, narrower)."""
    if key != "*" or pattern == "*":
        return [(KEYS[key][0], p) for p in _patterns(key, pattern, action, notes)]
    paths = [(permission, p) for permission in PATH_PERMISSIONS
             for p in path_patterns(pattern, action, notes,
                                    directory=permission == "external_directory")]
    if action == "allow":
        notes.append("'*' with a pattern: allowed for opencode's tools only (not MCP tools)")
        plain = [(permission, p) for permission in PLAIN_PERMISSIONS
                 for p in _patterns(next(k for k in KEYS if KEYS[k][0] == permission),
                                    pattern, action, notes)]
        return [*plain, *paths]
    shell = [("bash", p) for p in _patterns("bash", pattern, action, notes)]
    notes.append("'*' with a pattern: also matched as dm_cc's path globs (wider)")
    return list(dict.fromkeys([("*", pattern), *shell, *paths]))


def permissions_of(key: str, action: str) -> list[str]:
    """The dm_cc permissions an opencode key that is not in KEYS names: an MCP tool
    (``<server>_<tool>``: each split), or for a deny or ask a wildcard's every
    match; SaysNothing for a tool dm_cc does not have, Unexpressible otherwise."""
    if "*" in key or "?" in key:
        if action == "allow":
            server, _, tool = key.partition("_")
            if tool != "*" or not server or any(c in server for c in "*?"):
                raise Unexpressible("a wildcard dm_cc's permission names cannot say exactly")
            return [mcp_permission(server, "*")]   # the server up to the first '_': narrower
        builtin = [KEYS[name][0] for name in KEYS if name != "*" and fnmatchcase(name, key)]
        return list(dict.fromkeys([*builtin, mcp_wildcard(key.replace("?", "*"))]))
    if key in ABSENT:
        raise SaysNothing(f"dm_cc has no permission like opencode's {key!r}")
    splits = [mcp_permission(key[:i], key[i + 1:]) for i, c in enumerate(key)
              if c == "_" and key[:i] and key[i + 1:]]
    if not splits:
        raise Unexpressible(f"dm_cc has no permission like opencode's {key!r}")
    return list(dict.fromkeys(splits))


def _block(out: Imported, entries: list[Entry], value: Any, where: str, path: Path) -> None:
    """One ``permission`` block (a string, or a map of keys to a string or a map)."""
    if isinstance(value, str):
        value = {"*": value}
    if not isinstance(value, dict):
        raise PolicyError(out.source, line_with(path, "permission"),
                          f"{where} must be an action or an object")
    for key, rule in value.items():
        patterns = rule if isinstance(rule, dict) else {"*": rule}
        for pattern, action in patterns.items():
            label = f"{where}.{key}" + (f"[{pattern!r}]" if isinstance(rule, dict) else "")
            if action not in ACTIONS:
                line = line_with(path, pattern if isinstance(rule, dict) else key, str(action))
                raise PolicyError(out.source, line,
                                  f"{label}: {action!r} is not allow, ask or deny")
            _rule(out, entries, key, pattern, action, label)


def _rule(out: Imported, entries: list[Entry], key: str, pattern: str, action: str,
          label: str) -> None:
    """One opencode rule: key, pattern, action."""
    notes: list[str] = []
    if key in SHARED and action == "allow":
        out.drop(entries, f"{label}: allow: opencode asks `edit` for its write and patch "
                          f"tools, so a `{key}` rule decides nothing there")
        return
    if key in KEYS:
        pairs = _pairs(key, pattern, action, notes)
    else:
        try:
            permissions = permissions_of(key, action)
        except Unexpressible as exc:
            out.unsaid(entries, action, f"{label}: {action}: {exc}",
                       says_nothing=isinstance(exc, SaysNothing))
            return
        # an MCP tool's pattern is over its arguments: a deny or ask of some of them
        # is read as the whole tool (wider); an allow of some, not imported
        if pattern != "*" and action == "allow":
            out.drop(entries, f"{label}: allow: a pattern over an MCP tool's input")
            return
        if pattern != "*":
            notes.append("a pattern over an MCP tool's input: the whole tool (wider)")
        pairs = [(permission, "*") for permission in permissions]
    comment = f"{label}: {action}"
    for note in dict.fromkeys(notes):       # a `*` key's path rewrites say theirs each
        out.approximate(f"{label}: {note}")
        comment += f"  (approximate: {note})"
    earlier = _before(out, entries)
    for index, (permission, dm_pattern) in enumerate(pairs):
        entries.append(Entry(permission, dm_pattern, action,
                             comment=comment if index == 0 else None))
    if action == "ask" and _widened(key, pattern, pairs, notes):
        if _read_wider(key, pattern, pairs):
            out.widen(f"{label}: ask: its program is named by a path, judged by its last "
                      "name", ", ".join(f"{p} {q!r}" for p, q in pairs))
        _again(entries, earlier, pairs, action, label)


def _before(out: Imported, entries: list[Entry]) -> list[Entry]:
    """The rules dm_cc decides before the next one of ``entries``: an agent's come
    after every top-level rule (an agent override is appended after them), so a
    wider ask of an agent reaches the top-level denies too."""
    return list(entries) if entries is out.rules else [*out.rules, *entries]


def _widened(key: str, pattern: str, pairs: list[tuple[str, str]], notes: list[str]) -> bool:
    """Whether the dm_cc rules of an opencode deny or ask may match requests it does
    not: a pattern read wider (``notes``, a program's path), a wildcard key (its MCP
    tools are matched more widely), a key opencode asks nothing under (``write``
    read as ``edit``). Only a known key over exactly translated patterns is exact."""
    if notes or _read_wider(key, pattern, pairs):
        return True
    return key not in KEYS or key in SHARED


def _read_wider(key: str, pattern: str, pairs: list[tuple[str, str]]) -> bool:
    """Whether a bash pattern was written wider than opencode reads it: its program
    named by a path taken by its last name (``https://x.test/*`` → ``*``)."""
    if key not in KEYS or KEYS[key][0] != "bash":
        return False
    said = " ".join(pattern.replace('"', "").replace("'", "").split())
    return any(dm_pattern != said for _, dm_pattern in pairs)


def _again(entries: list[Entry], earlier: list[Entry], pairs: list[tuple[str, str]],
           action: str, label: str) -> None:
    """After a rule (an ask) written wider than its source: every earlier stricter
    rule it may reach (last match wins: it would override them where opencode still
    denies), written again -- stricter, never looser. ``earlier`` is all
    dm_cc decides before it, the top-level rules too for an agent's. Where the
    earlier rule or the wider one is about everything (``*``), the earlier is
    written again only as far as the wider one reaches: the same requests decided,
    fewer of the rules after it overridden."""
    again: list[Entry] = []
    for rule in earlier:
        if rule.permission is None or STRICTNESS[rule.action] <= STRICTNESS[action]:
            continue
        for permission, pattern in pairs:
            if may_meet(rule.permission, permission):
                entry = Entry(narrower(rule.permission, permission),
                              narrower(rule.pattern, pattern), rule.action)
                if entry not in again:
                    again.append(entry)
    for index, entry in enumerate(again):
        comment = f"again: the earlier rules the wider {action} of {label} must not override"
        entries.append(Entry(entry.permission, entry.pattern, entry.action,
                             comment=comment if index == 0 else None))


def _legacy_tools(out: Imported, entries: list[Entry], tools: Any, where: str) -> None:
    """The deprecated ``tools: {name: false}``: a disabled tool is denied, after
    the permission rules (it is off whatever they allow)."""
    if not isinstance(tools, dict):
        return
    for name, enabled in tools.items():
        if enabled is not False:
            continue
        _rule(out, entries, name, "*", "deny", f"{where}.{name}: false")


# What the import says of a top-level key it does not use (every other key: the
# last line). ``permission``, ``permissions``, ``tools``, ``agent``, ``agents`` and
# ``mode`` are imported.
UNUSED_WHY: dict[str, str] = {
    "$schema": "the JSON schema the file names; nothing to import",
    "model": "the model opencode uses; dm_cc's is `model:` in .dm_cc/config.yaml",
    "small_model": "opencode's model for small tasks; dm_cc has no such setting",
    "provider": "model providers; dm_cc reaches models by `model:` and `api_base:` "
                "in .dm_cc/config.yaml",
    "mcp": "MCP servers; dm_cc's are `mcp: servers:` in .dm_cc/config.yaml (docs/mcp.md), "
           "their tools' permissions are what this import writes",
    "instructions": "files added to the prompt; dm_cc reads AGENTS.md",
}
OTHER_WHY = "not a permission setting: the import reads only permissions"
AGENT_WHY = "part of the agent's definition, not its permissions: dm_cc agents are " \
            "defined in .dm_cc/agents/<name>.md (docs/agents.md)"
USED = ("permission", "permissions", "tools", "agent", "agents", "mode", "default_agent")
AGENT_USED = ("permission", "permissions", "tools", "disable", "disabled")


def import_opencode(path: Path) -> Imported:
    shown, data = read_json(path, jsonc=True)
    if not isinstance(data, dict):
        raise PolicyError(shown, 1, "an opencode config is a JSON object")
    out = Imported(shown, "opencode", header=[
        f"Imported by `dm_cc policy import opencode` from {shown}.",
        "opencode's rules are last-match-wins in the order written, as dm_cc's: order kept.",
        "Path patterns: opencode's * also crosses '/', so each becomes the dm_cc globs",
        "that match the same paths (docs/importers.md). opencode's own defaults are not",
        "imported: what nothing here decides follows dm_cc's defaults.",
    ])
    if "permission" in data:
        _block(out, out.rules, data["permission"], "permission", path)
    if "permissions" in data:
        _ordered(out, out.rules, data["permissions"], "permissions", path)
    _legacy_tools(out, out.rules, data.get("tools"), "tools")   # off, whatever is allowed
    agents: dict[str, tuple[str, Any]] = {}
    for key in ("mode", "agent", "agents"):   # `mode`: agent's former name; `agents`: V2's
        block = data.get(key) or {}
        if not isinstance(block, dict):
            raise PolicyError(shown, line_with(path, key), f"{key} must be an object")
        agents.update({name: (f"{key}.{name}", config) for name, config in block.items()})
    for name, (where, config) in agents.items():
        if isinstance(config, dict):
            _agent(out, name, where, config, path)
    _no_start(out, agents)
    _unused(out, data)
    return out


def _no_start(out: Imported, agents: dict[str, tuple[str, Any]]) -> None:
    """Nothing may start a disabled agent (opencode has no such agent): ``task
    <name> deny`` last of the top-level rules and last of every agent's, so no
    allow of ``task`` -- an agent's own comes after the top level -- lets it start."""
    for name, (where, config) in agents.items():
        for key in ("disable", "disabled"):     # V1's `disable`, V2's `disabled`
            if isinstance(config, dict) and config.get(key) is True:
                comment = f"{where}.{key}: true (opencode has no such agent: nothing may " \
                          "start it)"
                for entries in (out.rules, *out.agents.values()):
                    entries.append(Entry("task", name, "deny", comment=comment))
                break


def _agent(out: Imported, name: str, where: str, config: dict[str, Any], path: Path) -> None:
    """One agent's permissions (after the global ones, as opencode merges them),
    and a disabled agent as one that may do nothing (that nothing may start it:
    :func:`_no_start`)."""
    entries: list[Entry] = []
    if "permission" in config:
        _block(out, entries, config["permission"], f"{where}.permission", path)
    if "permissions" in config:
        _ordered(out, entries, config["permissions"], f"{where}.permissions", path)
    _legacy_tools(out, entries, config.get("tools"), f"{where}.tools")
    for key in ("disable", "disabled"):     # V1's `disable`, V2's `disabled`
        if config.get(key) is True:
            comment = f"{where}.{key}: true (opencode has no such agent: it may do nothing)"
            entries.append(Entry("*", "*", "deny", comment=comment))
    for key in config:
        if key not in AGENT_USED:
            out.unused(f"{where}.{key}", AGENT_WHY)
    if entries:
        out.agents.setdefault(name, []).extend(entries)


def _ordered(out: Imported, entries: list[Entry], rules: Any, where: str, path: Path) -> None:
    """opencode V2's ordered ``permissions``: a list of rules, the last match wins
    (``findLast``), as dm_cc's -- so the order is kept. A rule is ``{action,
    resource, effect}`` (``{permission, pattern, action}`` in earlier drafts)."""
    if not isinstance(rules, list):
        raise PolicyError(out.source, line_with(path, where.rsplit(".", 1)[-1]),
                          f"{where} must be a list of rules")
    for index, rule in enumerate(rules):
        fields = _v2_fields(rule)
        if fields is None:
            raise PolicyError(out.source, line_with(path, where.rsplit(".", 1)[-1]),
                              f"{where}[{index}]: a rule is {{\"action\", \"resource\", "
                              f"\"effect\"}}, not {rule!r}")
        key, pattern, action = fields
        label = f"{where}[{index}] {key}[{pattern!r}]"
        if action not in ACTIONS:
            raise PolicyError(out.source, line_with(path, str(action)),
                              f"{label}: {action!r} is not allow, ask or deny")
        _rule(out, entries, key, pattern, action, label)


def _v2_fields(rule: Any) -> tuple[str, str, Any] | None:
    """(tool name, pattern, action) of one V2 rule; None when it is not one."""
    if not isinstance(rule, dict):
        return None
    for names in (("action", "resource", "effect"), ("permission", "pattern", "action")):
        if set(rule) == set(names) and all(isinstance(rule[n], str) for n in names[:2]):
            return rule[names[0]], rule[names[1]], rule[names[2]]
    return None


def _unused(out: Imported, data: dict[str, Any]) -> None:
    """Say each top-level key the import does not use, and what to set instead."""
    agent = data.get("default_agent")
    if agent is not None:
        out.unused("default_agent", f"the agent opencode starts with; dm_cc's is a setting, "
                                    f"not a rule: put `default_agent: {agent}` in "
                                    ".dm_cc/config.yaml")
    for key in data:
        if key not in USED:
            out.unused(key, UNUSED_WHY.get(key, OTHER_WHY))
