"""What "always allow" remembers of a command, and whether a command pattern is as broad
as a whole interpreter (docs/shell.md, "Always allow" suggestions).

The narrowest rule that covers the call and still generalises usefully, by what the
program is (the facts are the tables of :mod:`.tables.suggestions`):

* an interpreter or shell runs its first operand: the rule keeps its options and that
  operand, the program it runs (``bash setup.sh`` -> ``bash setup.sh *``, ``python3 -m
  pytest -q`` -> ``python3 -m pytest *``). Code given inline (``python3 -c …``) is a
  one-off: nothing is remembered -- for a shell's ``-c`` and ``eval``, whose code is
  judged command by command anyway, the exact line. A program read from stdin, or
  options the table cannot read: nothing (even the exact line could run whatever comes
  on stdin);
* a program whose ordinary use destroys or publishes (``rm``, ``git push`` …): the exact
  command (``rm -rf build``);
* anything else keeps as many leading words as ``ARITY`` says (``git log *``).

Every rule is a literal prefix of the call's words then `` *``, or the exact call: it
covers the call, and a word of it never holds a space or a wildcard, so it cannot be
read as naming another script.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Literal, NamedTuple

from dm_cc.permissions.shell.programs import dev_fd, stdin_script, versioned_interpreter
from dm_cc.permissions.shell.tables import lookup
from dm_cc.permissions.shell.tables.interpreters import (
    INLINE_CODE_BY_FAMILY,
    INLINE_CODE_OPTS,
    INTERPRETERS,
    SHELLS,
)
from dm_cc.permissions.shell.tables.suggestions import (
    ARITY,
    EXACT,
    RUNNER_OPTIONS,
    SH_FAMILY,
    SH_FLAG_LETTERS,
    SH_LONG_FLAGS,
    SH_VALUE_LONG,
    RunnerOptions,
)

__all__ = ["always_pattern", "broad_command", "exact_pattern"]

#: Programs that run the file named first (bash(1) "SHELL BUILTIN COMMANDS": source, .).
SOURCING = frozenset({"source", "."})
#: Front ends whose first word may be a subcommand: ``deno run x.ts`` runs x.ts, ``deno
#: test`` and ``R CMD BATCH`` are subcommands (read by ``ARITY``), ``deno eval CODE`` is
#: inline code.
FRONT_ENDS = frozenset({"deno", "bun", "R"})


class Reading(NamedTuple):
    """How a runner's words read: ``program``: its program is ``words[:end]``'s last
    word; ``inline``: the code is on the command line; ``stdin``: the program comes
    from stdin (no operand, ``-``, ``/dev/stdin``); ``unknown``: an option it cannot
    read."""

    kind: Literal["program", "inline", "stdin", "unknown"]
    end: int = 0


@cache
def _unsafe_word() -> re.Pattern[str]:
    """A character no generalised suggestion may contain (compiled once, on first use)."""
    return re.compile(r"[\s*?\[\]{}$`'\"\\()<>|;&!#~=]")


@cache
def _not_plain() -> re.Pattern[str]:
    """A space (as ``str.isspace`` says: ``\\s`` is the same set), a wildcard, an escape."""
    return re.compile(r"[\s*?\\]")


def _plain(word: str) -> bool:
    """A word that reads as itself in a pattern and cannot be split into two: no space,
    no wildcard, no escape."""
    return bool(word) and _not_plain().search(word) is None


def exact_pattern(words: Sequence[str], *, spaces: bool = False) -> str:
    """The command as a pattern that matches only itself; ``""`` when a word holds a
    space (``rm -rf "a b"`` would read as ``rm -rf a b``) -- unless ``spaces``, for code
    judged command by command anyway -- or a wildcard."""
    readable = _unwild if spaces else _plain  # (a plain word holds no wildcard either)
    if not words or not all(readable(w) for w in words):
        return ""
    return " ".join(words)


@cache
def _wildcard() -> re.Pattern[str]:
    """A wildcard or an escape (compiled once, on first use)."""
    return re.compile(r"[*?\\]")


def _unwild(word: str) -> bool:
    """A word with no wildcard and no escape (it may hold a space)."""
    return bool(word) and _wildcard().search(word) is None


def always_pattern(words: Sequence[str], sensitive: Sequence[str] = ()) -> str:
    """The rule "always" would keep for a command of these ``words``; ``""``: none.

    ``sensitive``: tokens an allow must spell out (``-exec``): the exact command."""
    words = list(words)
    if not words or not words[0]:
        return ""
    if sensitive:
        return exact_pattern(words)
    reading = runner_reading(words)
    if reading is not None:
        return _runner_pattern(words, reading)
    if lookup(EXACT, words)[1] is not None:
        return exact_pattern(words)
    return _arity_pattern(words) or exact_pattern(words)


def _runner_pattern(words: list[str], reading: Reading) -> str:
    if reading.kind == "program":
        program = words[reading.end - 1]
        if stdin_script(program) or dev_fd(program):
            return ""
        kept = words[:reading.end]
        if all(_plain(w) for w in kept):  # python3 -m pip install x: pip's own arity too
            key, arity = lookup(ARITY, words[reading.end - 1:])
            for word in words[reading.end:reading.end - 1 + max(arity or 1, len(key))]:
                if not word or word[0] == "-" or _unsafe_word().search(word):
                    break
                kept.append(word)
            return " ".join(kept) + " *"
        return exact_pattern(words)
    if reading.kind == "inline":  # a shell's or eval's code is judged command by command
        judged = words[0] in SHELLS or words[0] == "eval"
        return exact_pattern(words, spaces=True) if judged else ""
    return ""   # stdin, or options it cannot read: even the exact line may run anything


def _arity_pattern(words: list[str]) -> str:
    """As many leading words as ``ARITY`` says (default 1), stopping at an option or
    any word that is not plain text; ``""`` when the name itself is not."""
    unsafe = _unsafe_word()
    if words[0][0] == "-" or unsafe.search(words[0]):
        return ""
    key, arity = lookup(ARITY, words)
    kept = list(key)
    for word in words[len(key):max(arity or 1, len(key))]:
        if not word or word[0] == "-" or unsafe.search(word):
            break
        kept.append(word)
    return " ".join(kept) + " *"


# --------------------------------------------------------------------------- reading

def runner_reading(words: Sequence[str]) -> Reading | None:
    """How the words of a program that runs its first operand read; None for any other
    program (and for a front end's subcommand, ``deno test``)."""
    name = words[0]
    if name in SOURCING:
        return Reading("program", 2) if len(words) > 1 else Reading("stdin")
    if name == "eval":
        return Reading("inline")
    if name in SHELLS:
        return _shell_reading(words)
    if name not in INTERPRETERS and not versioned_interpreter(name):
        return None
    family = name.rstrip("0123456789.")
    start = 1
    if family in FRONT_ENDS and len(words) > 1 and words[1][:1] != "-":
        if words[1] == "eval":
            return Reading("inline")
        if words[1] != "run":
            return None
        start = 2
    inline = INLINE_CODE_BY_FAMILY.get(family, INLINE_CODE_OPTS)
    return _interpreter_reading(words, start, RUNNER_OPTIONS.get(family, RunnerOptions()),
                                inline - RUNNER_OPTIONS.get(family, RunnerOptions()).program)


def _interpreter_reading(words: Sequence[str], i: int, options: RunnerOptions,
                         inline: frozenset[str]) -> Reading:
    """An interpreter's options, then its program (python(1): ``-c`` ends the options
    with code, ``-m`` with a module, ``-`` or nothing reads stdin, ``--`` ends them)."""
    n = len(words)
    while i < n:
        word = words[i]
        if word == "--":
            return Reading("program", i + 2) if i + 1 < n else Reading("stdin")
        if word[:1] != "-" or word == "-":
            return Reading("program", i + 1) if word != "-" else Reading("stdin")
        name = word.split("=", 1)[0] if word.startswith("--") else word
        if name in inline:
            return Reading("inline")
        if name in options.program:
            if "=" in word:
                return Reading("program", i + 1)
            return Reading("program", i + 2) if i + 1 < n else Reading("unknown")
        if word in options.valued:
            i += 2
        elif word in options.flags or (word.startswith("--") and "=" in word):
            i += 1
        elif options.clusters and len(word) > 2 and word[1] != "-":
            step = _cluster(word, words, i, options, inline)
            if isinstance(step, Reading):
                return step
            i += step
        elif word[:2] in inline and word[1] != "-":   # -cCODE, -eCODE
            return Reading("inline")
        else:
            return Reading("unknown")
    return Reading("stdin")


def _cluster(word: str, words: Sequence[str], i: int, options: RunnerOptions,
             inline: frozenset[str]) -> int | Reading:
    """Single-letter options together (``-uB``, ``-Wignore``, ``-um pytest``), read as
    getopt(3) reads them: how many words they take, or how the command reads."""
    for j, letter in enumerate(word[1:], start=2):
        option, rest = "-" + letter, word[j:]
        if option in inline:
            return Reading("inline")
        if option in options.program:
            if rest:
                return Reading("program", i + 1)
            return Reading("program", i + 2) if i + 1 < len(words) else Reading("unknown")
        if option in options.valued:
            return 1 if rest else 2
        if option not in options.flags:
            return Reading("unknown")
    return 1


def _shell_reading(words: Sequence[str]) -> Reading:
    """A shell's options, then its script (bash(1) "INVOCATION": ``-c`` takes code,
    ``-s`` or no operand reads stdin, ``-o``/``-O`` in a cluster each take the next
    word, ``-`` and ``--`` end the options). Shells not of the sh family (fish, csh):
    no option is read."""
    i, n = 1, len(words)
    sh = words[0] in SH_FAMILY
    while i < n:
        word = words[i]
        if word in ("-", "--"):
            i += 1
            break
        if word[:1] not in "-+" or len(word) < 2:
            break
        if not sh:
            return Reading("unknown")
        if word in SH_VALUE_LONG:
            i += 2
            continue
        if word.startswith("--"):
            if word not in SH_LONG_FLAGS:
                return Reading("unknown")
            i += 1
            continue
        taken = 0
        for letter in word[1:]:
            if letter == "c" and word[0] == "-":
                return Reading("inline")
            if letter == "s":
                return Reading("stdin")
            if letter in "oO":
                taken += 1
            elif letter not in SH_FLAG_LETTERS:
                return Reading("unknown")
        i += 1 + taken
    return Reading("program", i + 1) if i < n else Reading("stdin")


# --------------------------------------------------------------------------- breadth

def broad_command(literal: Sequence[str]) -> str | None:
    """Why a command pattern is as broad as a whole interpreter, or None; ``literal``:
    its words before the first one with a wildcard (the pattern goes on past them).

    Broad: every command (no literal word), or a shell or interpreter left to run a
    program or code the pattern does not name (``bash *``, ``python3 -u *``, ``python3
    -c *``, ``eval *``, ``source *``). Not broad: a pattern naming the program (``bash
    setup.sh *``) or another program (``git log *``, ``sudo *``: what they run is a
    command of its own, judged by its own rules)."""
    if not literal:
        return "matches any command"
    reading = runner_reading(literal)
    if reading is None:
        return None
    name = literal[0]
    if reading.kind == "inline":
        return f"lets {name} run any code given on its command line"
    if reading.kind == "program" and reading.end <= len(literal):
        return None
    return f"lets {name} run any script or code, not one named program"
