"""Every name of a command: what deny and ask rules also see besides the words as written.

:func:`other_names` reads a command's words (its name already reduced to a basename)
and returns the other words the same command answers to, from the tables of
:mod:`.tables.program_names`:

* **case** -- the name in lower case: on a filesystem that folds case (macOS, Windows)
  ``RM`` runs ``rm``; stricter everywhere, and never a reason to allow;
* **versioned names** -- ``pip3.11`` is also ``pip3`` and ``pip``;
* **other program names** -- ``nodejs`` is ``node``, ``docker-compose`` is
  ``docker compose``; git's dashed form ``git-push`` is ``git push``;
* **git's autocorrection** -- an unknown git command (``git psuh``) is run as the one
  it is most like when ``help.autocorrect`` is set, which the line may not show;
* **subcommand aliases** -- npm's (``npm rm`` is ``npm uninstall``; its unique
  prefixes: ``npm publ`` is ``npm publish``), pnpm's, cargo's, docker's and podman's.

The request keeps the words as written (what is shown, what "always allow" remembers);
the gate judges the other names by the deny and ask rules that come after the rule
deciding the written name (:attr:`dm_cc.permissions.rules.Request.other_names`).
Pure; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from functools import cache, lru_cache

from dm_cc.permissions.shell.tables import first_words, lookup
from dm_cc.permissions.shell.tables.program_names import (
    DASHED,
    GIT_COMMANDS,
    GIT_EDIT_WEIGHTS,
    GIT_SIMILARITY_FLOOR,
    NPM_ALIASES,
    NPM_COMMANDS,
    PROGRAM_ALIASES,
    SUBCOMMAND_NAMES,
    VERSION_SUFFIX,
    VERSIONED,
)

Words = tuple[str, ...]


@cache
def _versioned() -> re.Pattern[str]:
    """``NAME`` + version (compiled once, on first use)."""
    families = "|".join(sorted(VERSIONED, key=len, reverse=True))
    return re.compile(f"({families}){VERSION_SUFFIX}")


def program_names(name: str) -> list[Words]:
    """The program name's own other names (lower case, unversioned, git-X, nodejs ...),
    as the words each amounts to; the first is the name to dispatch on."""
    found: list[Words] = []
    lower = name.lower()
    found.append((lower,))
    if (versioned := _versioned().fullmatch(lower)) is not None:
        family, major = versioned.group(1), versioned.group(2)
        found += [(family + major,), (family,)]
    for base in list(found):
        if (alias := PROGRAM_ALIASES.get(base[0])) is not None:
            found.append(alias)
    for program, prefix in DASHED.items():
        if lower.startswith(prefix) and len(lower) > len(prefix):
            found.append((program, lower[len(prefix):]))
    return list(dict.fromkeys(found))


def dispatch_name(name: str, known: Container[str]) -> str:
    """The name the program tables are consulted under: ``RM`` runs ``rm`` where the
    filesystem folds case, so it is read as ``rm`` (what it does, its wrappers' inner
    command, its file operands) -- unless the tables know the name as written (``R``)."""
    lower = name.lower()
    return name if lower == name or name in known else lower


def other_names(texts: Sequence[str]) -> tuple[Words, ...]:
    """Every other name of the command ``texts`` (never the words as written)."""
    if not texts or _alone(texts[0]):
        return ()
    written, rest = tuple(texts), tuple(texts[1:])
    readings = [(*head, *rest) for head in program_names(texts[0])]
    found: list[Words] = []
    for words in readings:
        found.append(words)
        found += _subcommand_names(words)
    return tuple(w for w in dict.fromkeys(found) if w != written)


#: The programs whose subcommands have other names (git's and npm's are found otherwise).
_SUBCOMMAND_HEADS = first_words(SUBCOMMAND_NAMES) | {"git", "npm"}


@lru_cache(maxsize=1_024)
def _alone(name: str) -> bool:
    """Whether a command named ``name`` has no other name, whatever its arguments: the
    name is its only one (``rm``, ``cat``) and no table names its subcommands -- most
    commands (a line of a thousand different ``rm xN`` asks once per program)."""
    return name not in _SUBCOMMAND_HEADS and program_names(name) == [(name,)]


def _subcommand_names(words: Words) -> list[Words]:
    """The names a program gives the subcommand in ``words`` (global options may come
    first: ``npm --registry x publ``, ``docker -H h rm``), each in its place."""
    found: list[Words] = []
    for at in _subcommand_places(words):
        before, rest = words[:at], words[at:]
        if words[0] == "git" and rest[0] not in GIT_COMMANDS:  # `git psuh` may push
            found += [(*before, command, *rest[1:]) for command in git_autocorrect(rest[0])]
            continue
        if words[0] == "npm":
            command = npm_command(rest[0])
            if command is not None:
                found += [(*before, spelling, *rest[1:]) for spelling in
                          (command, *(a for a, c in NPM_ALIASES.items() if c == command))]
            continue
        key, group = lookup(SUBCOMMAND_NAMES, (words[0], *rest))
        if group is not None:
            found += [(*before, *name[1:], *rest[len(key) - 1:]) for name in group]
    return found


def _subcommand_places(words: Words) -> list[int]:
    """Where the subcommand may be: the first word that is not an option, and the
    next one too when the first may be an option's value (fail closed: every reading)."""
    places: list[int] = []
    for i in range(1, len(words)):
        if words[i].startswith(("-", "+")):
            continue
        places.append(i)
        if len(places) == 2 or i == 1 or not words[i - 1].startswith("-") \
                or "=" in words[i - 1]:
            break
    return places


def npm_command(word: str) -> str | None:
    """The npm command ``npm WORD`` runs, as npm's ``deref`` resolves it (npm/cli
    ``lib/utils/cmd-list.js``): a command, an alias, camelCase as dashes, or a unique
    prefix of a command or an alias (then that alias's command); None: no command."""
    if re.search("[A-Z]", word):
        word = re.sub("[A-Z]", lambda m: "-" + m.group(0).lower(), word)
    if word in NPM_COMMANDS:
        return word
    if word in NPM_ALIASES:
        return NPM_ALIASES[word]
    return _npm_abbreviations().get(word)


@cache
def _npm_abbreviations() -> dict[str, str]:
    """The ``abbrev`` package's table over npm's commands and aliases (every prefix
    shared by no other word, and each word itself), aliases resolved to commands."""
    every = sorted(NPM_COMMANDS | NPM_ALIASES.keys())
    counts: dict[str, int] = {}
    for word in every:
        for end in range(1, len(word) + 1):
            counts[word[:end]] = counts.get(word[:end], 0) + 1
    table: dict[str, str] = {}
    for word in every:
        for end in range(1, len(word) + 1):
            prefix = word[:end]
            if counts[prefix] == 1 or prefix == word:
                table[prefix] = NPM_ALIASES.get(word, word)
    return table


@cache
def git_autocorrect(word: str) -> tuple[str, ...]:
    """The git commands ``git WORD`` may run when WORD is none (git ``help.c``
    ``help_unknown_cmd`` with ``help.autocorrect`` set: the one command most like WORD
    by git's weighted edit distance, if similar enough). Every command at the best score
    is returned: git runs one only when it is alone there, and a git with other commands
    may leave any of them alone."""
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,39}", word):
        return ()
    best, found = GIT_SIMILARITY_FLOOR, []
    for command in GIT_COMMANDS:  # a word longer by 3, or shorter by 7, is never close
        if len(command) - GIT_SIMILARITY_FLOOR < len(word) < len(command) + 3:
            score = _git_levenshtein(word, command) + 1
            if score < best:
                best, found = score, [command]
            elif score == best:
                found.append(command)
    return tuple(sorted(found))


def _git_levenshtein(typed: str, command: str) -> int:
    """git's ``levenshtein()`` (levenshtein.c) with its weights for a mistyped command:
    turning ``typed`` into ``command``, a swap of two neighbours costs 0, a substitution
    2, an inserted character 1, a deleted one 3."""
    swap, substitution, insertion, deletion = GIT_EDIT_WEIGHTS
    row0 = [0] * (len(command) + 1)
    row1 = [j * insertion for j in range(len(command) + 1)]
    for i, char in enumerate(typed):
        row2 = [(i + 1) * deletion] + [0] * len(command)
        for j, other in enumerate(command):
            cost = row1[j] + substitution * (char != other)
            if i > 0 and j > 0 and typed[i - 1] == other and char == command[j - 1]:
                cost = min(cost, row0[j - 1] + swap)
            cost = min(cost, row1[j + 1] + deletion, row2[j] + insertion)
            row2[j + 1] = cost
        row0, row1 = row1, row2
    return row1[len(command)]
