"""The engine's vocabulary: actions, rules, requests, and which pattern language a
permission uses. Plain frozen data; compilation lives in ``engine.py``.

Which permissions exist is the tool catalog's business (``dm_cc/tools/catalog.py``:
each tool's permission) plus the two the engine and the loop make themselves
(:data:`EXTERNAL_DIRECTORY`, :data:`DOOM_LOOP`) and ``mcp__<server>__<tool>``. Which
pattern language a permission's rules are written in is the engine's contract
(DESIGN.md §1), so it is declared here; the catalog checks its entries against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Action = Literal["allow", "deny", "ask"]
ACTIONS: tuple[Action, ...] = ("allow", "deny", "ask")

# Strictness order used to combine verdicts: deny beats ask beats allow.
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}

#: A path outside the project: asked for besides the path's own request.
EXTERNAL_DIRECTORY = "external_directory"
#: The same tool call several times in a row (the loop adds this request).
DOOM_LOOP = "doom_loop"
#: A host a confined command connects to (the sandbox's network rules; ``*`` any).
NETWORK = "network"
#: Running a command the sandbox stopped again, unconfined (the loop asks this).
SANDBOX_ESCAPE = "sandbox_escape"
#: Permissions no tool owns: the engine, the loop and the sandbox make these requests.
ENGINE_PERMISSIONS = frozenset({EXTERNAL_DIRECTORY, DOOM_LOOP, NETWORK, SANDBOX_ESCAPE})

PATH_PERMISSIONS = frozenset({"read", "edit", "list", "glob", "grep", EXTERNAL_DIRECTORY})
SHELL_PERMISSIONS = frozenset({"bash"})
#: Requests that name a URL or a host: deny and ask rules match them ignoring case.
URL_PERMISSIONS = frozenset({"webfetch", NETWORK})
MCP_PREFIX = "mcp__"

Language = Literal["path", "shell", "name"]


def language_of(permission: str) -> Language:
    """The pattern language a request of ``permission`` is matched in."""
    if permission in PATH_PERMISSIONS:
        return "path"
    if permission in SHELL_PERMISSIONS:
        return "shell"
    return "name"


def is_mcp_permission(permission: str) -> bool:
    """``mcp__<server>__<tool>``: an MCP tool's permission is its full name."""
    return permission.startswith(MCP_PREFIX) and permission.count("__") >= 2


@dataclass(frozen=True, slots=True)
class Rule:
    """``(permission, pattern, action)``: the permission and pattern are wildcards.

    ``source`` says where the rule came from (``path/policy.yaml:12``,
    ``builtin:plan``, ``default``); ``reason`` is shown to the user and the model.
    """

    permission: str
    pattern: str
    action: Action
    reason: str | None = None
    source: str = "inline"
    # Rules are hashed as a whole list to find a compiled ruleset (engine.compiled):
    # computed once here, not field by field on every lookup.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, not {self.action!r}")
        object.__setattr__(self, "_hash", hash(
            (self.permission, self.pattern, self.action, self.reason, self.source)))

    def __hash__(self) -> int:
        return self._hash

    def describe(self) -> str:
        text = f"{self.action} {self.permission} {_quoted(self.pattern)} ({self.source})"
        return f"{text}: {self.reason}" if self.reason else text


def _quoted(pattern: str) -> str:
    """The pattern in quotes as written (a backslash escape shows once, not doubled)."""
    for quote in ("'", '"'):
        if quote not in pattern and pattern.isprintable():
            return f"{quote}{pattern}{quote}"
    return repr(pattern)


DEFAULT_RULE = Rule("*", "*", "ask", reason="no rule matched; dm_cc asks by default", source="default")


@dataclass(frozen=True, slots=True)
class Request:
    """One thing a tool call will do, in the engine's terms.

    ``pattern`` is canonical (a project-relative or absolute path, a normalised
    simple command, a URL …). ``aliases`` are other names of the same target (a
    symlink's target): every name is judged and the strictest verdict wins, so a
    deny on either denies and an allow needs both. ``words`` are the normalised
    words of a shell command (for flag-spelling-insensitive deny rules).
    ``allowable=False`` marks a request no rule can allow (a shell command the
    parser could not resolve statically); ``sensitive`` lists tokens an allow
    rule must spell out literally (``-exec``, ``NODE_OPTIONS``) to allow it.
    """

    permission: str
    pattern: str
    aliases: tuple[str, ...] = ()
    words: tuple[str, ...] | None = None
    allowable: bool = True
    sensitive: tuple[str, ...] = ()
    note: str | None = None
    always: str | None = field(default=None, compare=False)
    speculative: bool = False  # only a deny counts (a guessed inner command)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.pattern, *self.aliases)
