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

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple


class Entry(NamedTuple):
    """One path of the tree (a tuple: a 100,000-file tree makes as many)."""

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
        """The ASCII paths that casefolded are ``directory`` (casefolded) or inside it,
        in casefolded order: the directories so named (found by their last segment),
        then what they hold -- never a sort of the whole tree."""
        if not directory.isascii():
            return []
        children = self.children()
        found: set[str] = set()
        for top in self._by_last.get(directory[directory.rfind("/") + 1:], ()):
            if top.lower() != directory or top in found:
                continue
            pending = [top]
            while pending:
                path = pending.pop()
                if path in found or not path.isascii():
                    continue
                found.add(path)
                if path in self._dirs:
                    pending += children.get(path, ())
        return [path for _, path in sorted((path.lower(), path) for path in found)]

    def not_ascii(self) -> tuple[str, ...]:
        return self._not_ascii

    @cached_property
    def _by_last(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for entry in self.entries:
            path = entry.path
            if path.isascii():     # for ASCII, casefold() is lower()
                key = path[path.rfind("/") + 1:].lower()
                bucket = found.get(key)
                if bucket is None:
                    found[key] = [path]
                else:
                    bucket.append(path)
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
