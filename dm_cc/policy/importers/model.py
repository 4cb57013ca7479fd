"""What an importer produces: plain data, rendered by render.py; what every
importer raises for a source rule it cannot express (:class:`Unexpressible`); and
the one rule for what then happens to it (:meth:`Imported.unsaid`).

An importer may be stricter than its source, never looser:

* an **allow** it cannot express is left out (dm_cc's defaults then ask), and said;
* a **deny or ask** it cannot express is written wider -- the whole tool, or the
  command's program -- and said (:meth:`Imported.widen`); when not even that can be
  said (a tool name it does not know, a rule it cannot read) it is *refused*
  (:meth:`Imported.refuse`): ``dm_cc policy import`` then writes nothing and exits
  1, unless ``--lossy`` leaves those rules out;
* a rule about something dm_cc does not have (a tool the source documents and
  dm_cc lacks, a mode dm_cc has no part like) decides nothing in dm_cc whatever
  its action (:class:`SaysNothing`): left out, and said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from dm_cc.errors import PolicyError


class Unexpressible(Exception):
    """A source rule dm_cc cannot say; the message says why. Raised and caught
    inside an importer, which widens, leaves out or refuses it (:meth:`Imported.unsaid`)."""


class InvalidSource(PolicyError):
    """A source file its own tool refuses to load (a Gemini CLI rule without a
    ``priority``): nothing of it is imported, whatever ``--lossy`` -- its tool would
    use none of its rules, and any guess at what the author meant could loosen it.
    ``dm_cc policy import`` exits 1, the message naming ``file:line`` and the rule."""


class SaysNothing(Unexpressible):
    """A source rule that decides nothing dm_cc does (a documented tool of the
    source that dm_cc does not have): left out whatever its action."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A rule, or (``permission`` None) a comment standing where a source rule that
    dm_cc cannot express was. ``comment`` names the source rule either way."""

    permission: str | None
    pattern: str = "*"
    action: str = "ask"
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class InlineTestEntry:
    tool: str
    input: str
    expect: str
    agent: str | None = None
    name: str | None = None
    comment: str | None = None        # written above the test


@dataclass(slots=True)
class Imported:
    """A policy read from another tool's file."""

    source: str                       # the file, as shown
    kind: str                         # "claude", "opencode"
    header: list[str] = field(default_factory=list)     # comment lines at the top
    rules: list[Entry] = field(default_factory=list)
    agents: dict[str, list[Entry]] = field(default_factory=dict)
    tests: list[InlineTestEntry] = field(default_factory=list)
    #: what was not imported (or imported only approximately), one line each
    dropped: list[str] = field(default_factory=list)
    #: deny or ask rules that could not be said, not even wider: the import fails
    #: unless --lossy (then they are left out, like ``dropped``)
    refused: list[str] = field(default_factory=list)

    def drop(self, entries: list[Entry], message: str) -> None:
        """Keep ``message`` as a comment in place and in the report."""
        self.dropped.append(message)
        entries.append(Entry(None, comment=f"NOT IMPORTED: {message}"))

    def refuse(self, entries: list[Entry], message: str) -> None:
        """A deny or ask left out: a loosening, so the import fails without --lossy."""
        self.refused.append(message)
        entries.append(Entry(None, comment=f"NOT IMPORTED, A LOOSENING (--lossy): {message}"))

    def unsaid(self, entries: list[Entry], action: str | None, message: str, *,
               says_nothing: bool = False) -> None:
        """A source rule with ``action`` (None: unknown) that cannot be said at all:
        an allow, or one that decides nothing in dm_cc, is left out; any other refused."""
        if says_nothing or action == "allow":
            self.drop(entries, message)
        else:
            self.refuse(entries, message)

    def widen(self, message: str, wider: str) -> None:
        """Report a deny or ask written ``wider`` than its source (stricter)."""
        self.dropped.append(f"{message}; written wider, as {wider} (stricter than the source)")

    def approximate(self, message: str) -> None:
        self.dropped.append(message)

    def unused(self, key: str, why: str) -> None:
        """Report a key of the source file the import does not use (``why``: what it
        means there and why nothing in dm_cc stands for it): every key is either
        imported or said, never passed over in silence."""
        self.dropped.append(f"{key}: not imported ({why})")


def may_meet(one: str, other: str) -> bool:
    """Whether two rules' permission names (``*`` a wildcard) may match the same
    permission -- surely not only when one is plain and the other does not match
    it. Which earlier rules a rule written wider may override (and so which are
    written again after it)."""
    if "*" not in one or "*" not in other:
        return fnmatchcase(one, other) or fnmatchcase(other, one)
    return True


def narrower(earlier: str, wider: str) -> str:
    """An earlier rule's permission or pattern written again after a wider rule:
    its own, or the wider rule's where the earlier's is ``*`` -- the requests both
    reach are all among those it matches, and the rules after the wider one that
    the earlier did not reach (another permission's) stay in force."""
    return wider if earlier == "*" else earlier


# --------------------------------------------------------------------------- shell


def literal_command(text: str) -> str:
    """Text matched literally by a dm_cc shell pattern (``\\``, ``?``, ``*`` escaped)."""
    return re.sub(r"([\\?*])", r"\\\1", text)


def denial_pattern(pattern: str, *, shell_text: bool = True) -> str:
    """A deny or ask shell pattern as dm_cc judges commands, so it matches what the
    source's matched: quotes left out (dm_cc judges a command with its quotes
    removed: ``git commit -m "wip"`` is ``git commit -m wip``), spaces as one (and
    none before the program), and the program by its name (``/usr/bin/rm`` and
    ``./rm`` are judged as ``rm``: a pattern naming the path would never match).
    ``shell_text`` False: the pattern is made of argument values already unquoted
    (Codex tokens), whose quote characters are literal text and stay."""
    if shell_text:
        pattern = pattern.replace('"', "").replace("'", "")
    pattern = re.sub(r"\s+", " ", pattern).lstrip()
    program, space, rest = pattern.partition(" ")
    if "/" in program and program.rstrip("/"):
        program = program.rstrip("/").rsplit("/", 1)[1]
    return program + space + rest


_PROGRAM = re.compile(r"[A-Za-z0-9_.+/-]+(?=$|[\s:])")


def program_pattern(command: str) -> str:
    """The widest reading a deny or ask of ``command`` keeps: its program and any
    arguments (``git *``, as :func:`denial_pattern` judges it); ``*`` (every command)
    when it does not start with a plain program name."""
    program = _PROGRAM.match(command.strip())
    return denial_pattern(program.group() + " *") if program else "*"


# --------------------------------------------------------------------------- MCP

# What dm_cc makes of a character outside its MCP name alphabet: ``_`` (as
# dm_cc/mcp/names.py names a server's tools; policy/ may not import mcp/, so the
# fact is pinned by tests/policy/importers/test_importers_fail_closed.py).
_OUTSIDE_MCP_NAME = re.compile(r"[^A-Za-z0-9_*-]")


def mcp_permission(server: str, tool: str) -> str:
    """The dm_cc permission of ``tool`` of MCP server ``server`` as the bridge names
    it (a character outside its alphabet becomes ``_``; ``*`` stays a wildcard)."""
    return f"mcp__{server}__{_OUTSIDE_MCP_NAME.sub('_', tool) or '_'}"


def mcp_wildcard(flat: str) -> str:
    """A permission wildcard for every dm_cc MCP tool whose flat name
    ``<server>_<tool>`` the source's wildcard ``flat`` matches (any ``_`` may part
    server and tool): wider than the source, for a deny or ask."""
    return re.sub(r"\*+", "*", "mcp__" + _OUTSIDE_MCP_NAME.sub("_", flat).replace("_", "*"))
