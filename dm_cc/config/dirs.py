"""Where dm_cc keeps per-user, system and project files.

A project keeps dm_cc's files in :data:`PROJECT_DIR` (``.dm_cc``) at its root:
policy, agents, settings, and the plan agent's plan files (:func:`plan_file`).
Which directory is the root is :func:`find_project`'s to say (the repository; a
``.dm_cc/`` further down is not the project's).
Per-user directories come from platformdirs; ``DM_CC_HOME`` relocates all of them
(``$DM_CC_HOME/config``, ``data``, ``state``, ``cache``) for tests and isolation.
The managed (organisation) directory is ``/etc/dm_cc`` unless
``DM_CC_MANAGED_DIR`` names another. :class:`HostFilesystem` is the machine's
filesystem as the permission engine's path canonicalisation asks for it
(``dm_cc.permissions.paths.Filesystem``): the engine is handed it, never does I/O.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import posixpath
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

APP = "dm_cc"
MANAGED_DEFAULT = Path("/etc/dm_cc")
#: The managed config's (``<managed>/config.yaml``) section naming the managed policy
#: files delivered from a URL (dm_cc.policy's managed.py); no other config may have it.
MANAGED_POLICY = "managed_policy"

PROJECT_DIR = ".dm_cc"        # at the project root: policy, agents, settings, plans
GIT_DIR = ".git"
PLANS_DIR = f"{PROJECT_DIR}/plans"              # relative to the project root
#: The plan agent's plan file, as its rule's pattern (``{session}``: the session id).
PLAN_FILE_PATTERN = f"{PLANS_DIR}/{{session}}.md"


def _user_dir(kind: str, env: Mapping[str, str]) -> Path:
    home = env.get("DM_CC_HOME")
    if home:
        return Path(home) / kind
    import platformdirs

    finder = {
        "config": platformdirs.user_config_dir,
        "data": platformdirs.user_data_dir,
        "state": platformdirs.user_state_dir,
        "cache": platformdirs.user_cache_dir,
    }[kind]
    return Path(finder(APP, appauthor=False))


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("config", env)


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("data", env)


def state_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("state", env)


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("cache", env)


def managed_dir(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env.get("DM_CC_MANAGED_DIR") or MANAGED_DEFAULT)


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The user's home directory: ``HOME``, else what the system says."""
    return Path(env.get("HOME") or os.path.expanduser("~"))


#: Directory entries a glob in a command's path may look at (HostFilesystem.matches).
GLOB_ENTRIES = 4096


class HostFilesystem:
    """Symlinks and ``~user`` resolved on this machine."""

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def home_of(self, user: str) -> str | None:
        expanded = os.path.expanduser("~" + user)
        return None if expanded.startswith("~") else expanded

    def matches(self, pattern: str, limit: int) -> list[str]:
        """As bash expands the glob (``*`` skips dot files), one path segment at a time,
        looking at no more than GLOB_ENTRIES directory entries in all: a pattern built to
        walk the whole disk (``/*/*/*/*/x``) costs no more than that."""
        found, budget = ["/"], GLOB_ENTRIES
        for part in filter(None, pattern.split("/")):
            if not glob.has_magic(part):
                found = [p for d in found if os.path.lexists(p := os.path.join(d, part))]
                continue
            below: list[str] = []
            for directory in found:
                try:
                    names = os.listdir(directory)
                except OSError:
                    continue
                budget -= len(names)
                below += [os.path.join(directory, name) for name in names
                          if fnmatch.fnmatchcase(name, part)
                          and (name[:1] != "." or part[:1] == ".")]
                if budget < 0 or len(below) >= limit:
                    break
            found = below[:limit]
        return found[:limit]

    def for_one_decision(self) -> HostFilesystem:
        return _Remembering()


class _Remembering(HostFilesystem):
    """This machine's filesystem while one tool call is judged: each directory a path
    passes through is looked up once. ``cd a; cat f g h; cd a; …`` names paths ever deeper
    under one directory; os.path.realpath would look up every directory of every path
    again (the square of the line). A path is walked as os.path.realpath walks it,
    component by component, remembering where each directory as written leads (the
    short ones, and each path's own) when no symlink is on the way; a path through a
    symlink is handed to os.path.realpath, as ever. Below a name that does not exist
    nothing does, and nothing more is looked up."""

    _SHARED = 256  # directories this long or shorter are remembered on every path's way
    _TRIES = 8  # directories of a path looked for before walking it from the root

    def __init__(self) -> None:
        # a path as written, up to a "/" -> where it leads, and whether that is missing
        self._walked: dict[str, tuple[str, bool]] = {"": ("/", False)}
        self._matched: dict[tuple[str, int], list[str]] = {}

    def for_one_decision(self) -> HostFilesystem:
        return self

    def matches(self, pattern: str, limit: int) -> list[str]:
        found = self._matched.get((pattern, limit))
        if found is None:
            found = self._matched[pattern, limit] = super().matches(pattern, limit)
        return list(found)

    def realpath(self, path: str) -> str:
        if not path.startswith("/"):
            return os.path.realpath(path)
        known, tries = path.rfind("/"), 0  # the deepest directory of `path` walked already
        while path[:known] not in self._walked:
            known, tries = path.rfind("/", 0, known) if tries < self._TRIES else 0, tries + 1
        resolved, missing = self._walked[path[:known]]
        own, up = path.rfind("/"), path.rfind("/..")
        while known < len(path):
            if missing and up < known:  # nothing below a missing directory is looked at
                # (and nothing leads back above it): its names, appended
                if known < own:  # (its own directory remembered, as below)
                    resolved = posixpath.join(resolved, *_names(path[known + 1:own]))
                    self._walked[path[:own]] = (resolved, True)
                    known = own
                return posixpath.normpath(posixpath.join(resolved, *_names(path[known + 1:])))
            end = path.find("/", known + 1)
            end = len(path) if end < 0 else end
            name = path[known + 1:end]
            if name == "..":
                resolved, missing = posixpath.dirname(resolved), False
            elif name and name != ".":
                step = f"{resolved}/{name}" if resolved != "/" else f"/{name}"
                if not missing:
                    try:
                        link = stat.S_ISLNK(os.lstat(step).st_mode)
                    except (FileNotFoundError, NotADirectoryError):
                        link, missing = False, True
                    except (OSError, ValueError):
                        link = False
                    if link:
                        return os.path.realpath(path)
                resolved = step
            if end < len(path) and (end <= self._SHARED or end == own):
                self._walked[path[:end]] = (resolved, missing)
            known = end
        return resolved  # (normal: "/" and names joined, none empty, "." nor "..")


def _names(path: str) -> list[str]:
    """The names of a relative ``path`` that step somewhere (not ``.``, not empty)."""
    return [name for name in path.split("/") if name and name != "."]


class ProjectRoot(NamedTuple):
    """The project of a session started in some directory (:func:`find_project`):
    its ``root``; whether a repository made it so; the ``.dm_cc/`` directories
    between the root and the working directory, innermost first, which are not the
    project's; and, for a repository nested in another, the enclosing one's
    ``.dm_cc/``, whose rules do not apply here either."""

    root: Path
    repository: bool = False
    ignored: tuple[Path, ...] = ()
    enclosing: Path | None = None

    def warnings(self) -> tuple[str, ...]:
        """What is ignored, one line each, naming the directory and the root."""
        how = "the repository" if self.repository else f"the outermost directory with a {PROJECT_DIR}/"
        said = tuple(f"{path}/ is ignored: the project root is {self.root} ({how}), and only "
                     f"its {PROJECT_DIR}/ is the project's" for path in self.ignored)
        if self.enclosing is not None:
            said += (f"{self.enclosing}/ is not used: it belongs to the enclosing repository "
                     f"{self.enclosing.parent}, and this session's project is the repository "
                     f"at {self.root}",)
        return said


def find_project(start: Path, home: Path | None = None) -> ProjectRoot:
    """The project of a session started in ``start`` (``home``: the home directory,
    by default the environment's):

    1. the nearest directory up from ``start`` (itself included) holding ``.git`` (a
       directory, or the file of a worktree or a submodule): the repository, as git
       itself finds it;
    2. without one, the OUTERMOST directory up from ``start`` holding a ``.dm_cc/``
       directory, so one made (or shipped) further down cannot stand in for it; from
       below the home directory, only directories below it (``~/.dm_cc`` would make
       the whole home the project, writable in the sandbox);
    3. else ``start`` itself.

    The filesystem root is never taken. A ``.dm_cc/`` between the root and ``start``
    is not the project's: its files are never read, and :meth:`ProjectRoot.warnings`
    names it. docs/policy.md ("The project root") says why."""
    start = start.resolve()
    above = [d for d in (start, *start.parents) if d != d.parent]
    repository = next((d for d in above if (d / GIT_DIR).exists()), None)
    root = repository or next(
        (d for d in reversed(_below_home(above, (home or home_dir()).resolve()))
         if _has_project_dir(d)), start)
    below = above[:above.index(root)] if root in above else []
    return ProjectRoot(root, repository is not None,
                       tuple(project_dir(d) for d in below if _has_project_dir(d)),
                       _enclosing(above, root) if repository is not None else None)


def _below_home(above: list[Path], home: Path) -> list[Path]:
    """Of a start directory and those above it, the ones a ``.dm_cc/`` may make the
    root: those below the home directory when the start is in it, else all."""
    if above and above[0].is_relative_to(home):
        return [d for d in above if d != home and d.is_relative_to(home)]
    return above


def _enclosing(above: list[Path], root: Path) -> Path | None:
    """The ``.dm_cc/`` of the repository enclosing the one at ``root``, if it has one."""
    outer = next((d for d in above[above.index(root) + 1:] if (d / GIT_DIR).exists()), None)
    return project_dir(outer) if outer is not None and _has_project_dir(outer) else None


def _has_project_dir(directory: Path) -> bool:
    return project_dir(directory).is_dir()


def project_root(start: Path, home: Path | None = None) -> Path:
    """The project root of a session started in ``start`` (see :func:`find_project`)."""
    return find_project(start, home).root


def project_dir(root: Path) -> Path:
    """The project's own dm_cc directory (``<root>/.dm_cc``)."""
    return root / PROJECT_DIR


def policy_files(directory: Path) -> list[Path]:
    """The policy files of a layer's directory (managed, user, a project's
    ``.dm_cc``): ``policy.yaml``, then ``policies/*.yaml`` (and ``.yml``) sorted."""
    found = []
    if (directory / "policy.yaml").is_file():
        found.append(directory / "policy.yaml")
    extra = directory / "policies"
    if extra.is_dir():
        found.extend(sorted(p for p in extra.iterdir() if p.suffix in (".yaml", ".yml")))
    return found


def agent_files_in(directory: Path) -> list[Path]:
    """The agent files of a directory (``<config>/agents``, ``.dm_cc/agents``), sorted."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix == ".md" and p.is_file())


def project_files(root: Path) -> list[Path]:
    """What a project says to dm_cc in its own files, each trusted or not by the
    person (``dm_cc.config.trust``): its policy files, agent files and config."""
    own = project_dir(root)
    found = [*policy_files(own), *agent_files_in(own / "agents")]
    if (own / "config.yaml").is_file():
        found.append(own / "config.yaml")
    return found


def plan_file(root: Path, session_id: str) -> Path:
    """The plan agent's plan file in the session ``session_id``."""
    return root / PLAN_FILE_PATTERN.replace("{session}", session_id)
