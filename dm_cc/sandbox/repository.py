"""The project's git directories as read from this machine, each verified before it
shapes the spec (:class:`~dm_cc.sandbox.git.GitDirs`), and what git's config says
the sandbox must hold (:class:`GitConfig`: the hooks directory, the files git
reads as config).

    git = verified_git_dirs(root, home)     # GitDirs(common=…, worktree=…, modules=…, …)
    git_dirs(root)                          # every git dir the project names: the gate's
    config = git_config(root)      # GitConfig(hooks_paths=…, files=…)

A repository says where its git directory is (a ``.git`` file's ``gitdir:``, a
``.git`` link, a ``commondir`` file), and whatever it names the sandbox makes
writable. So what it names is taken only when it is inside the project, or when
it is verified both ways:

* a linked worktree's admin dir ``<common>/worktrees/<name>``: it sits directly
  under its common dir's ``worktrees/``, its ``commondir`` names that common dir,
  its ``gitdir`` names this project's ``.git`` back, and the common dir looks like
  a git directory (``HEAD``, ``config``, ``objects/``, ``refs/``);
* a submodule's git dir (the project is a submodule's checkout): it lies under a
  ``modules/`` directory, looks like a git directory, and its ``core.worktree``
  names this project back;

and never when it is ``/``, the home directory, or holds either or the project.
Anything else is refused: the command still runs, that directory is simply not
writable, and the spec's notes say why. Submodules' git dirs are real directories
under ``<common>/modules`` (a linked worktree's: under its own admin dir's
``modules``); links are not followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import NamedTuple

from dm_cc.sandbox.git import GitDirs
from dm_cc.sandbox.tree import inside

# What a git directory holds (git's is_git_directory(), setup.c: HEAD, objects/, refs/;
# and its config, which is what the sandbox keeps read-only).
GIT_DIR_FILES = ("HEAD", "config")
GIT_DIR_DIRS = ("objects", "refs")
MODULES_LIMIT = 200          # directories walked under <common>/modules


def git_dirs(root: Path) -> tuple[str, ...]:
    """Every git directory the project names, verified or not (``GitDirs.named``):
    what the edit tools protect, wherever it is."""
    return verified_git_dirs(root, Path.home()).named()


def verified_git_dirs(root: Path, home: Path) -> GitDirs:
    """The project's git directories, verified (see the module docstring)."""
    top = os.path.realpath(root)
    dot = posixpath.join(top, ".git")
    if os.path.isdir(dot) and not os.path.islink(dot):
        named = dot
    else:
        found = _named_by(dot)
        if found is None:
            return GitDirs()
        named = found
    common, worktree, refused = _layout(top, named, os.path.realpath(home))
    if common is None:
        return GitDirs(refused=refused)
    modules = [d for owned in (common, worktree) if owned for d in module_dirs(owned)[0]]
    return GitDirs(common, worktree, tuple(modules), _other_worktrees(common, worktree), refused)


def _named_by(dot: str) -> str | None:
    """What ``.git`` names when it is a link or a gitlink file (``gitdir: PATH``)."""
    if os.path.islink(dot):
        return os.path.realpath(dot)
    try:
        with open(dot, encoding="utf-8", errors="replace") as file:
            text = file.read(4096)
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return os.path.realpath(posixpath.join(posixpath.dirname(dot), text[7:].strip()))


Refusal = tuple[str, str]       # (a git dir named, why it is not taken)


def _layout(root: str, named: str,
            home: str) -> tuple[str | None, str | None, tuple[Refusal, ...]]:
    """The common dir (None: ``named`` is refused), this worktree's admin dir, and
    what was refused with why."""
    pointer = _read_line(posixpath.join(named, "commondir"))
    if pointer is None:
        if inside(named, root):
            return named, None, ()
        refusal = _submodule_refusal(root, named) or _forbidden(named, root, home)
        return (None, None, ((named, refusal),)) if refusal else (named, None, ())
    common = os.path.realpath(posixpath.join(named, pointer))
    if inside(named, root) and inside(common, root):
        return common, named, ()
    refusal = _worktree_refusal(root, named, common) or _forbidden(common, root, home)
    if refusal is None:
        return common, named, ()
    if inside(named, root):     # the project's .git, naming a common dir it cannot have
        return named, None, ((common, refusal),)
    return None, None, ((named, refusal),)


def _forbidden(path: str, root: str, home: str) -> str | None:
    if inside(root, path):
        return "it holds the project"
    if inside(home, path):
        return "it is or holds the home directory"
    return None


def _worktree_refusal(root: str, admin: str, common: str) -> str | None:
    """Why ``admin`` is not verified as this project's linked-worktree admin dir in
    ``common``, or None when it is."""
    if posixpath.dirname(admin) != posixpath.join(common, "worktrees"):
        return f"it is not a worktree's git directory (directly under {common}/worktrees/)"
    back = _read_line(posixpath.join(admin, "gitdir"))
    if back is None or os.path.realpath(posixpath.join(admin, back)) != posixpath.join(root, ".git"):
        return "its gitdir file does not name this project's .git back"
    if not looks_like_git_dir(common):
        return f"{common} is not a git directory (HEAD, config, objects/, refs/)"
    return None


def _submodule_refusal(root: str, git_dir: str) -> str | None:
    """Why ``git_dir`` is not verified as the git dir of the submodule checked out
    at the project, or None when it is."""
    if "/modules/" not in git_dir:
        return "it is not a linked worktree's or a submodule's git directory"
    if not looks_like_git_dir(git_dir):
        return "it is not a git directory (HEAD, config, objects/, refs/)"
    worktree = _core_worktree(posixpath.join(git_dir, "config"))
    if worktree is None or os.path.realpath(posixpath.join(git_dir, worktree)) != root:
        return "its core.worktree does not name this project back"
    return None


def looks_like_git_dir(path: str) -> bool:
    return (all(os.path.isfile(posixpath.join(path, name)) for name in GIT_DIR_FILES)
            and all(os.path.isdir(posixpath.join(path, name)) for name in GIT_DIR_DIRS))


def _read_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            line = file.readline(4096).strip()
    except OSError:
        return None
    return line or None


_SECTION = re.compile(r"\s*\[\s*([A-Za-z0-9.-]+)\s*\]\s*(?:[#;].*)?$")
_WORKTREE = re.compile(r"\s*worktree\s*=\s*(\"?)(.*?)\1\s*$", re.IGNORECASE)


def _core_worktree(config: str) -> str | None:
    """``core.worktree`` of a config file as git writes it for a submodule (one plain
    ``worktree = PATH`` line in ``[core]``); None when absent or written otherwise."""
    try:
        with open(config, encoding="utf-8", errors="replace") as file:
            lines = file.read(1 << 16).splitlines()
    except OSError:
        return None
    section = ""
    for line in lines:
        if (header := _SECTION.match(line)) is not None:
            section = header.group(1).lower()
        elif section == "core" and (value := _WORKTREE.match(line)) is not None:
            return value.group(2) or None
    return None


def module_dirs(git_dir: str) -> tuple[list[str], list[str]]:
    """The submodules' git dirs under ``<git_dir>/modules`` (real directories that look
    like git dirs; a nested name's directories walked, links never followed), and
    the links met there (a command may make one: :mod:`dm_cc.sandbox.aside`)."""
    found: list[str] = []
    links: list[str] = []
    modules = posixpath.join(git_dir, "modules")
    pending = [modules]
    walked = 0
    while pending and walked < MODULES_LIMIT:
        directory = pending.pop()
        walked += 1
        if os.path.islink(directory):
            links.append(directory)
            continue
        if directory != modules and looks_like_git_dir(directory):
            found.append(directory)
            pending.append(posixpath.join(directory, "modules"))
            continue
        try:
            with os.scandir(directory) as listing:
                pending += [entry.path for entry in listing
                            if entry.is_dir(follow_symlinks=False) or entry.is_symlink()]
        except OSError:
            continue
    return sorted(found), sorted(links)


def _other_worktrees(common: str, worktree: str | None) -> tuple[str, ...]:
    """The admin dirs of the repository's other worktrees (real directories only)."""
    try:
        with os.scandir(posixpath.join(common, "worktrees")) as listing:
            return tuple(sorted(entry.path for entry in listing
                                if entry.is_dir(follow_symlinks=False) and entry.path != worktree))
    except OSError:
        return ()


class GitConfig(NamedTuple):
    """What git's config says for the project that the sandbox must hold: the hooks
    directory (``core.hooksPath``: as written, normalised, and where a link leads) and
    every file git reads as config -- each file it read, and each one an
    ``include.path`` or ``includeIf.*.path`` names, present or not (git skips a
    missing one: a command could make it). Absolute paths."""

    hooks_paths: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def git_config(root: Path, git: GitDirs) -> GitConfig:
    """The project's git config as git itself reads it (``git config --list
    --show-origin``, which runs nothing the config names). When a file does not
    parse, git refuses all of it: then the repository's own config files are read
    one by one, their includes listed unfollowed (an include that does not parse is
    what must not become valid config)."""
    top = os.path.realpath(root)
    listed = _listed(["--list"], top)
    if listed is None:
        own = [posixpath.join(d, name) for d in git.owned() for name in ("config", "config.worktree")]
        listed = "".join(_listed(["--file", path, "--list"], "/") or "" for path in own
                         if os.path.isfile(path))
    fields = listed.split("\0")
    hooks: str | None = None
    files: list[str] = []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        if not origin.startswith("file:"):
            continue
        source = posixpath.normpath(posixpath.join(top, origin[5:]))
        files.append(source)
        key, _, value = entry.partition("\n")
        if key == "core.hookspath":
            hooks = value
        elif key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            files.append(_config_path(posixpath.dirname(source), value))
    return GitConfig(_hooks_paths(top, hooks), tuple(dict.fromkeys(files)))


def _listed(what: list[str], cwd: str) -> str | None:
    """``git config WHAT --show-origin -z`` run in ``cwd`` (``/``, outside any
    repository, for one file alone), or None when git refuses."""
    import subprocess  # only the sandbox asks git: `policy check` needs just the git dirs

    try:
        done = subprocess.run(["git", "config", *what, "--show-origin", "-z"], cwd=cwd,
                              capture_output=True, text=True, timeout=5,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _config_path(directory: str, value: str) -> str:
    return posixpath.normpath(posixpath.join(directory, os.path.expanduser(value)))


def _hooks_paths(top: str, value: str | None) -> tuple[str, ...]:
    """``core.hooksPath`` (relative to the work tree) as written and where it leads."""
    if not value:
        return ()
    written = _config_path(top, value)
    return tuple(dict.fromkeys((written, os.path.realpath(written))))
