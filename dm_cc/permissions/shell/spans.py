"""The text of one parsed script, read by position: what lets the walk (:mod:`.walk`) ask
about nested constructs at a cost linear in the script (issue 22, "Bounded cost").

The walk asks small questions of a node's text: does it hold a ``$(``, a backtick, a
``$`` or a glob character; where is the first ``))`` after the node's start. Slicing the
node's text to ask costs its length, at each level of nesting: ``$($($(…)))``,
``${x:-${x:-…}}`` or ``$(( $(( … )) ))`` would cost the square of their length.
:class:`SourceText` decodes the script once and answers from indexes built on first
use -- every match of a pattern in the whole text, found once -- so each question costs
O(log n) whatever the nesting.

A pattern's matches in the whole text are its matches inside a node only when they do
not depend on where a search starts (no ``^``, no lookbehind, no match that a match
starting earlier could swallow); each caller names such patterns only.

Nodes are located by their byte offsets, mapped to string offsets (the same ones when
the script is ASCII, the usual case). A node whose boundary falls inside a character
(never seen; tree-sitter parses a copy in which each non-ASCII byte is ``x``) is read
from its own bytes, as before, and asked directly.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node


def decode(data: bytes) -> str:
    """UTF-8 text of ``data`` (a lone surrogate kept, a cut character replaced)."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


class View(NamedTuple):
    """A node's text as ``string[start:end]``: the whole script's string when the node
    could be located in it, else the node's own text."""

    string: str
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


class _Index(NamedTuple):
    starts: list[int]
    matches: list[re.Match[str]]


Keep = Callable[[re.Match[str]], bool]


class SourceText:
    """One script's text, with the position indexes the walk asks, and an allowance for
    the work that still grows with a node's length (listing every match inside it,
    rescanning its text): four characters for each of the script, plus slack. Past it
    the walk stops looking and says so (:attr:`spent`), and the line asks."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.text = src.decode("ascii") if src.isascii() else decode(src)
        # non-ASCII: where the UTF-8 continuation bytes are (a byte offset, less the
        # continuation bytes before it, is a string offset)
        self._continuations: list[int] | None = None
        if len(self.text) != len(src):
            self._continuations = [m.start() for m in re.finditer(rb"[\x80-\xbf]", src)]
            if len(self.text) != len(src) - len(self._continuations):
                self._continuations = None  # not UTF-8 after all: no node is located
        # every byte a character (ASCII, the usual case): byte offsets are string offsets
        self._bytewise = len(self.text) == len(src)
        self._indexes: dict[tuple[re.Pattern[str], Keep | None], _Index] = {}
        self._next: dict[str, tuple[int, int]] = {}
        self.allowance = 4 * len(src) + 65_536

    @property
    def spent(self) -> bool:
        return self.allowance < 0

    def spend(self, work: int) -> bool:
        """Whether ``work`` more fits in the allowance (it is counted either way)."""
        self.allowance -= work
        return self.allowance >= 0

    def _offset(self, byte: int) -> int | None:
        if self._continuations is None:
            return byte if self._bytewise else None
        if byte < len(self.src) and 0x80 <= self.src[byte] < 0xC0:
            return None  # inside a character
        return byte - bisect_left(self._continuations, byte)

    def view(self, node: Node) -> View:
        if self._bytewise:  # (asked of many nodes: no offset to map)
            return View(self.text, node.start_byte, node.end_byte)
        start, end = self._offset(node.start_byte), self._offset(node.end_byte)
        if start is None or end is None:
            data = decode(self.src[node.start_byte:node.end_byte])
            return View(data, 0, len(data))
        return View(self.text, start, end)

    def slice(self, node: Node, cap: int | None = None) -> str:
        """The node's text (its first ``cap`` bytes, as ever)."""
        if cap is not None and len(self.text) != len(self.src):
            return decode(self.src[node.start_byte:min(node.end_byte, node.start_byte + cap)])
        string, start, end = self.view(node)
        return string[start:end if cap is None else min(end, start + cap)]

    def first(self, pattern: re.Pattern[str], view: View) -> re.Match[str] | None:
        """The first match of ``pattern`` lying inside ``view``."""
        string, start, end = view
        if string is not self.text:
            return pattern.search(string, start, end)
        index = self._index(pattern, None)
        i = bisect_left(index.starts, start)
        if i < len(index.starts) and index.matches[i].end() <= end:
            return index.matches[i]
        return None

    def within(self, pattern: re.Pattern[str], view: View,
               keep: Keep | None = None) -> list[re.Match[str]] | None:
        """Every match of ``pattern`` lying inside ``view`` that ``keep`` keeps, in
        order; None when listing them overruns the allowance."""
        string, start, end = view
        if string is not self.text:
            found = [m for m in pattern.finditer(string, start, end) if keep is None or keep(m)]
            return found if self.spend(len(found)) else None
        index = self._index(pattern, keep)
        low, high = bisect_left(index.starts, start), bisect_left(index.starts, end)
        if not self.spend(high - low):
            return None
        found = index.matches[low:high]
        if found and found[-1].end() > end:
            found.pop()
        return found

    def _index(self, pattern: re.Pattern[str], keep: Keep | None) -> _Index:
        index = self._indexes.get((pattern, keep))
        if index is None:
            matches = [m for m in pattern.finditer(self.text) if keep is None or keep(m)]
            index = self._indexes[pattern, keep] = _Index([m.start() for m in matches], matches)
        return index

    def find(self, needle: str, view: View) -> int:
        """Where ``needle`` first occurs inside ``view`` (-1: nowhere). Each answer is
        remembered: nested nodes ask from later starts before the same occurrence."""
        string, start, end = view
        if string is not self.text:
            return string.find(needle, start, end)
        since, at = self._next.get(needle, (1, 0))
        if not since <= start <= at:
            at = string.find(needle, start)
            at = len(string) if at < 0 else at
            self._next[needle] = (start, at)
        return at if at + len(needle) <= end else -1
