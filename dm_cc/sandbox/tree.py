"""The project's file tree as the spec needs it: every path, and which are
directories, listed again only where a directory changed.

    lister = TreeLister()
    tree = lister.list(root)     # each directory stat'ed; changed ones listed anew
    tree.signature               # equal while no directory's entries changed

A directory's mtime changes when an entry is added, removed or renamed in it, so
an unchanged mtime means an unchanged listing; the whole tree's signature (every
directory and its mtime) tells a caller its spec still holds. Symbolic links are
listed, never followed. ``.git/objects`` (content-addressed blobs) is not walked.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

SKIPPED = frozenset({".git/objects", ".git/lfs"})


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

    @classmethod
    def of(cls, entries: tuple[Entry, ...], signature: int = 0) -> Tree:
        return cls(entries, signature, frozenset(e.path for e in entries if e.is_dir))

    def is_dir(self, path: str) -> bool:
        return path in self._dirs

    def children(self) -> Mapping[str, list[str]]:
        return self._children

    @cached_property
    def _children(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {path: [] for path in self._dirs}
        found.setdefault(".", [])
        for entry in self.entries:
            found.setdefault(posixpath.dirname(entry.path) or ".", []).append(entry.path)
        return found


class TreeLister:
    """Lists a project tree, keeping each directory's listing while its mtime holds."""

    def __init__(self) -> None:
        self._listings: dict[str, tuple[int, tuple[tuple[str, bool, bool], ...]]] = {}

    def list(self, root: str) -> Tree:
        entries: list[Entry] = []
        stamps: list[tuple[str, int]] = []
        pending = [""]
        while pending:
            relative = pending.pop()
            listing = self._listing(posixpath.join(root, relative) if relative else root, stamps,
                                    relative)
            for name, is_dir, is_link in listing:
                path = f"{relative}/{name}" if relative else name
                entries.append(Entry(path, is_dir, is_link))
                if is_dir and path not in SKIPPED:
                    pending.append(path)
        return Tree.of(tuple(entries), hash(tuple(stamps)))

    def _listing(self, directory: str, stamps: list[tuple[str, int]],
                 relative: str) -> tuple[tuple[str, bool, bool], ...]:
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return ()
        stamps.append((relative, mtime))
        known = self._listings.get(directory)
        if known is not None and known[0] == mtime:
            return known[1]
        listing = []
        try:
            with os.scandir(directory) as found:
                for item in found:
                    try:
                        is_link = item.is_symlink()
                        is_dir = not is_link and item.is_dir(follow_symlinks=False)
                    except OSError:
                        is_link = is_dir = False
                    listing.append((item.name, is_dir, is_link))
        except OSError:
            pass
        result = tuple(sorted(listing))
        self._listings[directory] = (mtime, result)
        return result


def list_under(directory: str, limit: int) -> list[tuple[str, bool]] | None:
    """Every path under ``directory`` (absolute, with whether it is a directory),
    symlinks not followed; None when there are more than ``limit``."""
    found: list[tuple[str, bool]] = []
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                for item in listing:
                    try:
                        is_dir = item.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    found.append((item.path, is_dir))
                    if len(found) > limit:
                        return None
                    if is_dir:
                        pending.append(item.path)
        except OSError:
            continue
    return found
