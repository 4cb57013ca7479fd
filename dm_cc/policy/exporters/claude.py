"""A dm_cc policy → Claude Code ``settings.json`` (``permissions.allow/ask/deny``).

Claude Code decides **deny > ask > allow** whatever the order; dm_cc's last match
wins. Writing every rule into the list of its action is never looser than the
policy: where the policy denies or asks, its deciding rule is in the deny or ask
list, which beats any allow; where nothing of the policy matches, nothing exported
allows. It may be stricter: an allow placed after a deny or ask it overrides
(``deny rm *`` then ``allow rm -i *``) loses to it in Claude Code -- each such
allow is said. The policy's first rule, when it is ``* * ask`` (dm_cc's defaults
start so), is Claude Code's own default mode and is written as ``defaultMode:
default``; ``* * deny`` first is ``dontAsk`` (every ask becomes a deny: stricter).
The mapping tables are in docs/exporters.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from dm_cc.permissions import STRICTNESS, Rule
from dm_cc.policy.exporters.model import (
    Exported,
    SaysNothing,
    Unexpressible,
    brace_expansions,
    catch_all,
    leading_words,
    literal_words,
    omissible_ask,
    permission_overlaps,
    prefix_words,
    said,
    shell_words,
)

# dm_cc permission → Claude Code tool (docs.anthropic.com, "Tools available to Claude").
# `edit` is Edit alone: Claude applies Edit(path) rules to its writes too, and
# Write(path) rules to nothing.
TOOLS: dict[str, str] = {
    "bash": "Bash",
    "read": "Read",
    "edit": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "list": "LS",
    "webfetch": "WebFetch",
    "task": "Task",
    "todo": "TodoWrite",
    "plan_exit": "ExitPlanMode",
}
PATHS = frozenset({"read", "edit", "glob", "grep", "list"})
# dm_cc's built-in subagents → Claude Code's like them (a deny or ask names both)
SUBAGENTS = {"explore": "Explore", "general": "general-purpose", "plan": "Plan"}
# dm_cc permissions with no Claude Code tool: a rule about one decides nothing there
NOTHING: dict[str, str] = {
    "doom_loop": "Claude Code has no repetition guard",
    "sandbox_escape": "Claude Code's sandbox is configured apart from its permissions",
    "network": "Claude Code's sandbox is configured apart from its permissions",
    "delete": "Claude Code has no transactions",
    "plan_enter": "Claude Code's plan mode is entered by the person",
}
LISTS = ("allow", "ask", "deny")


# --------------------------------------------------------------------------- Bash


def bash_rules(pattern: str, action: str) -> list[str]:
    """A dm_cc shell pattern as Claude ``Bash(...)`` rules matching at least what it
    matches (exactly, for an allow: Unexpressible when that cannot be)."""
    if pattern.strip() in ("*", ""):
        return ["Bash"]
    if (exact := literal_words(pattern)) is not None:
        text = " ".join(exact)
        if "*" in text and action == "allow":
            raise Unexpressible("a literal '*' is a wildcard in Claude Code")
        return [f"Bash({text})"]
    if (prefix := prefix_words(pattern)) is not None:
        text = " ".join(prefix)
        if "*" in text and action == "allow":
            raise Unexpressible("a literal '*' is a wildcard in Claude Code")
        return [f"Bash({text}:*)"]
    # other wildcards: `*` is the same; `?` is literal in Claude, an escape unknown
    words = shell_words(pattern)
    if action == "allow" and ("?" in pattern or "\\" in pattern):
        raise Unexpressible("'?' and '\\' escapes are literal in Claude Code's Bash rules")
    text = " ".join(w.raw for w in words)
    text = re.sub(r"\\.", "*", text).replace("?", "*")   # wider, for a deny or ask
    out = [f"Bash({text})"]
    if text.endswith(" *") and text.count("*") > 1 and action != "allow":
        # Claude drops a trailing ' *' only when it is the rule's one wildcard
        out.append(f"Bash({text[:-2]})")
    return out


# --------------------------------------------------------------------------- paths


def path_spec(pattern: str, action: str) -> list[str]:
    """A dm_cc path glob as Claude path specifiers (gitignore syntax: ``//abs``,
    ``~/x``, ``/x`` at the project root, a name without ``/`` at any depth)."""
    if "\\" in pattern:
        if action == "allow":
            raise Unexpressible("an escaped character in a path has no Claude spelling")
        pattern = re.sub(r"\\.", "?", pattern)
    out: list[str] = []
    for one in brace_expansions(pattern):
        if one == "**":
            out.append("/**")              # the project
        elif one.startswith("/"):
            out.append("/" + one)
        elif one == "~" or one.startswith("~/"):
            out.append(one)
        elif one.startswith("./"):
            out.append("/" + one[2:])
        elif "/" in one:
            out.append("/" + one)          # project-relative in dm_cc
        else:                              # a name at any depth, in the project or not
            out.append(one)
            if action != "allow":
                out.append(f"//**/{one}")
    return list(dict.fromkeys(out))


def _host_spec(pattern: str, action: str) -> str:
    """``https://docs.python.org/*`` → ``domain:docs.python.org`` (a deny or ask:
    every URL of the host, wider)."""
    found = re.fullmatch(r"(?:https?|\*)://([^/:*?]+|\*\.[^/:*?]+)(?::[^/]*)?(?:/.*)?", pattern)
    if action == "allow":
        raise Unexpressible("Claude Code's WebFetch(domain:…) opens every scheme, port and "
                            "path of a host; list the URLs in dm_cc, or allow the host there")
    if found is None:
        raise Unexpressible("not one host's URLs")
    return f"domain:{found.group(1).lower()}"


# --------------------------------------------------------------------------- rules


def claude_rules(rule: Rule) -> list[str]:
    """One dm_cc rule as Claude Code rules (for its action's list)."""
    permission, pattern, action = rule.permission, rule.pattern, rule.action
    if permission in NOTHING:
        raise SaysNothing(NOTHING[permission])
    if permission == "external_directory":
        return _outside(pattern, action)
    if permission.startswith("mcp__"):
        return [_mcp(permission, pattern, action)]
    if permission not in TOOLS:
        raise Unexpressible(f"Claude Code has no tool like dm_cc's {permission!r}")
    tool = TOOLS[permission]
    if permission == "bash":
        return bash_rules(pattern, action)
    if pattern in ("*",):
        return [tool]
    if permission in PATHS:
        specs = path_spec(pattern, action)
        if action == "allow" and any(spec.startswith(("//", "~")) for spec in specs):
            raise Unexpressible("Claude Code's allow of a path outside the project also "
                                "lets it go there, which dm_cc asks about apart "
                                "(external_directory)")
        return [f"{tool}({spec})" for spec in specs]
    if permission == "webfetch":
        return [f"WebFetch({_host_spec(pattern, action)})"]
    if permission == "task":
        if any(c in pattern for c in "*?\\"):
            raise Unexpressible("Claude Code's Task(name) takes no wildcard")
        names = [pattern] if action == "allow" else [pattern, SUBAGENTS.get(pattern, pattern)]
        return [f"Task({name})" for name in dict.fromkeys(names)]
    raise Unexpressible(f"Claude Code's {tool} takes no specifier")


def _outside(pattern: str, action: str) -> list[str]:
    """Leaving the project for the directories ``pattern`` names: Claude Code asks
    before it on its own (an allow would be its additionalDirectories, which also
    allows reading there: left out); a deny is a deny of every file tool there."""
    if action != "deny":
        raise SaysNothing("Claude Code asks before leaving the project on its own "
                          "(additionalDirectories would also allow reading there)")
    specs = ["//**", "~/**"] if pattern in ("*", "**") else \
        path_spec(pattern.rstrip("/") + "{,/**}", action)
    return [f"{TOOLS[p]}({spec})" for p in sorted(PATHS) for spec in specs]


def _mcp(permission: str, pattern: str, action: str) -> str:
    parts = permission.split("__")
    if pattern != "*":
        raise Unexpressible("Claude Code's MCP rules take no condition on the call's input")
    if len(parts) == 3 and parts[1] and "*" not in parts[1] and "?" not in parts[1] \
            and (parts[2] == "*" or not any(c in parts[2] for c in "*?")):
        return permission
    raise Unexpressible("Claude Code names an MCP tool, or every tool of one server")


def _wider(rule: Rule) -> list[str]:
    """A deny or ask :func:`claude_rules` cannot say, as the whole tool (Bash: the
    command's first words); the Claude tools a permission wildcard names; every
    tool of an MCP server."""
    permission = rule.permission
    if permission.startswith("mcp__"):
        parts = permission.split("__")
        if len(parts) >= 3 and parts[1] and not any(c in parts[1] for c in "*?"):
            return [f"mcp__{parts[1]}__*"]
        return []
    if "*" in permission or "?" in permission:
        if permission_overlaps(permission, "mcp__x__y"):
            return []
        return list(dict.fromkeys(TOOLS[p] for p in TOOLS if permission_overlaps(permission, p)))
    if permission == "bash":
        words = leading_words(rule.pattern)
        return [f"Bash({' '.join(words)}:*)"] if words and "*" not in " ".join(words) \
            else ["Bash"]
    return [TOOLS[permission]] if permission in TOOLS else []


def export_claude(rules: Sequence[Rule]) -> Exported:
    out = Exported("claude")
    rules = list(rules)
    lists: dict[str, list[str]] = {name: [] for name in LISTS}
    mode = None
    for index, rule in enumerate(rules):
        if index == 0 and catch_all(rule) and rule.action != "allow":
            mode = "default" if rule.action == "ask" else "dontAsk"
            if mode == "dontAsk" and any(r.action == "ask" for r in rules):
                out.notes.append("defaultMode dontAsk: Claude Code denies what the "
                                 "policy's ask rules ask (stricter)")
            continue
        if "*" in rule.permission and not rule.permission.startswith("mcp__"):
            items = _every_tool(out, rules, index)
        else:
            items = said(out, rule, claude_rules, _wider,
                         default_asks=omissible_ask(rules, index))
        _overridden(out, rules, index)
        for item in items:
            if item not in lists[rule.action]:
                lists[rule.action].append(item)
    permissions: dict[str, object] = {}
    if mode is not None:
        permissions["defaultMode"] = mode
    permissions.update({name: lists[name] for name in LISTS if lists[name]})
    out.text = json.dumps({"permissions": permissions}, indent=2) + "\n"
    return out


def _every_tool(out: Exported, rules: list[Rule], index: int) -> list[str]:
    """A permission wildcard (``*``, ``e*``) as the Claude tools it names. Where it
    also names MCP tools, Claude Code cannot say so: an ask is left to Claude's
    default (which asks) when no earlier allow is about an MCP tool; a deny, or an
    ask after such an allow, is refused."""
    rule = rules[index]
    if rule.pattern not in ("*", "**"):
        return said(out, rule, lambda r: _raise("a pattern under a permission wildcard"),
                    _wider, default_asks=omissible_ask(rules, index))
    tools = list(dict.fromkeys(TOOLS[p] for p in TOOLS if permission_overlaps(rule.permission, p)))
    refused = False
    if permission_overlaps(rule.permission, "mcp__x__y") and rule.action != "allow":
        mcp_allowed = any(r.action == "allow" and r.permission.startswith("mcp__")
                          or r.action == "allow" and permission_overlaps(r.permission, "mcp__x__y")
                          for r in rules[:index])
        if rule.action == "deny" or mcp_allowed:
            refused = True
            out.refuse(rule, "it also names every MCP tool, which Claude Code cannot say")
        else:
            out.note(rule, "its MCP tools are left to Claude Code's default, which asks")
    elif permission_overlaps(rule.permission, "mcp__x__y"):
        out.note(rule, "not exported for MCP tools (Claude Code cannot name them all)")
    if not tools and not refused:
        out.drop(rule, "it names no tool Claude Code has")
    return tools


def _raise(why: str) -> list[str]:
    raise Unexpressible(why)


def _overridden(out: Exported, rules: list[Rule], index: int) -> None:
    """Say when the allow ``rules[index]`` comes after a stricter rule of its
    permission, which it may override in dm_cc but never in Claude Code."""
    rule = rules[index]
    if rule.action != "allow":
        return
    stricter = [r for r in rules[:index] if STRICTNESS[r.action] > 0
                and permission_overlaps(r.permission, rule.permission) and not catch_all(r)]
    if stricter:
        out.note(rule, f"after {stricter[-1].action} {stricter[-1].permission} "
                       f"{stricter[-1].pattern!r}: in Claude Code a deny or ask beats every "
                       "allow, so where both match it asks or denies (stricter)")
