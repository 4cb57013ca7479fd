"""The plain data that flows down the pipeline: walk -> judge, and program facts -> judge.

:func:`~dm_cc.permissions.shell.walk.walk` yields, for one parsed script, a
:class:`Command` per simple command, a :class:`Noted` command it understood itself (a
declaration, an assignment), a :class:`FileUse` per redirect target, a :class:`Script` per
string bash will run as code, a :class:`Deferred` per value stored or evaluated later as
code, and :class:`Broken` last when the tree cannot be trusted or holds a construct
the analysis does not model.

The program modules (:mod:`.programs`, :mod:`.wrappers`, :mod:`.arguments`) read one
command's words and return an :class:`Outcome`: the effects of running it, in order --
a :class:`Command` it runs in turn, a :class:`Script` or :class:`Parse` (shell code), a
:class:`FileUse`, a :class:`Sensitive` token, an :class:`Opaque` part -- and a note
when what it does cannot be known. The judge applies them; none of these modules calls back into it.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

from typing import Literal, NamedTuple

from dm_cc.permissions.shell.quoting import Word

Access = Literal["read", "edit"]


class Stdin(NamedTuple):
    """Where a command's standard input comes from (a shell may read its script there)."""

    kind: Literal["heredoc", "herestring", "file", "pipe", "inherited"]
    script: str | None = None
    dynamic: bool = False


class Command(NamedTuple):
    """A simple command: its words, and what only its context tells."""

    words: list[Word]
    stdin: Stdin | None = None
    env: tuple[tuple[str, Word], ...] = ()  # risky assignments it runs with (LD_PRELOAD=x cmd)
    suspect: str | None = None  # why it cannot be trusted (found in text the parser broke)
    chdir: Word | None = None  # the directory it runs in (env -C DIR cmd)
    # another reading of a wrapper's words, offered to deny rules only (why it may run)
    guess: str | None = None
    # run with a redirect, heredoc or here-string: its own or an enclosing statement's
    redirected: bool = False


class Noted(NamedTuple):
    """A command the walk understood itself (``export``, ``X=$(..)``, ``[[ ]]``)."""

    words: list[Word]
    sensitive: tuple[str, ...] = ()
    note: str | None = None
    dynamic: bool = False
    suspect: str | None = None


class FileUse(NamedTuple):
    """A file read or written: a redirect target, an operand, an option's value."""

    word: Word
    access: Access


class Script(NamedTuple):
    """A string bash runs as shell code (``bash -c STRING``): parsed again when static."""

    word: Word
    suspect: str | None = None


class Parse(NamedTuple):
    """Shell code read as it stands (a heredoc body fed to a shell): parsed again."""

    text: str


class Sensitive(NamedTuple):
    """A token that makes the command sensitive (a risky option, ``-n`` of ``declare``)."""

    token: str


class Opaque(NamedTuple):
    """What the command runs or touches depends on something only the running program
    sees (``gcc @FILE`` reads more options from FILE): the command is dynamic."""

    note: str


class Deferred(NamedTuple):
    """Text bash may evaluate later as code: a value stored that could hold code
    (``x='a[$(cmd)]'``, ``read x``, ``for x in *``), or a place that evaluates a stored
    value (``(( x ))``, ``$(( x ))``, ``[[ x -eq 1 ]]``, ``a[x]``, ``${!x}``, ``${x@P}``,
    ``let``, ``declare -i``). Both in one line make it dynamic."""

    text: str
    stores: bool  # True: a value is stored; False: a stored value is evaluated
    code: str | None = None  # a stored static value holding a substitution (judged as code)


class Reach(NamedTuple):
    """A host a network client sends a request to: a URL operand, a proxy, a connect-to
    target (``curl URL``, ``curl -x PROXY``)."""

    word: Word


class Assigned(NamedTuple):
    """A shell variable set to a static value on its own (``c=rm``): a name that is not
    static (``$c -rf x``) is also read with it, for the deny rules."""

    name: str
    value: str


class Redirected(NamedTuple):
    """The script has a redirect, a heredoc or a here-string (once, at the first): what
    no command may carry (`> f`, `{ x=1; } 2>&1`) still makes a `redirect` request."""


class Broken(NamedTuple):
    """Last record of a walk whose parse failed or lost text (the script is unparsable),
    or whose tree holds a construct outside the modelled subset (``why`` says which):
    the line is dynamic, and its word scan is offered to the deny rules."""

    why: str = "the command could not be parsed"


Record = Command | Noted | FileUse | Script | Deferred | Assigned | Redirected | Broken
Effect = Command | Script | Parse | FileUse | Sensitive | Opaque | Reach


class Outcome(NamedTuple):
    """What a program's words mean: its effects in order, and a note when it is unknowable."""

    note: str | None = None
    effects: tuple[Effect, ...] = ()
