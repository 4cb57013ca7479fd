"""Protected paths held by the sandbox: the files that make code run later
(:mod:`dm_cc.permissions.protected`: ``.envrc``, editor tasks, CI workflows, hook
managers, a virtualenv's ``.pth`` and ``activate``, other assistants' settings ...,
with what the policy files add) are read-only wherever they exist in the project.

As the gate has it: one the person's own rule names exactly (the gate then allows
editing it) stays writable. A directory whose every protected entry is held, and in
which a new file would be protected too (``.github/workflows/``, ``.husky/``), is one
mount. What lies in a git directory, and dm_cc's own directory, are left to
:mod:`dm_cc.sandbox.git` and the spec: git must still write its index, ``HEAD`` and
objects there, and keeps what it runs read-only by its own rules.

    mounts = protected_paths(gate, where, tree, ".dm_cc")
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from dm_cc.permissions import Gate, PathContextDirs, ProtectedPaths, path_requests
from dm_cc.sandbox.git import git_places
from dm_cc.sandbox.screen import NEW_FILE, anywhere
from dm_cc.sandbox.spec import Mount
from dm_cc.sandbox.tree import Tree

# Every mount for a protected path has this why first (dm_cc.sandbox.derive pins them all).
RUNS_LATER = "protected: "


def protected_paths(gate: Gate, where: PathContextDirs, tree: Tree, own_dir: str) -> list[Mount]:
    """The read-only mounts for the project's protected paths (see the module docstring)."""
    table = where.protected
    root = where.root.as_posix()
    left = {*git_places(tree), own_dir}
    held: dict[str, str] = {}
    opened: set[str] = set()
    for entry in table.entries:
        for path in anywhere(entry.pattern, root, where.home.as_posix()).paths(tree):
            if path in held or path in opened or _within_any(path, left):
                continue
            match = table.why([path])
            if match is None:
                continue
            if gate.decide(path_requests("edit", posixpath.join(root, path), where)).action \
                    == "allow":
                opened.add(path)
            else:
                held[path] = f"{RUNS_LATER}{match.why} ({match.pattern})"
    held = {path: why for path, why in held.items()     # a directory with an opened entry:
            if not any(_under_any(p, [path]) for p in opened)}   # its entries one by one
    whole = {top: held[path] for path in held
             if (top := _whole(path, table, opened, tree)) is not None}
    return [Mount(posixpath.join(root, path), why, tree.is_dir(path))
            for path, why in sorted({**held, **whole}.items())
            if not any(path != top and _under_any(path, [top]) for top in whole)]


def _whole(path: str, table: ProtectedPaths, opened: set[str], tree: Tree) -> str | None:
    """The highest directory holding ``path`` in which a new file is protected too and
    nothing is opened: held as one mount; None when there is none."""
    found = None
    for directory in _parents(path):
        if not tree.is_dir(directory) or any(_under_any(p, [directory]) for p in opened):
            break
        if table.why([posixpath.join(directory, NEW_FILE)]) is None:
            break
        found = directory
    return found


def _parents(path: str) -> Iterator[str]:
    while (path := posixpath.dirname(path)) not in ("", "."):
        yield path


def _within_any(path: str, directories: set[str]) -> bool:
    """``path`` is one of ``directories`` or under one: as many lookups as it has
    segments, however many directories (a project of a thousand repositories)."""
    while path:
        if path in directories:
            return True
        path = path.rpartition("/")[0]
    return False


def _under_any(path: str, directories: list[str]) -> bool:
    return any(path == d or path.startswith(d + "/") for d in directories)
