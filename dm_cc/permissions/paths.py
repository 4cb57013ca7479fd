"""Canonical paths for requests: what a path argument really names.

A raw path is made absolute (``~`` expanded, relative to the working directory),
``..`` folded lexically, and separately resolved through every symlink as the
kernel would. Inside the project a name becomes project-relative POSIX; outside,
it stays absolute. When the lexical name and the resolved target differ, both
are names of the request: a deny on either denies, and an allow needs both.

The two filesystem lookups this needs -- resolving symlinks and finding
``~user``'s home -- are a :class:`Filesystem` passed in with the directories, so
the engine itself does no I/O (``dm_cc.config.dirs.HostFilesystem`` is the real
one; a test may pass its own).
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import NamedTuple, Protocol

from dm_cc.permissions.protected import DEFAULT_PROTECTED, ProtectedPaths
from dm_cc.permissions.secrets import DEFAULT_SECRETS, SecretStores

# Pseudo-filesystems no broad rule may open: an allow rule must name them.
SPECIAL_ROOTS = ("/proc", "/dev", "/sys")


class Filesystem(Protocol):
    """What path canonicalisation asks of the machine."""

    def realpath(self, path: str) -> str:
        """``path`` (absolute) with every symlink resolved, as the kernel would."""
        ...

    def home_of(self, user: str) -> str | None:
        """The home directory of ``user`` (for ``~user``), or None when unknown."""
        ...

    def matches(self, pattern: str, limit: int) -> list[str]:
        """The paths a shell glob ``pattern`` (absolute) matches now, at most ``limit``."""
        ...

    def for_one_decision(self) -> Filesystem:
        """This filesystem while one tool call is judged: it may remember what it looked
        up (a line can name a thousand paths under one directory), taking the
        filesystem as it stands meanwhile."""
        ...


class PathContextDirs(NamedTuple):
    """The directories a raw path is interpreted against, the filesystem that
    resolves it, and the paths whose edit only an exact rule of the person's own can
    allow (``protected``: the built-in table and a policy's additions, with the
    project's git directories wherever they are), and the secret stores whose reading
    only a rule of the person's own naming them can allow (``secrets``)."""

    root: Path
    cwd: Path
    home: Path
    fs: Filesystem
    protected: ProtectedPaths = DEFAULT_PROTECTED
    secrets: SecretStores = DEFAULT_SECRETS


class CanonicalPath(NamedTuple):
    names: tuple[str, ...]        # request names: lexical first, then the resolved target
    absolute: tuple[str, ...]     # the same, absolute
    outside: tuple[str, ...]      # the absolute names that lie outside the project

    @property
    def pattern(self) -> str:
        return self.names[0]


def expand_home(raw: str, where: PathContextDirs) -> str:
    """``~`` and ``~/…`` → home; ``~+`` → the working directory; ``~user`` → that
    user's home. A tilde form that cannot be resolved (``~-``, an unknown user) is
    made absolute as written, so it is judged as outside the project, never as a
    project-relative name."""
    if raw == "~" or raw.startswith("~/"):
        return where.home.as_posix() + raw[1:]
    if raw == "~+" or raw.startswith("~+/"):
        return where.cwd.as_posix() + raw[2:]
    if raw.startswith("~"):
        user, slash, rest = raw[1:].partition("/")
        home = where.fs.home_of(user) if user and user not in ("+", "-") else None
        return home.rstrip("/") + slash + rest if home else "/" + raw
    return raw


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def display(path: str, root: str) -> str:
    """Project-relative POSIX inside the project (``.`` for the root), else absolute."""
    if _inside(path, root):
        relative = path[len(root):].lstrip("/")
        return relative or "."
    return path


def canonical_path(raw: str, where: PathContextDirs) -> CanonicalPath:
    root = where.root.as_posix()
    joined = posixpath.join(where.cwd.as_posix(), expand_home(raw, where))
    lexical = posixpath.normpath(joined)
    if lexical.startswith("//"):
        lexical = "/" + lexical.lstrip("/")
    try:
        resolved = where.fs.realpath(joined)
    except (OSError, ValueError):
        resolved = lexical
    if resolved == lexical:  # (most paths: no symlink on the way)
        return CanonicalPath((display(lexical, root),), (lexical,),
                             () if _inside(lexical, root) else (lexical,))
    absolute = (lexical, resolved)
    return CanonicalPath(
        names=tuple(display(p, root) for p in absolute),
        absolute=absolute,
        outside=tuple(p for p in absolute if not _inside(p, root)),
    )


def special_roots(absolute: tuple[str, ...]) -> tuple[str, ...]:
    """The pseudo-filesystem roots the absolute names ``absolute`` lie under, sorted."""
    if not any(path.startswith(SPECIAL_ROOTS) for path in absolute):
        return ()  # (most paths: a prefix of none)
    return tuple(sorted({s for path in absolute if (s := special_root(path))}))


def special_root(absolute: str) -> str | None:
    """The pseudo-filesystem root (``/proc`` …) an absolute path lies under, if any."""
    for special in SPECIAL_ROOTS:
        if _inside(absolute, special):
            return special
    return None
