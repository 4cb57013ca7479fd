"""The engine's vocabulary: actions, rules, requests, pattern languages and effects.
Plain frozen data; compilation lives in ``engine.py``.

Which permissions exist, what pattern language each is written in and what each
does (its effects) is the tool catalog's business (``dm_cc/tools/catalog.py``: each
tool's permission, request kind and effects), plus the permissions the engine, the
loop and the sandbox make themselves (declared here with their language and effects)
and ``mcp__<server>__<tool>``. A request carries the language of what it names (a
path, a command, a URL …), set where it is made from the kind of the tool's
argument, so the engine matches rules against it without a table of tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from dm_cc.permissions.secrets import Secret

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
#: A file or directory a command removed (a transaction's effect; a changed or
#: created one is an ``edit``), judged before the removal lands (docs/sandbox.md).
DELETE = "delete"
#: A shell command run with a redirection, a heredoc or a here-string (its own, or an
#: enclosing compound command's: ``{ a; b; } > f``), named as the command's ``bash``
#: request is (``redirect git status *``). Only that there is one: the files it
#: reads or writes are ``read`` and ``edit`` requests of their own. The built-in
#: defaults allow it; a rule can ask where a command may run but not redirected (a
#: Gemini CLI rule without ``allowRedirection``: docs/importers.md).
REDIRECT = "redirect"
#: Permissions no tool owns: the engine, the loop and the sandbox make these requests.
ENGINE_PERMISSIONS = frozenset({EXTERNAL_DIRECTORY, DOOM_LOOP, NETWORK, SANDBOX_ESCAPE, DELETE,
                                REDIRECT})
#: Permissions only a rule naming them decides: a wildcard permission (``*``,
#: ``re*``) does not cover them. A ``redirect`` adds a question about a command every
#: effect of which its other requests already judge, so a policy's ``* * ask`` or ``*
#: * deny`` (or a read-only agent's ceiling) must not turn it into a new question.
NAMED_ONLY = frozenset({REDIRECT})

#: Permissions whose approvals last one session and are never saved (the value: why),
#: whatever answered: the REPL offers no "always" for them, the loop keeps such an
#: answer for the session, and the approval store refuses them (docs/approvals.md).
NEVER_SAVED: dict[str, str] = {
    DOOM_LOOP: "a repetition guard turned off for good would stay off for every later "
               "call of that tool",
    SANDBOX_ESCAPE: "what a command does outside the sandbox depends on files the project "
                    "(and the model, inside the sandbox) can change; to let a command out "
                    "for good, write a sandbox_escape allow rule in your own policy file",
}

MCP_PREFIX = "mcp__"

#: How a request's pattern is read (DESIGN.md §1): ``path`` globs, ``shell`` commands,
#: ``url`` (a URL or a host: names whose deny and ask rules also match ignoring case),
#: ``name`` (everything else: the shell-command wildcard).
Language = Literal["path", "shell", "url", "name"]
#: The languages of the permissions the engine, the loop and the sandbox own; a
#: tool's permission has the language of its argument's kind (the tool catalog).
#: A ``sandbox_escape`` names a command, read as bash rules read it (each simple command).
ENGINE_LANGUAGES: dict[str, Language] = {EXTERNAL_DIRECTORY: "path", NETWORK: "url",
                                         SANDBOX_ESCAPE: "shell", DELETE: "path",
                                         REDIRECT: "shell"}

#: What a tool (or a request) may do to the machine, beyond answering the model:
#: ``read`` files, ``write`` them, ``execute`` programs, reach the ``network``,
#: ``delegate`` to another agent, ``switch`` the session's agent, ``escape`` the
#: sandbox. Rights are derived from these (an agent that ``reads_only``), never
#: from a list of tools someone must remember to extend.
Effect = Literal["read", "write", "execute", "network", "delegate", "switch", "escape"]
EFFECTS: frozenset[Effect] = frozenset(
    ("read", "write", "execute", "network", "delegate", "switch", "escape"))
READS: frozenset[Effect] = frozenset({"read"})
#: The effects of the permissions the engine, the loop and the sandbox own.
ENGINE_EFFECTS: dict[str, frozenset[Effect]] = {
    EXTERNAL_DIRECTORY: READS,          # a location: its path's own request says what is done
    DOOM_LOOP: frozenset(),             # a repetition, asked about, not an action
    NETWORK: frozenset({"network"}),
    SANDBOX_ESCAPE: frozenset({"escape", "execute"}),
    DELETE: frozenset({"write"}),
    REDIRECT: READS,                    # its files' own requests say what is read or written
}


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
#: What a request of a NAMED_ONLY permission no rule names gets: a ``redirect`` is
#: allowed (its command and files are judged by their own requests).
UNNAMED_RULES: dict[str, Rule] = {
    REDIRECT: Rule(REDIRECT, "*", "allow", reason="no rule names redirect: a redirection's "
                   "command and files are judged by their own requests", source="default"),
}


def default_rule(permission: str) -> Rule:
    """The rule a request of ``permission`` gets when no rule matches it."""
    return UNNAMED_RULES.get(permission, DEFAULT_RULE)


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
    rule must spell out literally (``-exec``, ``NODE_OPTIONS``) to allow it;
    ``protected`` says why an edit of this path is only allowed by an exact rule of
    the person's own (a file that makes code run later); ``secret`` the credential
    store the path is in (opened only by a rule of the person's own naming it).
    """

    permission: str
    pattern: str
    aliases: tuple[str, ...] = ()
    words: tuple[str, ...] | None = None
    allowable: bool = True
    sensitive: tuple[str, ...] = ()
    note: str | None = None
    #: What "always allow" remembers (a shell command's suggestion); None: the pattern
    #: itself; "": nothing -- no rule can name it safely (inline code, a word with a space).
    always: str | None = field(default=None, compare=False)
    speculative: bool = False  # only a deny counts (a guessed inner command)
    # How ``pattern`` is read; None: the engine's own permissions' language, else a name.
    language: Language | None = None
    #: Other names of what a shell request runs, each as its words (``npm publ`` is
    #: ``npm publish``; ``RM`` is ``rm`` where the filesystem folds case; ``pip3.11`` is
    #: ``pip``): a deny or ask rule matching one decides the request when it comes later
    #: in the stack than the rule deciding the name as written. So a deny on a program
    #: holds for all its names, an allow is never widened by one, and a later allow of
    #: the written name stands (``deny python *`` then ``allow python3 *``).
    other_names: tuple[tuple[str, ...], ...] = ()
    #: Why writing this path makes code run later (``dm_cc.permissions.protected``):
    #: only an exact rule of the person's own opens it. None: not a protected path.
    protected: str | None = None
    #: The secret store this path is in (``dm_cc.permissions.secrets``): only a rule of
    #: the person's own naming the path exactly, or the store itself, opens it.
    secret: Secret | None = None

    @property
    def reading(self) -> Language:
        """The pattern language this request is matched in."""
        if self.language is not None:
            return self.language
        return ENGINE_LANGUAGES.get(self.permission, "name")

    @property
    def names(self) -> tuple[str, ...]:
        return (self.pattern, *self.aliases)
