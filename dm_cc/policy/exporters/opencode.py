"""A dm_cc policy → opencode ``opencode.json`` (its ``permission`` block).

opencode's rules are last-match-wins, like dm_cc's, but written as a JSON object:
a key (a permission, or a wildcard over permission names) holds its patterns in
order, and one key's patterns cannot be split around another's. So the block is
laid out as groups: the wildcard keys first (``*`` before ``server_*``), then each
permission, and every group also holds, in the policy's order, the rules of each
wildcard key that covers it. The last group whose key matches a permission then
holds every rule that can decide it, in the policy's order: the same last match.
The first key is ``"*": "ask"`` (what dm_cc decides when no rule matches: opencode's
own defaults allow most tools). Patterns change language for paths: opencode's
``*`` also crosses ``/`` (docs/exporters.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase

from dm_cc.permissions import Rule
from dm_cc.policy.exporters.model import (
    Exported,
    SaysNothing,
    Unexpressible,
    brace_expansions,
    catch_all,
    denies_again,
    said,
)

# dm_cc permission → opencode permission keys (opencode.ai/docs/permissions)
KEYS: dict[str, tuple[str, ...]] = {
    "bash": ("bash",),
    "edit": ("edit",),
    "read": ("read",),
    "list": ("list",),
    "glob": ("glob",),
    "grep": ("grep",),
    "external_directory": ("external_directory",),
    "webfetch": ("webfetch",),
    "task": ("task",),
    "doom_loop": ("doom_loop",),
    "todo": ("todowrite", "todoread"),
}
PATHS = frozenset({"edit", "read", "list", "glob", "grep", "external_directory"})
NOTHING: dict[str, str] = {
    "plan_exit": "opencode switches agents itself",
    "plan_enter": "opencode switches agents itself",
    "sandbox_escape": "opencode has no sandbox",
    "network": "opencode has no sandbox",
    "delete": "opencode has no transactions",
}

Item = tuple[str, str, str]    # (opencode key, pattern, action)


def _text(pattern: str, action: str) -> str:
    """A dm_cc wildcard's text in opencode's (no escapes): ``\\*`` and ``\\?`` can
    only be the wildcard there (wider: a deny or ask), a ``\\`` itself is plain."""
    if re.search(r"\\[*?]", pattern) and action == "allow":
        raise Unexpressible("a literal '*' or '?' is a wildcard in opencode")
    return re.sub(r"\\(.)", r"\1", pattern)


def path_patterns(pattern: str, action: str) -> list[str]:
    """A dm_cc path glob as opencode path wildcards (their ``*`` crosses ``/``;
    matched from the project root), matching exactly the same for an allow and
    at least as much for a deny or ask (Unexpressible when an allow cannot be)."""
    out: list[str] = []
    for one in brace_expansions(pattern):
        if re.search(r"(?<!\\)\[", one):
            if action == "allow":
                raise Unexpressible("a character class has no opencode spelling")
            one = re.sub(r"(?<!\\)\[[^\]]*\]", "?", one)
        text = _text(one, action)
        if text in ("*", "**"):
            out.append("*")
            continue
        name = "/" not in text
        body = text[2:] if text.startswith("./") else text
        if action == "allow" and not _exact(body, name):
            raise Unexpressible("opencode's '*' also crosses '/' (dm_cc's stays in one "
                                "directory): it would allow more")
        for variant in _doublestar(body, action):
            out.append(variant)
            if name and not text.startswith("./"):
                out.append("*/" + variant)        # a name at any depth
                if action != "allow":             # outside the project too
                    out += ["/" + variant, "/*/" + variant]
    return list(dict.fromkeys(out))


def _exact(body: str, name: bool) -> bool:
    """Whether opencode reads ``body`` as dm_cc does: wildcards only as whole ``**``
    segments (or a name's one leading ``*``: ``*.py``), no ``?``."""
    if "?" in body:
        return False
    if name:
        return "*" not in body[1:] and "**" not in body
    return all(segment == "**" or "*" not in segment for segment in body.split("/"))


def _doublestar(body: str, action: str) -> list[str]:
    """``a/**/b`` → ``a/*/b`` (and for a deny or ask also ``a/b``: dm_cc's ``**`` may
    be no directory at all, opencode's ``*/`` needs one character); ``a/**`` →
    ``a/*`` (and ``a``)."""
    variants = [body]
    while any("**" in v.split("/") for v in variants):
        done: list[str] = []
        for v in variants:
            parts = v.split("/")
            if "**" not in parts:
                done.append(v)
                continue
            at = parts.index("**")
            done.append("/".join(parts[:at] + ["*"] + parts[at + 1:]))
            if action != "allow" and len(parts) > 1:
                done.append("/".join(parts[:at] + parts[at + 1:]) or "/")
        variants = done
    return [re.sub(r"\*+", "*", v) for v in dict.fromkeys(variants)]


def _mcp_key(permission: str, action: str) -> str:
    server, _, tool = permission[len("mcp__"):].partition("__")
    if not server or not tool:
        raise Unexpressible("not mcp__<server>__<tool>")
    flat = f"{server}_{tool}"
    if action == "allow" and (flat.count("_") > 1 or any(c in server for c in "*?")
                              or tool not in ("*",) and any(c in tool for c in "*?")):
        raise Unexpressible("opencode's flat MCP name (<server>_<tool>) would also name "
                            "the tools of other splits at '_'")
    return flat


def opencode_items(rule: Rule) -> list[Item]:
    permission, pattern, action = rule.permission, rule.pattern, rule.action
    if permission in NOTHING:
        raise SaysNothing(NOTHING[permission])
    if permission == "*":
        if pattern in ("*", "**"):
            return [("*", "*", action), *_outside_asks(("*",), pattern, action)]
        if action == "allow":
            return _no("a pattern under every permission is read in each one's language")
        # a deny or ask: as every language reads it (wider is stricter) -- the path
        # permissions read `.env*` at any depth, opencode's wildcard from the start
        texts = [_text(pattern, action), *path_patterns(pattern, action)]
        return [("*", text, action) for text in dict.fromkeys(texts)]
    if permission.startswith("mcp__"):
        if pattern != "*":
            raise Unexpressible("opencode's MCP rules take no condition on the call's input")
        return [(_mcp_key(permission, action), "*", action)]
    if "*" in permission or "?" in permission:
        raise Unexpressible("a permission wildcard other than '*' and mcp__<server>__*")
    if permission not in KEYS:
        raise Unexpressible(f"opencode has no permission like dm_cc's {permission!r}")
    if permission not in PATHS:
        return [(key, _text(pattern, action), action) for key in KEYS[permission]]
    patterns = path_patterns(pattern, action)
    items: list[Item] = [(key, p, action) for key in KEYS[permission] for p in patterns]
    if any(p.startswith("*") for p in patterns):
        items += _outside_asks(KEYS[permission], pattern, action)
    return items


def _outside_asks(keys: tuple[str, ...], pattern: str, action: str) -> list[Item]:
    """After an allow of a path pattern dm_cc anchors in the project (``**``,
    ``**/x``, ``./**``), written as opencode's ``*…`` (which also matches the
    absolute path of a file outside it): an ask of every absolute path, so that what
    an ``external_directory`` allow opens is not allowed by it (dm_cc's ``**``
    reaches no file outside the project; its ``*`` and a bare name do, and keep
    theirs)."""
    anchored = pattern == "**" or ("/" in pattern and not pattern.startswith(("/", "~")))
    return [(key, "/*", OUTSIDE) for key in keys] if action == "allow" and anchored else []


#: The action of an :func:`_outside_asks` item until :func:`layout` settles it in
#: each group: deny when a rule before it there denies (a file outside the project an
#: earlier deny names stays denied), else ask.
OUTSIDE = "outside"


def _no(why: str) -> list[Item]:
    raise Unexpressible(why)


def _wider(rule: Rule) -> list[Item]:
    """A deny or ask as the whole of its permissions (``*``: every permission)."""
    if rule.permission.startswith("mcp__"):
        server = rule.permission[len("mcp__"):].partition("__")[0]
        return [(f"{server}_*" if server and "*" not in server else "*", "*", rule.action)]
    keys = KEYS.get(rule.permission, ("*",))
    return [(key, "*", rule.action) for key in keys]


def _wild(key: str) -> bool:
    return "*" in key or "?" in key


def layout(items: list[Item]) -> dict[str, dict[str, str]]:
    """The permission block: the wildcard groups (the most general first), then each
    key, every group with the rules of the wildcard keys that cover it, in order."""
    keys = list(dict.fromkeys(key for key, _, _ in items))
    wild = sorted((k for k in keys if _wild(k)), key=lambda k: len(k.replace("*", "")))
    block: dict[str, dict[str, str]] = {}
    for key in wild + [k for k in keys if not _wild(k)]:
        group: dict[str, str] = {}
        denied = False                            # a deny before, shadowed or not
        for k, pattern, action in items:
            if k == key or (_wild(k) and fnmatchcase(key, k)):
                if action == OUTSIDE:
                    action = "deny" if denied else "ask"
                denied = denied or action == "deny"
                group.pop(pattern, None)          # a later equal pattern shadows it
                group[pattern] = action
        block[key] = group
    return block


def export_opencode(rules: Sequence[Rule]) -> Exported:
    out = Exported("opencode")
    rules = list(rules)
    items: list[Item] = []
    if not rules or not catch_all(rules[0]):
        items.append(("*", "*", "ask"))          # dm_cc's answer when no rule matches
    written: dict[Rule, list[Item]] = {}
    for index, rule in enumerate(rules):
        written[rule] = said(out, rule, opencode_items, _wider)
        items += written[rule]
        for deny in denies_again(rules, index):
            items += written.get(deny, [])
    block = layout(items)
    shown: dict[str, object] = {key: group["*"] if list(group) == ["*"] else group
                                for key, group in block.items()}
    out.text = json.dumps({"$schema": "https://opencode.ai/config.json",
                           "permission": shown}, indent=2) + "\n"
    return out
