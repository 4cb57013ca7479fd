"""The project's file tree as the spec needs it: every path, and which are
directories, listed again only where a directory changed.

    lister = TreeLister()
    tree = lister.list(root)     # each directory stat'ed; changed ones listed anew
    tree.signature               # equal while no directory's entries changed

A directory's mtime changes when an entry is added, removed or renamed in it, so
an unchanged mtime means an unchanged listing; the whole tree's signature (every
directory and its mtime) tells a caller its spec still holds. Symbolic links are
listed, never followed. Git's object stores are not walked. A tree also indexes
its paths (by last segment; casefolded and sorted, for a directory's paths), so a
rule's candidates are found without testing every path.
"""

from __future__ import annotations

import bisect
import builtins
import os
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

# Git's content-addressed stores, in any git directory (``.git``, a submodule's
# ``.git/modules/x``, a nested repository's): listed, never walked.
SKIPPED = frozenset({"objects", "lfs"})


def _skipped(path: str) -> bool:
    head, _, name = path.rpartition("/")
    return name in SKIPPED and (head == ".git" or head.startswith(".git/") or "/.git/" in head
                                or head.endswith("/.git"))


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

    @classmethod
    def of(cls, entries: tuple[Entry, ...], signature: int = 0,
           children: Mapping[str, list[str]] | None = None) -> Tree:
        """The tree of ``entries``; ``children`` (directory, ``.`` for the root → its
        entries' paths) when the lister already knows them."""
        return cls(entries, signature, frozenset(e.path for e in entries if e.is_dir), children)

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


class TreeLister:
    """Lists a project tree, keeping each directory's listing while its mtime holds,
    and the whole tree while no directory's mtime changed.

    A file system stamps mtimes with a coarse clock (a few milliseconds), so an
    entry added just after a listing, in the same tick, can leave the mtime as it
    was: a listing taken while its directory's mtime was that recent is not kept
    (git's "racy" rule)."""

    RACY_NS = 50_000_000       # 50 ms: well above any file system's timestamp tick

    def __init__(self) -> None:
        self._listings: dict[str, tuple[int, tuple[Entry, ...]]] = {}
        self._trees: dict[str, tuple[tuple[tuple[str, int], ...], Tree]] = {}

    def list(self, root: str) -> Tree:
        known = self._trees.get(root)
        if known is not None and self._unchanged(root, known[0]):
            return known[1]
        entries: list[Entry] = []
        children: dict[str, list[str]] = {}
        stamps: list[tuple[str, int]] = []
        racy = False
        pending = [""]
        while pending:
            relative = pending.pop()
            listing, fresh = self._listing(posixpath.join(root, relative) if relative else root,
                                           stamps, relative)
            racy = racy or not fresh
            entries += listing
            children[relative or "."] = [entry.path for entry in listing]
            pending += [entry.path for entry in listing
                        if entry.is_dir and not _skipped(entry.path)]
        for entry in entries:       # a directory not walked (.git/objects) has no entries
            if entry.is_dir:
                children.setdefault(entry.path, [])
        tree = Tree.of(tuple(entries), hash(tuple(stamps)), children)
        if racy:
            self._trees.pop(root, None)
        else:
            self._trees[root] = (tuple(stamps), tree)
        return tree

    @staticmethod
    def _unchanged(root: str, stamps: tuple[tuple[str, int], ...]) -> bool:
        for relative, mtime in stamps:
            try:
                if os.stat(posixpath.join(root, relative) if relative else root).st_mtime_ns \
                        != mtime:
                    return False
            except OSError:
                return False
        return True

    def _listing(self, directory: str, stamps: builtins.list[tuple[str, int]],
                 relative: str) -> tuple[tuple[Entry, ...], bool]:
        """The directory's entries, and whether the listing may be kept."""
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return (), True
        stamps.append((relative, mtime))
        known = self._listings.get(directory)
        if known is not None and known[0] == mtime:
            return known[1], True
        listed_at = time.time_ns()
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
        result = tuple(Entry(f"{relative}/{name}" if relative else name, is_dir, is_link)
                       for name, is_dir, is_link in sorted(listing))
        if listed_at - mtime > self.RACY_NS:
            self._listings[directory] = (mtime, result)
            return result, True
        self._listings.pop(directory, None)
        return result, False


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


def inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or lies under it (absolute POSIX paths)."""
    directory = directory.rstrip("/") or "/"
    return path == directory or path.startswith(directory + "/") or directory == "/"
