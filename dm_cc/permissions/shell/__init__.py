"""Static analysis of a bash command line: every command it runs, every file it touches.

``analyse(source)`` never raises and does no I/O. It parses with tree-sitter-bash and
reports each simple command as a :class:`SimpleCommand` (normalised words) and each
redirect target or file operand as a :class:`FileRef`. :func:`always_pattern` turns a
command's words into an "always allow" suggestion, and :func:`broad_command` says when a
pattern is as broad as a whole interpreter (:mod:`.suggest`). This module is the public entry; the
work is a one-way pipeline, each stage handing plain data to the next:

* **parse** -- :mod:`.source`: backslash-newlines joined and ``<<-`` heredocs rewritten as
  bash reads them, then the tree-sitter parse (non-ASCII bytes masked).
* **walk** -- :mod:`.walk`: one pass over the tree yields records (:mod:`.records`): each
  simple command (lists, pipelines, subshells, substitutions, heredocs ...) as words with
  quotes and escapes removed (:mod:`.quoting`), each redirect target, each string bash
  will run as code, each value stored or evaluated later as code (:mod:`.evaluation`).
  A node's text is asked by position (:mod:`.spans`), so nesting costs what it holds.
  The parser is not trusted blindly: text it drops or mangles makes the result dynamic.
* **judge** -- :mod:`.judge`: what the words mean. Scripts found on the way (``bash -c``,
  ``eval``, heredocs fed to a shell) go on a worklist and are parsed and walked in turn.
  The program modules say what a command does, as data: :mod:`.wrappers` (``sudo``,
  ``timeout`` ...), :mod:`.programs` (shells, interpreters, ``eval`` ...), :mod:`.arguments`
  (options and file operands, with :mod:`.flags` and :mod:`.sed_awk`); the facts about
  particular programs are the tables in :mod:`.tables`.

Start-up: importing the package builds only data -- the tables, a few classes; regular
expressions are compiled on first use and tree-sitter is imported at the first parse.
The judge (and the program modules and tables only it reads) is imported at the first
:func:`analyse`: what reads patterns without a command (``too_broad``, the engine's flag
rules, ``dm_cc approvals add``) does not load it.

Conservative by construction: a command whose name or arguments cannot be known statically,
a parse error, an input over ``MAX_COMMAND_CHARS``, nesting deeper than ``MAX_DEPTH`` or a
script read from a pipe yields ``dynamic=True``, which no rule may allow. The time taken is
linear in the input (docs/shell.md, "Bounded cost"): what could cost more is counted, and
past a count the line asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dm_cc.permissions.shell.results import FileRef, ShellAnalysis, SimpleCommand
from dm_cc.permissions.shell.source import HeredocBody, heredoc_bodies
from dm_cc.permissions.shell.suggest import always_pattern, broad_command, exact_pattern

if TYPE_CHECKING:
    from dm_cc.permissions.shell.judge import MAX_DEPTH

__all__ = ["MAX_COMMAND_CHARS", "MAX_DEPTH", "FileRef", "HeredocBody", "ShellAnalysis",
           "SimpleCommand", "always_pattern", "analyse", "broad_command", "exact_pattern",
           "heredoc_bodies"]

MAX_COMMAND_CHARS = 10_000


def analyse(source: str) -> ShellAnalysis:
    """Every command and file reference in ``source``; never raises."""
    from dm_cc.permissions.shell.judge import Judge  # at the first command: see above

    judge = Judge(len(source))
    try:
        if len(source) > MAX_COMMAND_CHARS:
            judge.dynamic(source, f"longer than {MAX_COMMAND_CHARS} characters")
        judge.run(source)
    except Exception:  # noqa: BLE001 - the contract is "never raises"; fail closed
        judge.dynamic(source, "internal error while analysing the command")
    return judge.result()


if not TYPE_CHECKING:  # for mypy, the import above is the name
    def __getattr__(name: str) -> object:
        """``MAX_DEPTH`` is the judge's: asking for it imports the judge (PEP 562)."""
        if name != "MAX_DEPTH":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from dm_cc.permissions.shell.judge import MAX_DEPTH

        return MAX_DEPTH
