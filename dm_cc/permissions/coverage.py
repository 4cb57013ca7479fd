"""What rules' patterns can match, read without a request: for ``dm_cc policy lint``.

* :func:`covers` -- does a rule match every request another one matches? (a later
  rule that does silences the earlier one: last match wins);
* :func:`names_a_permission` -- can a rule for a permission wildcard apply at all?
* :func:`arguments_fault` -- an MCP tool's arguments pattern that can never match,
  or an allow of one that can never allow;
* :func:`too_broad` -- is an allow of a pattern as broad as a whole interpreter
  (``bash *``, ``*``, ``edit **``)? Asked before an approval is saved.

Coverage is judged conservatively, as the engine matches: sound, not complete (a
deny or ask shell rule also matches other flag spellings, which only ``*`` or ``<its
command> *`` surely cover; a deny or ask path rule also matches other letter cases,
which only an allow without letters, like ``**`` or ``**/*``, surely covers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from dm_cc.permissions.patterns import (
    UNIVERSAL_PATHS,
    PathContext,
    PathGlob,
    Wildcard,
    is_literal,
    parse_conditions,
    path_subject,
    split_wildcard,
    spoofable,
    unescaped_prefix,
)
from dm_cc.permissions.rules import MCP_PREFIX, NAMED_ONLY, Action, Language, Rule
from dm_cc.permissions.shell import broad_command
from dm_cc.permissions.shell.flags import compile_flag_rule

ArgumentsFault = Literal["never-matches", "never-allows"]


def _wild(text: str) -> bool:
    return any(ch in text for ch in "*?")


def _literal_prefix(pattern: str) -> str:
    cut = min((i for i in (pattern.find("*"), pattern.find("?")) if i >= 0), default=len(pattern))
    return pattern[:cut]


def _star_prefix(pattern: str) -> str | None:
    """``P`` when the pattern is a literal ``P`` then one trailing ``*``, else None."""
    pieces = split_wildcard(pattern)
    if len(pieces) == 2 and not pieces[1] and None not in pieces[0]:
        return "".join(ch for ch in pieces[0] if ch is not None)
    return None


def _text_covers(broad: str, narrow: str) -> bool:
    """Does every text ``narrow`` matches also match ``broad``? (sound, not complete)"""
    if broad == narrow or broad == "*":
        return True
    if is_literal(narrow):
        return Wildcard(broad).match(unescaped_prefix(narrow))
    prefix = _star_prefix(broad)
    # every text narrow matches starts with its literal prefix (or is that prefix less a
    # trailing space, when narrow's ` *` is optional; then broad's is optional too)
    return prefix is not None and unescaped_prefix(narrow).startswith(prefix)


def _flag_spellings_covered(broad: str, narrow: str) -> bool:
    """A deny/ask shell rule ``narrow`` also matches its command under other flag
    spellings (``git push *`` catches ``git -C x push``); all of them start with its
    command's name, so only ``*`` or ``<name> *`` (or a star after a prefix of the
    name) surely covers them."""
    flags = compile_flag_rule(narrow)
    if flags is None or broad == "*":
        return True
    name = flags.head[0]
    prefix = _star_prefix(broad)
    return "\\" not in name and prefix is not None and (
        name.startswith(prefix) or prefix == name + " ")


def _path_covers(broad: str, narrow: str) -> bool:
    if broad == narrow or broad == "*":
        return True
    relative = "/" in narrow and not narrow.startswith(("/", "~"))
    if broad == "**":
        return relative and "{" not in narrow
    if broad == "**/*":  # every project path but the root itself
        return relative and "{" not in narrow and any(
            segment not in ("**", "", ".") for segment in narrow.split("/"))
    if not _wild(narrow) and "{" not in narrow and "[" not in narrow:
        context = PathContext(root="/project", home="/home/user")
        return PathGlob(broad, context).match(path_subject(narrow, context))
    if broad.endswith("/**") and not _wild(broad[:-3]) and "{" not in broad:
        return _literal_prefix(narrow).startswith(broad[:-2])
    return False


def _cased(pattern: str) -> bool:
    """Could another letter case of a path escape this pattern? (``~`` is a home path)"""
    return pattern.startswith("~") or any(ch.lower() != ch.upper() for ch in pattern)


def covers(later: Rule, earlier: Rule, language_of: Callable[[str], Language]) -> bool:
    """Does ``later`` surely match every request ``earlier`` matches (sound, not
    complete)? ``language_of`` says what language a permission's patterns are
    written in (the tool catalog's)."""
    if not _text_covers(later.permission, earlier.permission) or (
            earlier.permission in NAMED_ONLY and later.permission != earlier.permission):
        return False  # (a wildcard permission does not cover these)
    permission = earlier.permission if not _wild(earlier.permission) else later.permission
    if _wild(permission):  # patterns in different languages: only `*` surely covers
        return later.pattern == "*"
    language = language_of(permission)
    if language == "path":
        if earlier.action != "allow" and later.action == "allow" and _cased(later.pattern):
            return False  # the deny/ask also decides other letter cases, the allow does not
        return _path_covers(later.pattern, earlier.pattern)
    if language != "shell" and "\\" in later.pattern + earlier.pattern:
        # backslashes escape only in shell patterns: compare such others only plainly
        return later.pattern in (earlier.pattern, "*")
    if not _text_covers(later.pattern, earlier.pattern):
        return False
    if language == "shell" and earlier.action != "allow" and later.action == "allow":
        return _flag_spellings_covered(later.pattern, earlier.pattern)
    return True


def names_a_permission(wildcard: str, known: Iterable[str]) -> bool:
    """Can a rule whose permission is ``wildcard`` apply to anything: one of the
    ``known`` permissions, or an MCP tool's (``mcp__*``, ``m*``)?"""
    prefix = _literal_prefix(wildcard)
    matcher = Wildcard(wildcard, escapes=False)
    return any(matcher.match(p) for p in known) or MCP_PREFIX.startswith(prefix) \
        or prefix.startswith(MCP_PREFIX)


def _json_object(text: str) -> bool:
    import json  # only MCP rules need it

    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def arguments_fault(pattern: str, action: Action) -> ArgumentsFault | None:
    """What keeps an MCP tool's arguments pattern from doing what it says:
    ``never-matches`` when it is neither conditions over top-level keys nor a
    wildcard over the arguments' JSON text (which starts with ``{``);
    ``never-allows`` for an allow written as such a wildcard, which a nested value
    could meet (it is withheld: asks). None when neither."""
    if pattern == "*" or parse_conditions(pattern) is not None:
        return None
    if not pattern.startswith(("{", "*", "?")) or (is_literal(pattern) and not _json_object(pattern)):
        return "never-matches"
    if action == "allow" and spoofable(pattern):
        return "never-allows"
    return None


def too_broad(pattern: str, language: Language) -> str | None:
    """Why an allow of ``pattern`` (read in ``language``) is as broad as a whole
    interpreter -- it lets a shell or interpreter run any program or code (``bash *``,
    ``python3 -c *``), or matches every command, path or URL (``*``, ``**``,
    ``https://*``) -- or None. A name's ``*`` (every call of one MCP tool, any
    subagent) is not: it names one tool. The REPL and ``dm_cc approvals add`` ask
    before saving such a rule."""
    if language == "shell":
        words = pattern.split()
        literal = []
        for word in words:
            if not is_literal(word):
                break
            literal.append(unescaped_prefix(word))
        return None if len(literal) == len(words) else broad_command(literal)
    if language == "path":
        if pattern in UNIVERSAL_PATHS:
            return "matches every path in the project"
        if "*" in pattern and set(pattern) <= set("*/~."):
            return "matches every path" + (" in your home directory"
                                           if pattern.startswith("~") else "")
        return None
    if language == "url":
        rest = pattern
        for scheme in ("https://", "http://", "http*://", "*://"):
            rest = rest.removeprefix(scheme)
        if "*" in rest and set(rest) <= set("*?/ "):
            return "matches every URL"
    return None   # a name (a subagent, an MCP tool's arguments): `*` is that one tool's
