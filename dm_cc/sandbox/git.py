"""What makes git run commands, kept read-only in the sandbox: the mounts
(:func:`protected`) for the project's git directories, verified on the machine
(:class:`GitDirs`, :func:`~dm_cc.sandbox.repository.git_dirs`), the hooks
directory git's config names (:func:`~dm_cc.sandbox.repository.hooks_paths`), and
the places of the project's tree git would take for a repository (:func:`git_places`).

git runs what its config says (``core.fsmonitor``, ``core.pager``, aliases, filter
drivers) and its hooks, at the person's next git command, outside any sandbox. So
every git directory in the project -- its own (a worktree's two), a submodule's, a
nested repository's -- keeps its ``config``, ``config.worktree``, ``commondir``,
``gitdir`` and ``hooks/`` read-only, as does every ``.git`` file (a gitlink says
where the repository is). A missing ``hooks/`` gets an empty read-only one: else a
command could add a hook. The other worktrees' admin directories
(``<common>/worktrees/<name>``) are read-only whole, and so is the main worktree's
``HEAD`` and ``index`` seen from a linked one: none of them is this project's.

``core.hooksPath`` inside the project makes its top directory read-only (husky's
``.husky/``, whose ``_/`` wrappers run the scripts beside them): hooks run what
lies near them (:func:`hooks_wall`). What no mount can hold, because it does not exist yet (a new
repository, a missing ``commondir``), is checked after the command
(:mod:`dm_cc.sandbox.aside`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import NamedTuple

from dm_cc.sandbox.spec import Mount
from dm_cc.sandbox.tree import Tree, inside


class GitDirs(NamedTuple):
    """The project's git directories, each verified before it shapes the spec: inside
    the project, or the repository a linked worktree or submodule checkout belongs to,
    checked both ways (:mod:`dm_cc.sandbox.repository`). Absolute, resolved paths."""

    common: str | None = None           # the repository's git dir (a worktree's common dir)
    worktree: str | None = None         # a linked worktree's own: <common>/worktrees/<name>
    modules: tuple[str, ...] = ()       # submodules' git dirs, under <common>/modules
    others: tuple[str, ...] = ()        # the other worktrees' admin dirs: none is ours
    refused: tuple[tuple[str, str], ...] = ()   # (what .git or commondir named, why not)

    def dirs(self) -> tuple[str, ...]:
        """Every git directory: the common one first, then the worktree's, then submodules'."""
        return tuple(d for d in (self.common, self.worktree, *self.modules) if d)

    def owned(self) -> tuple[str, ...]:
        """Where git writes for this project (objects, refs, its index): writable with it."""
        return tuple(d for d in (self.common, self.worktree) if d)

    def named(self) -> tuple[str, ...]:
        """Every git directory the project names, verified or refused: git reads the
        config of each wherever it is, so the edit tools protect them all."""
        return (*self.dirs(), *(path for path, _ in self.refused))

    def notes(self) -> list[str]:
        return [f"{path}, named as the project's git directory, is not writable in the "
                f"sandbox: {why}" for path, why in self.refused]


GIT_RUNS = (("config", "git config can run commands (core.fsmonitor, aliases)"),
            ("config.worktree", "git config can run commands"),
            ("commondir", "says where git reads its config from"),
            ("gitdir", "says which work tree a worktree's git directory belongs to"),
            ("hooks", "git hooks run on commit, checkout and merge"))
NO_HOOKS = "git hooks would run on commit, checkout and merge: none exist, so none can be added"
HOOKS_PATH = ("git's core.hooksPath (with what lies beside it, which its hooks may run): the "
              "hooks git runs on commit, checkout and merge")
GITLINK = "a .git file says where the repository is, and so which config git runs"
CONFIG_FILE = "a file git reads as its config (an include): git config can run commands"
OTHER_WORKTREE = "another worktree's git files (its HEAD, index, config): not this project's"
MAIN_WORKTREE = "the main worktree's HEAD and index: not this worktree's"


DM_CC_FILES = "dm_cc's project files (policy, agents)"
# What git and dm_cc run: their mounts are always pinned (a mount on a link's target
# has ", through LINK" after its why).
ALWAYS_PINNED = (*(why for _, why in GIT_RUNS), GITLINK, HOOKS_PATH, CONFIG_FILE,
                 OTHER_WORKTREE, MAIN_WORKTREE, DM_CC_FILES)


def protected(root: str, own_dir: str, tree: Tree, git: GitDirs, hooks_paths: Sequence[str],
              config_files: Sequence[str],
              exists: Callable[[str], bool]) -> tuple[list[Mount], list[Mount]]:
    """``.dm_cc/`` (the project's policy, agents and settings) and what makes git run
    commands: the config and hooks of every git directory -- the project's (a
    worktree's two), a submodule's under ``.git/modules``, a nested repository's --,
    the other worktrees' files, the hooks ``core.hooksPath`` names, and the files
    git reads as config where a command could write them (an include in the tree).
    A git directory without ``hooks/`` gets an empty read-only one (the second list,
    mounted as hidden), else a command could add a hook the person's next ``git
    commit`` runs outside the sandbox."""

    def there(path: str) -> bool:
        return tree.has(path[len(root):].lstrip("/")) if inside(path, root) else exists(path)

    found = [Mount(posixpath.join(root, own_dir), DM_CC_FILES)]
    found += [Mount(posixpath.join(root, path), GITLINK, False)
              for path in git_places(tree)
              if posixpath.basename(path) == ".git" and not tree.is_dir(path)]
    found += [Mount(other, OTHER_WORKTREE) for other in git.others if there(other)]
    if git.worktree is not None and git.common is not None:
        found += [Mount(path, MAIN_WORKTREE, False)
                  for path in (posixpath.join(git.common, "HEAD"),
                               posixpath.join(git.common, "index")) if there(path)]
    missing: list[Mount] = []
    for git_dir in _git_dirs(root, tree, git):
        for name, why in GIT_RUNS:
            path = posixpath.join(git_dir, name)
            if there(path):
                found.append(Mount(path, why, name == "hooks"))
            elif name == "hooks":
                missing.append(Mount(path, NO_HOOKS))
    found += [mount for path in hooks_paths
              if (mount := _hooks_path_mount(root, tree, git, path, exists)) is not None]
    found += [Mount(path, CONFIG_FILE, False) for path in config_files
              if writable_for_git(root, git, path) and there(path)]
    return found, missing


def writable_for_git(root: str, git: GitDirs, path: str) -> bool:
    """Whether ``path`` lies where the project's commands may write: the project, or
    a git directory of it outside (elsewhere it is read-only anyway)."""
    return inside(path, root) or any(inside(path, d) for d in git.owned())


def hooks_wall(root: str, path: str, git: GitDirs) -> str | None:
    """The directory kept read-only for the hooks ``core.hooksPath`` names: inside the
    project, the directory right under its root that holds them (husky v9's
    ``.husky/_`` -> ``.husky``: its hooks run the scripts beside them); in a git
    directory, the hooks directory itself (the rest of it is git's to write); None
    elsewhere (read-only anyway) and for the root or a directory holding it."""
    if inside(root, path):
        return None
    if any(inside(path, d) for d in git.dirs()):
        return path
    if not inside(path, root):
        return None
    top = posixpath.join(root, path[len(root):].lstrip("/").split("/", 1)[0])
    return path if posixpath.basename(top) == ".git" else top


def hooks_path_notes(root: str, hooks_paths: Sequence[str]) -> list[str]:
    """What the spec cannot hold of ``core.hooksPath``: a directory holding the project."""
    return [f"git's core.hooksPath is {path}, which holds the project: hooks can be added "
            "there, and git would run them" for path in hooks_paths if inside(root, path)]


def _hooks_path_mount(root: str, tree: Tree, git: GitDirs, path: str,
                      exists: Callable[[str], bool]) -> Mount | None:
    """The hooks' wall (:func:`hooks_wall`) read-only, where it exists (a missing one
    is checked after the command)."""
    wall = hooks_wall(root, path, git)
    if wall is None:
        return None
    if not inside(wall, root):
        return Mount(wall, HOOKS_PATH) if exists(wall) else None
    relative = wall[len(root) + 1:]
    return Mount(wall, HOOKS_PATH, tree.is_dir(relative)) if tree.has(relative) else None


def git_places(tree: Tree) -> list[str]:
    """The paths of the tree git would take for a repository: every entry named
    ``.git`` (a directory, a gitlink file, a link), and every directory holding
    ``HEAD`` with ``objects`` or ``commondir`` (a bare repository, a submodule's or
    a worktree's git dir; ``.`` for the project root itself)."""
    named = tree.by_last_segment()
    others = tree.not_ascii()
    found = [p for p in (*named.get(".git", ()), *others) if posixpath.basename(p) == ".git"]
    for head in (*named.get("head", ()), *others):
        if posixpath.basename(head) == "HEAD":
            parent = posixpath.dirname(head)
            prefix = f"{parent}/" if parent else ""
            if tree.has(f"{prefix}objects") or tree.has(f"{prefix}commondir"):
                found.append(parent or ".")
    return list(dict.fromkeys(found))


def _git_dirs(root: str, tree: Tree, git: GitDirs) -> list[str]:
    """The project's git directories (verified: ``.git``, a worktree's own and common
    ones, submodules'), then every other directory of the tree git would take for
    one, but those inside another worktree's (read-only as a whole)."""
    found = list(git.dirs())
    if not found and tree.is_dir(".git"):
        found.append(posixpath.join(root, ".git"))
    for place in git_places(tree):
        path = root if place == "." else posixpath.join(root, place)
        if (place == "." or tree.is_dir(place)) and path not in found \
                and not any(inside(path, other) for other in git.others):
            found.append(path)
    return found
