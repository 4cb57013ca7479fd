"""The project's file tree as the spec needs it: every path, which are directories
and which symbolic links, and indexes of them.

    tree = Tree.of((Entry("src", True), Entry("src/a.py", False)))
    tree.by_last_segment()["a.py"]      # ["src/a.py"]
    tree.signature                      # set by its lister: equal while nothing changed

A value: :class:`~dm_cc.sandbox.machine.TreeLister` lists it from the disk. Its
indexes (by last segment; casefolded and sorted, for a directory's paths) let a
rule's candidates be found without testing every path.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True, slots=True)
class Entry:
    path: str            # project-relative POSIX
    is_dir: bool
    is_link: bool = False


@dataclass(frozen=True)
class Tree:
    entries: tuple[Entry, ...]
    signature: int = 0
    _dirs: frozenset[str] = field(default=frozenset(), repr=False)
    _kids: Mapping[str, list[str]] | None = field(default=None, repr=False)
    unlisted: frozenset[str] = frozenset()      # directories that could not be listed

    @classmethod
    def of(cls, entries: tuple[Entry, ...], signature: int = 0,
           children: Mapping[str, list[str]] | None = None,
           unlisted: frozenset[str] = frozenset()) -> Tree:
        """The tree of ``entries``; ``children`` (directory, ``.`` for the root → its
        entries' paths) when the lister already knows them."""
        return cls(entries, signature, frozenset(e.path for e in entries if e.is_dir), children,
                   unlisted)

    def is_dir(self, path: str) -> bool:
        return path in self._dirs

    def has(self, path: str) -> bool:
        return path in self._paths

    def by_last_segment(self) -> Mapping[str, list[str]]:
        """The ASCII paths by their last segment, casefolded."""
        return self._by_last

    def folded_under(self, directory: str) -> list[str]:
        """The ASCII paths that casefolded are ``directory`` (casefolded) or inside it."""
        folded = self._folded
        found = []
        start = bisect.bisect_left(folded, (directory, ""))
        for key, path in folded[start:]:
            if not key.startswith(directory):
                break
            if len(key) == len(directory) or key[len(directory)] == "/":
                found.append(path)
        return found

    def not_ascii(self) -> tuple[str, ...]:
        return self._not_ascii

    @cached_property
    def _folded(self) -> list[tuple[str, str]]:
        return sorted((e.path.casefold(), e.path) for e in self.entries if e.path.isascii())

    @cached_property
    def _by_last(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for entry in self.entries:
            path = entry.path
            if path.isascii():
                found.setdefault(path[path.rfind("/") + 1:].casefold(), []).append(path)
        return found

    @cached_property
    def _not_ascii(self) -> tuple[str, ...]:
        return tuple(e.path for e in self.entries if not e.path.isascii())

    def is_link(self, path: str) -> bool:
        return path in self._links

    def links(self) -> frozenset[str]:
        return self._links

    @cached_property
    def _links(self) -> frozenset[str]:
        return frozenset(entry.path for entry in self.entries if entry.is_link)

    @cached_property
    def _paths(self) -> frozenset[str]:
        return frozenset(entry.path for entry in self.entries)

    def children(self) -> Mapping[str, list[str]]:
        return self._children

    @cached_property
    def _children(self) -> Mapping[str, list[str]]:
        if self._kids is not None:
            return self._kids
        found: dict[str, list[str]] = {path: [] for path in self._dirs}
        found.setdefault(".", [])
        for entry in self.entries:
            found.setdefault(posixpath.dirname(entry.path) or ".", []).append(entry.path)
        return found


def inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or lies under it (absolute POSIX paths)."""
    directory = directory.rstrip("/") or "/"
    return path == directory or path.startswith(directory + "/") or directory == "/"
