"""What makes git run commands, kept read-only in the sandbox: found on the host
(:func:`git_dirs`, :func:`hooks_paths`) and turned into mounts (:func:`protected`).

git runs what its config says (``core.fsmonitor``, ``core.pager``, aliases, filter
drivers) and its hooks, at the person's next git command, outside any sandbox. So
every git directory in the project -- its own (a worktree's two), a submodule's, a
nested repository's -- keeps its ``config``, ``config.worktree``, ``commondir`` and
``hooks/`` read-only, as does the directory ``core.hooksPath`` names and every
``.git`` file (a gitlink says where the repository is). A missing ``hooks/`` gets
an empty read-only one: else a command could add a hook.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from dm_cc.config.dirs import PROJECT_DIR
from dm_cc.sandbox.spec import Mount
from dm_cc.sandbox.tree import Tree, inside


def git_dirs(root: Path) -> tuple[str, ...]:
    """The project's git directories: ``.git``, or for a worktree (``.git`` a file
    saying ``gitdir: …``) the repository's common dir and its own; then the git
    dirs of submodules under them (``modules/…``), whose config and hooks run
    commands as the repository's do."""
    dot = root / ".git"
    if dot.is_dir():
        found = [dot.resolve()]
    else:
        try:
            text = dot.read_text()
        except OSError:
            return ()
        if not text.startswith("gitdir:"):
            return ()
        own = (root / text[len("gitdir:"):].strip()).resolve()
        try:
            found = [(own / (own / "commondir").read_text().strip()).resolve(), own]
        except OSError:
            found = [own]
    for git_dir in list(found):
        modules = git_dir / "modules"
        if modules.is_dir():
            found += sorted(head.parent for head in modules.rglob("HEAD")
                            if head.is_file() and (head.parent / "config").exists())
    return tuple(str(path) for path in dict.fromkeys(found))


def hooks_paths(root: Path) -> tuple[str, ...]:
    """The directory git's ``core.hooksPath`` names for this project (husky's
    ``.husky``), as git itself reads it: a command that may rewrite it would have its
    hooks run at the person's next commit."""
    try:
        done = subprocess.run(["git", "config", "--get", "core.hooksPath"], cwd=root,
                              capture_output=True, text=True, timeout=5,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    value = done.stdout.strip()
    if done.returncode != 0 or not value:
        return ()
    return (os.path.realpath(root / os.path.expanduser(value)),)


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


def protected(root: str, tree: Tree, git_dirs: Sequence[str], hooks_paths: Sequence[str],
              exists: Callable[[str], bool]) -> tuple[list[Mount], list[Mount]]:
    """``.dm_cc/`` (the project's policy, agents and settings) and what makes git run
    commands: the config and hooks of every git directory -- the project's (a
    worktree's two), a submodule's under ``.git/modules``, a nested repository's.
    A git directory without ``hooks/`` gets an empty read-only one (the second list,
    mounted as hidden), else a command could add a hook the person's next ``git
    commit`` runs outside the sandbox."""
    found = [Mount(posixpath.join(root, PROJECT_DIR), DM_CC_FILES)]
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
