"""The knowledge about particular programs, as data: one module per kind of table.

* :mod:`.environment` -- variables whose value changes what a command runs.
* :mod:`.interpreters` -- shells, interpreters and builtins that run code.
* :mod:`.wrappers` -- programs that run another command (``sudo``, ``timeout``, ``uv run``).
* :mod:`.arguments` -- how a program's arguments read (risky options, file operands).
* :mod:`.commands` -- smaller facts: system bin dirs, git's global options, non-files,
  programs that never run their arguments.
* :mod:`.planting` -- programs that write entries the line does not name (extractors,
  patches, checkouts, copies), where any may be a symlink.
* :mod:`.suggestions` -- how many words an "always allow" suggestion keeps.
* :mod:`.flag_aliases` -- long/short spellings of the same flag, for deny/ask rules.
* :mod:`.program_names` -- other names of a program and its subcommands (versions, aliases).

Tables are checked as they are built: :func:`words` refuses a word given twice,
:func:`table` and :func:`names` a key given twice (a Python dict literal would keep the
last one silently). Beside each table or group of entries: where its facts come from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TypeVar

_V = TypeVar("_V")


class DuplicateEntry(ValueError):
    """A table names the same word or key twice."""


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set; a word given twice raises."""
    parts = text.split()
    found = frozenset(parts)
    if len(found) != len(parts):
        twice = sorted({p for p in parts if parts.count(p) > 1})
        raise DuplicateEntry(f"{', '.join(twice)} given twice in {text[:60]!r}")
    return found


def table(*entries: tuple[str, _V]) -> Mapping[tuple[str, ...], _V]:
    """A read-only mapping from command words to data.

    Each entry is ``(commands, value)``: commands separated by commas, each its words
    (``"git fetch, git pull"`` gives the keys ``("git", "fetch")`` and ``("git", "pull")``).
    A key given twice raises.
    """
    out: dict[tuple[str, ...], _V] = {}
    for commands, value in entries:
        for command in commands.split(","):
            key = tuple(command.split())
            if not key or key in out:
                raise DuplicateEntry(f"{command.strip()!r} is {'given twice' if key else 'empty'}"
                                     f" in a table (entry {commands[:60]!r})")
            out[key] = value
    return MappingProxyType(out)


def names(*entries: tuple[str, _V]) -> Mapping[str, _V]:
    """A read-only mapping from single words to data; each entry is ``(words, value)``
    (``("python pypy", v)`` gives both words the value). A word given twice raises."""
    out: dict[str, _V] = {}
    for keys, value in entries:
        for key in keys.split():
            if key in out:
                raise DuplicateEntry(f"{key!r} is given twice in a table (entry {keys[:60]!r})")
            out[key] = value
    return MappingProxyType(out)


def first_words(mapping: Mapping[tuple[str, ...], object]) -> frozenset[str]:
    """The first words of a table's keys: a command named otherwise has no entry (asked
    before :func:`lookup`, which builds up to three keys, for most commands in vain)."""
    return frozenset(key[0] for key in mapping)


def lookup(mapping: Mapping[tuple[str, ...], _V], texts: Sequence[str]
           ) -> tuple[tuple[str, ...], _V | None]:
    """The entry for the longest (up to 3) leading words of ``texts`` in ``mapping``."""
    n = len(texts)  # the keys are built directly: this runs several times per command
    key: tuple[str, ...]
    if n >= 3 and (key := (texts[0], texts[1], texts[2])) in mapping:
        return key, mapping[key]
    if n >= 2 and (key := (texts[0], texts[1])) in mapping:
        return key, mapping[key]
    if n >= 1 and (key := (texts[0],)) in mapping:
        return key, mapping[key]
    return (), None
