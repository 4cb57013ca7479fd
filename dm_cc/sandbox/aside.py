"""What no mount can hold, checked after a confined command: what it made that
git would take for a repository, or read, at the person's next git command --
outside the sandbox, running what its config (``core.fsmonitor``, aliases) and
hooks say (DESIGN.md §10: git directories are protected paths).

* a git directory new in the project: a nested repository (``git init sub``,
  ``git clone``, one written by hand), ``git init`` at a root that had none, a
  ``.git`` file or link, a ``.git`` put in place of another;
* a submodule's git dir new under a shared git dir outside the project, or a link
  made there;
* a file git reads that did not exist (a git dir's ``commondir`` or
  ``config.worktree``, an included config file), or was a link and was replaced
  (a mount holds what a link leads to, not the link); the directory
  ``core.hooksPath`` names when it did not exist, a link on the way to it changed;
* a directory the command made unreadable (``chmod 311 x`` after ``git init
  x/sub``): dm_cc cannot see into it, git can;
* a protected path (:mod:`dm_cc.sandbox.protect`) that is a link, replaced: its
  mount holds what it leads to, not the link itself.

Each is set aside -- moved into dm_cc's per-user state directory, which confined
commands never see; never deleted -- and the command's output says what, why and
where. A directory that was there before and only gained a ``HEAD`` loses just that.

    after = watch(root, lister, tree, git, hooks_paths, config_files, protected, store)
    note = after.settle()        # after the command: None, or what was set aside
"""

from __future__ import annotations

import itertools
import os
import posixpath
import shutil
import stat
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from dm_cc.permissions import ProtectedPaths
from dm_cc.sandbox.git import GIT_RUNS, GitDirs, git_places, hooks_wall, writable_for_git
from dm_cc.sandbox.machine import TreeLister
from dm_cc.sandbox.repository import module_dirs
from dm_cc.sandbox.tree import Tree, inside

# What is at a path, to tell it was replaced: (device, inode, type, link target);
# None when nothing is there.
Identity = tuple[int, int, int, str] | None

REPOSITORY = "a git directory: git runs what its config and hooks say, at the next git command there"
SUBMODULE = "a submodule's git directory (or a link) in the shared git directory"
GIT_RUNS_IT = ("git runs what it says, or the config it leads to, outside the sandbox (made, "
               "or put in place of a link, which a mount cannot hold)")
INCLUDED_CONFIG = ("a file the repository's git config includes: git config can run "
                   "commands (core.fsmonitor, aliases)")
HOOKS_DIRECTORY = ("the directory git's core.hooksPath names: git runs the hooks in it on "
                   "commit, checkout and merge")
PROTECTED_LINK = ("a protected path, put in place of the link it was (a mount holds what a "
                  "link leads to, not the link)")
UNLISTED = ("a directory the command made unreadable: what git would find in it cannot be "
            "checked")
_counter = itertools.count()


def identity(path: str) -> Identity:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    target = os.readlink(path) if stat.S_ISLNK(found.st_mode) else ""
    return found.st_dev, found.st_ino, stat.S_IFMT(found.st_mode), target


def watch(root: str, lister: TreeLister, tree: Tree, git: GitDirs, hooks_paths: Sequence[str],
          config_files: Sequence[str], protected: ProtectedPaths, store: str,
          previous: Watch | None = None) -> Watch:
    """The project as it is before a command, in what the command must not make.
    ``previous``: the last command's, whose identities of paths in the project still
    hold when the tree is the one it saw (no directory's ctime changed: nothing was
    added, removed, renamed or replaced in any): only those outside are read again --
    a project of a thousand repositories is not ``lstat``ed path by path each command."""
    key = (root, git, tuple(hooks_paths), tuple(config_files), id(protected), store)
    outside = tuple(d for d in git.owned() if not inside(d, root))
    if previous is not None and previous.before is tree and previous.key == key:
        guarded = dict(previous.guarded)
        guarded.update((path, (identity(path), guarded[path][1])) for path in previous.foreign)
        return Watch(root, lister, tree, previous.places, guarded, outside,
                     submodules(outside), store, key, previous.foreign)
    links = {posixpath.join(root, link): (identity(posixpath.join(root, link)),
                                         f"{PROTECTED_LINK} ({found.why})")
             for link in tree.links() if (found := protected.why([link])) is not None}
    guarded = {**links, **_guarded(root, tree, git, hooks_paths, config_files)}  # git's say why
    return Watch(root, lister, tree, _places(root, tree), guarded, outside,
                 submodules(outside), store, key,
                 tuple(path for path in guarded if not inside(path, root)))


def _places(root: str, tree: Tree) -> dict[str, Identity]:
    """The project's places git takes for a repository (relative), as they are now."""
    return {place: identity(_absolute(root, place)) for place in git_places(tree)}


def _guarded(root: str, tree: Tree, git: GitDirs, hooks_paths: Sequence[str],
             config_files: Sequence[str]) -> dict[str, tuple[Identity, str]]:
    """What git reads that must stay as it is (most often: missing), and why."""
    guarded: dict[str, tuple[Identity, str]] = {}
    in_tree = [posixpath.join(root, p) for p in git_places(tree) if tree.is_dir(p)]
    for git_dir in dict.fromkeys((*git.dirs(), *in_tree)):
        for name, _ in GIT_RUNS:
            path = posixpath.join(git_dir, name)
            was = identity(path)
            if name != "hooks" or was is not None:  # a missing one: bwrap's empty mount point
                guarded[path] = (was, f"a git directory's {name}: {GIT_RUNS_IT}")
    for path in hooks_paths:
        wall = hooks_wall(root, path, git)
        if wall is not None:
            guarded[wall] = (identity(wall), HOOKS_DIRECTORY)
    for path in config_files:     # .git/config among them: said above
        if writable_for_git(root, git, path):
            guarded.setdefault(path, (identity(path), INCLUDED_CONFIG))
    return guarded


@dataclass(frozen=True)
class Watch:
    """The project as it was before a command, in what the command must not make."""

    root: str
    lister: TreeLister
    before: Tree
    places: Mapping[str, Identity]
    # absolute path -> (what was there, None for nothing; why it matters to git)
    guarded: Mapping[str, tuple[Identity, str]] = field(default_factory=dict)
    outside: tuple[str, ...] = ()       # the project's git dirs outside it (a worktree's)
    modules: frozenset[str] = frozenset()   # their submodules' git dirs and links, before
    store: str = ""                     # where what is set aside goes
    key: tuple[object, ...] = ()        # what it was made from (:func:`watch` reuses it)
    foreign: tuple[str, ...] = ()       # the guarded paths outside the project

    def settle(self, answered: Collection[str] = ()) -> str | None:
        """Set aside what the command made (see the module docstring); say so.
        ``answered``: absolute paths the person saw and let land (a transaction's
        changes they said yes to), which stay."""
        made = {path: why for path, why in self._made().items()
                if not any(path == kept or inside(path, kept) for kept in answered)}
        if not made:
            return None
        return self._set_aside(made)

    def _made(self) -> dict[str, str]:
        tree = self.lister.list(self.root)
        # the same tree: no directory of the project gained, lost or replaced an
        # entry, so what is at each path in it is what was (only outside is read)
        same = tree is self.before
        made: dict[str, str] = {}
        for place in () if same else git_places(tree):
            if self.places.get(place) != identity(_absolute(self.root, place)):
                made[self._culprit(place)] = REPOSITORY
        for path in self.foreign if same else self.guarded:
            was, why = self.guarded[path]
            if os.path.lexists(path) and identity(path) != was:
                made[path] = why
        for directory in tree.unlisted - self.before.unlisted:
            made[_absolute(self.root, directory)] = UNLISTED
        made.update((path, SUBMODULE) for path in submodules(self.outside)
                    if path not in self.modules)
        return {path: why for path, why in made.items()
                if not any(other != path and inside(path, other) for other in made)}

    def _culprit(self, place: str) -> str:
        """What to set aside for a new place: a ``.git``, or a directory new with the
        command, whole; a directory that was there (the project root too), its ``HEAD``."""
        if place == "." or (posixpath.basename(place) != ".git" and self.before.is_dir(place)
                            and place not in self.places):
            return posixpath.join(_absolute(self.root, place), "HEAD")
        return _absolute(self.root, place)

    def _set_aside(self, made: dict[str, str]) -> str:
        kept = posixpath.join(self.store, f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-"
                                          f"{next(_counter)}")
        lines = []
        for path, why in sorted(made.items()):
            shown = path[len(self.root) + 1:] if inside(path, self.root) else path
            target = posixpath.join(kept, shown if inside(path, self.root) else "outside" + path)
            try:
                os.makedirs(posixpath.dirname(target), mode=0o700, exist_ok=True)
                shutil.move(path, target)
            except OSError as exc:
                lines.append(f"  {shown}: {why}; it could NOT be set aside ({exc}): remove it "
                             "yourself before running git there")
                continue
            lines.append(f"  {shown}: {why}")
        return ("(dm_cc set aside what the command made that would run code outside the "
                "sandbox later:\n" + "\n".join(lines) + f"\nkept in {kept}: look at it before moving "
                "any of it back. A repository the work needs, the person makes outside dm_cc.)")


def submodules(git_dirs: tuple[str, ...]) -> frozenset[str]:
    """The submodules' git dirs, and the links met among them, of ``git_dirs``."""
    return frozenset(path for git_dir in git_dirs for found in module_dirs(git_dir)
                     for path in found)


def _absolute(root: str, place: str) -> str:
    return root if place == "." else posixpath.join(root, place)
