"""What a sandbox spec is derived from, read from this machine: the project's tree,
and what is at a path and under a directory outside the project (the project's
git directories are read, and verified, by :mod:`dm_cc.sandbox.repository`). The
derivation itself (:mod:`dm_cc.sandbox.derive`) reads nothing: it is given these.

    tree = TreeLister().list(root)      # each directory stat'ed; changed ones listed anew
    spec_for(gate, where, tree, Private(tmpdir, git=git_dirs(root, home), ...), LocalMachine())

A directory's ctime changes when an entry is added, removed or renamed in it, so
an unchanged ctime means an unchanged listing; the whole tree's signature (every
directory and its ctime) tells a caller its spec still holds. Not its mtime: the
owner sets that back at will (``git init lib && touch -d @OLD lib`` would hide
the new repository), and a ctime only the clock sets. Symbolic links are listed,
never followed. Git's object stores are not walked.
"""

from __future__ import annotations

import builtins
import os
import posixpath
import time
from dataclasses import dataclass

from dm_cc.sandbox.tree import Entry, Tree


def other_homes(home: str) -> tuple[str, ...]:
    """The home directories besides ``home`` whose secret stores a confined command
    must not see either (:mod:`dm_cc.permissions.secrets`): ``/root`` and every
    directory directly under ``/home`` -- the homes the gate holds them in. Those it
    cannot look into hide nothing from it, and cost nothing."""
    try:
        under = sorted(entry.path for entry in os.scandir("/home") if entry.is_dir())
    except OSError:
        under = []
    return tuple(h for h in ("/root", *under) if h != home.rstrip("/"))


# Git's content-addressed stores, in any git directory (``.git``, a submodule's
# ``.git/modules/x``, a nested repository's): listed, never walked.
SKIPPED = frozenset({"objects", "lfs"})


def _skipped(path: str) -> bool:
    head, _, name = path.rpartition("/")
    return name in SKIPPED and (head == ".git" or head.startswith(".git/") or "/.git/" in head
                                or head.endswith("/.git"))


# An Entry made without its Python-level constructor: a 100,000-file tree makes as many.
_entry = tuple.__new__


class TreeLister:
    """Lists a project tree, keeping each directory's listing while its ctime holds,
    and the whole tree while no directory's ctime changed.

    A file system stamps times with a coarse clock (a few milliseconds), so an
    entry added just after a listing, in the same tick, can leave the ctime as it
    was: a listing taken while its directory's ctime was that recent is not kept
    (git's "racy" rule)."""

    RACY_NS = 50_000_000       # 50 ms: well above any file system's timestamp tick

    def __init__(self) -> None:
        self._listings: dict[str, tuple[int, tuple[Entry, ...]]] = {}
        self._trees: dict[str, tuple[tuple[tuple[str, int], ...], Tree]] = {}

    def list(self, root: str) -> Tree:
        known = self._trees.get(root)
        if known is not None and self._unchanged(known[0]):
            return known[1]
        entries: list[Entry] = []
        children: dict[str, list[str]] = {}
        stamps: list[tuple[str, int]] = []     # (absolute directory, its ctime)
        unlisted: list[str] = []
        racy = False
        pending = [""]
        while pending:
            relative = pending.pop()
            listing, fresh = self._listing(posixpath.join(root, relative) if relative else root,
                                           stamps, relative)
            if listing is None:
                unlisted.append(relative or ".")
                listing, fresh = (), False
            racy = racy or not fresh
            entries += listing
            children[relative or "."] = [entry.path for entry in listing]
            pending += [entry.path for entry in listing
                        if entry.is_dir and not _skipped(entry.path)]
        for entry in entries:       # a directory not walked (.git/objects) has no entries
            if entry.is_dir:
                children.setdefault(entry.path, [])
        tree = Tree.of(tuple(entries), hash(tuple(stamps)), children, frozenset(unlisted))
        if racy:
            self._trees.pop(root, None)
        else:
            self._trees[root] = (tuple(stamps), tree)
        return tree

    @staticmethod
    def _unchanged(stamps: tuple[tuple[str, int], ...]) -> bool:
        """Every directory's ctime as it was: one ``stat`` each (a command's start pays
        this twice, before it and after: kept to the ``stat`` alone, the paths absolute)."""
        stat = os.stat
        try:
            for directory, ctime in stamps:
                if stat(directory).st_ctime_ns != ctime:
                    return False
        except OSError:
            return False
        return True

    def _listing(self, directory: str, stamps: builtins.list[tuple[str, int]],
                 relative: str) -> tuple[tuple[Entry, ...] | None, bool]:
        """The directory's entries (None when it cannot be listed: its mode, say, which
        changes no listing, so that is never kept), and whether the listing may be kept."""
        try:
            ctime = os.stat(directory).st_ctime_ns
        except OSError:
            return (), True
        stamps.append((directory, ctime))
        known = self._listings.get(directory)
        if known is not None and known[0] == ctime:
            return known[1], True
        listed_at = time.time_ns()
        prefix = f"{relative}/" if relative else ""
        listing: builtins.list[Entry] = []
        add = listing.append
        try:
            with os.scandir(directory) as found:
                for item in found:
                    try:
                        if item.is_symlink():
                            add(_entry(Entry, (prefix + item.name, False, True)))
                        else:
                            add(_entry(Entry, (prefix + item.name,
                                               item.is_dir(follow_symlinks=False), False)))
                    except OSError:
                        add(_entry(Entry, (prefix + item.name, False, False)))
        except OSError:
            self._listings.pop(directory, None)
            return None, False
        listing.sort()         # by path: the same prefix, so by name
        result = tuple(listing)
        if listed_at - ctime > self.RACY_NS:
            self._listings[directory] = (ctime, result)
            return result, True
        self._listings.pop(directory, None)
        return result, False


class LocalMachine:
    """This machine, as :class:`~dm_cc.sandbox.derive.Machine` asks about it."""

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def list_under(self, directory: str, limit: int) -> list[tuple[str, bool]] | None:
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


@dataclass(frozen=True)
class KnownMachine:
    """A machine described as data, the fake of :class:`~dm_cc.sandbox.derive.Machine`:
    its files (a dangling link is one) and its directories, as absolute paths."""

    files: frozenset[str] = frozenset()
    directories: frozenset[str] = frozenset()

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.directories

    def is_dir(self, path: str) -> bool:
        return path in self.directories

    def list_under(self, directory: str, limit: int) -> list[tuple[str, bool]] | None:
        found = sorted((path, path in self.directories) for path in self.files | self.directories
                       if path.startswith(directory.rstrip("/") + "/"))
        return None if len(found) > limit else found
