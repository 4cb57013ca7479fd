"""Static analysis of a bash command line: every command it runs, every file it touches.

``analyse(source)`` never raises and does no I/O. It parses with tree-sitter-bash and
reports each simple command as a :class:`SimpleCommand` (normalised words) and each
redirect target or file operand as a :class:`FileRef`. :func:`always_pattern` turns a
command's words into an "always allow" suggestion. This module is the public entry; the
work is done by:

* :mod:`shell_source` -- before parsing: backslash-newlines joined and ``<<-`` heredocs
  rewritten as bash reads them; the tree-sitter parse (non-ASCII bytes masked).
* :mod:`shell_words` -- syntax: one walk over the whole tree finds every simple command
  (lists, pipelines, subshells, substitutions, heredocs ...) and rebuilds its words with
  quotes and escapes removed, noting what only the running shell could know. The parser is
  not trusted blindly: text it drops or mangles makes the result dynamic.
* :mod:`shell_quoting` -- the :class:`Word` type and quote removal (``$'..'``, globs).
* :mod:`shell_commands` -- semantics: basename of the command name, git's global options,
  wrappers (both wrapper and inner command are reported), scripts parsed again
  (``bash -c``, ``eval``, heredocs fed to a shell), risky options as ``sensitive`` tokens,
  file operands as FileRefs. Two mixins of its analyser: :mod:`shell_builtins` (shells,
  interpreters, ``eval``, ``let``, ``cd`` ...) and :mod:`shell_arguments` (a program's
  arguments read with its ArgSpec).
* :mod:`shell_sed_awk` -- whether a sed or awk program runs commands or touches files.
* :mod:`shell_tables` -- the knowledge about particular programs; :mod:`flags` -- option
  scanning.

Conservative by construction: a command whose name or arguments cannot be known statically,
a parse error, an input over ``MAX_COMMAND_CHARS``, nesting deeper than ``MAX_DEPTH`` or a
script read from a pipe yields ``dynamic=True``, which no rule may allow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dm_cc.permissions.shell import tables
from dm_cc.permissions.shell.judge import (
    MAX_DEPTH,
    Analyser,
    FileRef,
    ShellAnalysis,
    SimpleCommand,
    lookup,
)

__all__ = ["MAX_COMMAND_CHARS", "MAX_DEPTH", "FileRef", "ShellAnalysis", "SimpleCommand",
           "always_pattern", "analyse"]

MAX_COMMAND_CHARS = 10_000


def analyse(source: str) -> ShellAnalysis:
    """Every command and file reference in ``source``; never raises."""
    analyser = Analyser(len(source))
    try:
        if len(source) > MAX_COMMAND_CHARS:
            analyser.dynamic(source, f"longer than {MAX_COMMAND_CHARS} characters")
        analyser.parse(source, 0)
    except Exception:  # noqa: BLE001 - the contract is "never raises"; fail closed
        analyser.dynamic(source, "internal error while analysing the command")
    return analyser.result()


_UNSAFE_WORD = re.compile(r"[\s*?\[\]{}$`'\"\\()<>|;&!#~=]")


def always_pattern(words: Sequence[str]) -> str:
    """An "always allow" suggestion: ``git commit -m x`` → ``git commit *``.

    Keeps as many leading words as ``ARITY`` says (default 1), stopping at an option or
    any word that is not plain text. Returns ``""`` when even the command name is unsafe
    to put in a pattern.
    """
    words = list(words)
    if not words or not words[0] or words[0][0] == "-" or _UNSAFE_WORD.search(words[0]):
        return ""
    key, arity = lookup(tables.ARITY, words)
    kept = list(key)
    for word in words[len(key):max(arity or 1, len(key))]:
        if not word or word[0] == "-" or _UNSAFE_WORD.search(word):
            break
        kept.append(word)
    return " ".join(kept) + " *"
