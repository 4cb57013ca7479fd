"""What makes git run commands, kept read-only in the sandbox: the mounts
(:func:`protected`) for the git directories and hooks directory found on the
machine (:func:`~dm_cc.sandbox.machine.git_dirs`,
:func:`~dm_cc.sandbox.machine.hooks_paths`) and in the project's tree.

git runs what its config says (``core.fsmonitor``, ``core.pager``, aliases, filter
drivers) and its hooks, at the person's next git command, outside any sandbox. So
every git directory in the project -- its own (a worktree's two), a submodule's, a
nested repository's -- keeps its ``config``, ``config.worktree``, ``commondir`` and
``hooks/`` read-only, as does the directory ``core.hooksPath`` names and every
``.git`` file (a gitlink says where the repository is). A missing ``hooks/`` gets
an empty read-only one: else a command could add a hook.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from dm_cc.sandbox.spec import Mount
from dm_cc.sandbox.tree import Tree, inside

GIT_RUNS = (("config", "git config can run commands (core.fsmonitor, aliases)"),
            ("config.worktree", "git config can run commands"),
            ("commondir", "says where git reads its config from"),
            ("hooks", "git hooks run on commit, checkout and merge"))
NO_HOOKS = "git hooks would run on commit, checkout and merge: none exist, so none can be added"
HOOKS_PATH = "git's core.hooksPath: the hooks git runs on commit, checkout and merge"
GITLINK = "a .git file says where the repository is, and so which config git runs"


DM_CC_FILES = "dm_cc's project files (policy, agents)"
# What git and dm_cc run: their mounts are always pinned (a mount on a link's target
# has ", through LINK" after its why).
ALWAYS_PINNED = (*(why for _, why in GIT_RUNS), GITLINK, DM_CC_FILES)


def protected(root: str, own_dir: str, tree: Tree, git_dirs: Sequence[str],
              hooks_paths: Sequence[str],
              exists: Callable[[str], bool]) -> tuple[list[Mount], list[Mount]]:
    """``.dm_cc/`` (the project's policy, agents and settings) and what makes git run
    commands: the config and hooks of every git directory -- the project's (a
    worktree's two), a submodule's under ``.git/modules``, a nested repository's.
    A git directory without ``hooks/`` gets an empty read-only one (the second list,
    mounted as hidden), else a command could add a hook the person's next ``git
    commit`` runs outside the sandbox."""
    found = [Mount(posixpath.join(root, own_dir), DM_CC_FILES)]
    found += [Mount(posixpath.join(root, path), GITLINK, False)
              for path in tree.by_last_segment().get(".git", ())
              if posixpath.basename(path) == ".git" and not tree.is_dir(path)]
    missing: list[Mount] = []
    for git_dir in _git_dirs(root, tree, git_dirs):
        for name, why in GIT_RUNS:
            path = posixpath.join(git_dir, name)
            in_project = inside(path, root)
            if tree.has(path[len(root):].lstrip("/")) if in_project else exists(path):
                found.append(Mount(path, why, name == "hooks"))
            elif name == "hooks":
                missing.append(Mount(path, NO_HOOKS))
    for path in hooks_paths:   # core.hooksPath: hooks kept in the work tree (husky)
        if inside(path, root) and tree.has(path[len(root):].lstrip("/")):
            found.append(Mount(path, HOOKS_PATH))
    return found, missing


def _git_dirs(root: str, tree: Tree, known: Sequence[str]) -> list[str]:
    """The project's git directories (``.git``, a worktree's own and common ones),
    then every other directory of the tree git would take for one: named ``.git``,
    or holding ``HEAD`` with ``config`` and ``objects`` (a submodule's, a bare one)
    or with ``commondir`` (a linked worktree's, under ``.git/worktrees``)."""
    found = list(known)
    if not found and tree.is_dir(".git"):
        found.append(posixpath.join(root, ".git"))
    named = tree.by_last_segment()
    others = tree.not_ascii()
    candidates = [p for p in (*named.get(".git", ()), *others)
                  if p.endswith(".git") and posixpath.basename(p) == ".git" and tree.is_dir(p)]
    for head in (*named.get("head", ()), *others):
        parent = posixpath.dirname(head)
        if parent and posixpath.basename(head) == "HEAD" and (
                (tree.has(f"{parent}/config") and tree.has(f"{parent}/objects"))
                or tree.has(f"{parent}/commondir")):
            candidates.append(parent)
    for directory in candidates:
        path = posixpath.join(root, directory)
        if path not in found:
            found.append(path)
    return found
