"""What a confined command wrote outside the project, seen after it exits: the
places a person's own commands write outside their project -- the home
directory, ``/tmp``, the directory holding the project (a bare remote next to
it) -- are, in a transaction's view, copy-on-write *scratch*: an
overlay whose upper directory lies in the transaction's, dropped with it. So a
write there does not fail (nor land): it is recorded, and the sandbox knows what
the command wrote where it may not, whatever the command printed about it
(git's "unable to create temporary object directory" on a push to a local
remote says nothing of a read-only file system).

    areas = scratch_areas(spec, where, directory)            # where, for this spec
    tx = Transaction.begin(root, directory, outside=areas)   # an overlay for each
    bwrap_argv(spec, …, first=binds(areas, tx.outside_views(), spec))  # before the spec's
    discarded(tx.outside_changes(), caches(home, env))       # what did not land, but caches

An area is never the root, inside the project, or inside (or the same as) a path
the spec mounts itself (a writable one an edit rule opens, a hidden or read-only
one): the spec's mounts inside an area are bound after it, so what the policy
says of them holds as before. Mounts below an area (another file system) are
bound again read-only, as under ``--ro-bind / /``; one that holds another area
gets that area's overlay on top. An area whose file system an overlay cannot take
as its lower layer (tried once per file system) stays read-only, as before.

What is never reported: writes to caches (:data:`SCRATCH`), which tools make on
every run and lose nothing by losing.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from dm_cc.permissions import PathContextDirs
from dm_cc.sandbox.spec import SandboxSpec
from dm_cc.sandbox.transaction import OVERLAY, Change

MOUNTINFO = "/proc/self/mountinfo"
SHOWN_PLACES = 5          # places named in what the model is told

# Directories (under the home directory) where tools keep caches and logs they write
# on every run: writes there are discarded without a word. Each from its tool's
# documentation of the default location.
SCRATCH = (
    ".cache",                 # XDG_CACHE_HOME's default (XDG Base Directory spec): pip, go-build, uv …
    ".npm",                   # npm's `cache` default, with its _logs (docs.npmjs.com, config)
    ".cargo/registry",        # cargo's download caches (doc.rust-lang.org, cargo-home)
    ".cargo/git",
    ".cargo/.package-cache",  # cargo's lock on them
    "go/pkg/mod",             # GOMODCACHE's default (go help environment)
    ".gradle",                # Gradle's user home: caches, daemons (docs.gradle.org)
    ".m2/repository",         # Maven's local repository
    ".config/configstore",    # update-notifier's last check, npm's and most node CLIs'
)

_TRIED: dict[int, bool] = {}   # by the device of an area: an overlay takes it as lower layer


def scratch_areas(spec: SandboxSpec, where: PathContextDirs, directory: Path,
                  mounts: Sequence[str] | None = None) -> tuple[str, ...]:
    """The areas of ``spec``'s command (see the module docstring), outermost first;
    ``directory``: where upper directories live (an area is tried there once)."""
    mounts = mount_points() if mounts is None else mounts
    taken = [m.path.rstrip("/") or "/" for _, m in spec.mounts()]
    root = str(where.root)
    found: list[str] = []
    for path in (where.home, "/tmp", where.root.parent):
        real = os.path.realpath(path)
        if (real == "/" or real in found or not os.path.isdir(real) or _within(real, root)
                or any(_within(real, path_) for path_ in taken)):
            continue
        found.append(real)
    found.sort(key=_depth)
    areas: list[str] = []
    for area in found:
        holder = next((a for a in areas if _within(area, a)), None)
        if holder is not None and not any(_within(m, holder) and m != holder
                                          and _within(area, m) for m in mounts):
            continue      # inside another area, on its file system: its overlay has it
        if _overlays(area, directory):
            areas.append(area)
    return tuple(areas)


def binds(areas: Sequence[str], views: Sequence[str], spec: SandboxSpec,
          mounts: Sequence[str] | None = None) -> list[str]:
    """bubblewrap's arguments binding each area's view on the area, and the mounts
    below an area read-only again (as ``--ro-bind / /`` had them), outermost first;
    they go before the spec's own mounts."""
    mounts = mount_points() if mounts is None else mounts
    taken = [m.path.rstrip("/") for _, m in spec.mounts()]
    placed: list[tuple[str, list[str]]] = [
        (area, ["--bind", view, area]) for area, view in zip(areas, views, strict=True)]
    below = sorted({m for m in mounts if any(_within(m, a) and m != a for a in areas)
                    and m not in areas and not any(_within(m, t) for t in taken)}, key=_depth)
    for mount in below:
        if not any(_within(mount, other) and other != mount for other in below):
            placed.append((mount, ["--ro-bind-try", mount, mount]))
    placed.sort(key=lambda item: _depth(item[0]))
    return [arg for _, args in placed for arg in args]


def caches(home: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The cache directories of :data:`SCRATCH` (and ``$XDG_CACHE_HOME``), real paths."""
    return tuple(os.path.realpath(path) for path in (
        env.get("XDG_CACHE_HOME") or posixpath.join(home, ".cache"),
        *(posixpath.join(home, place) for place in SCRATCH)))


def discarded(found: Iterable[tuple[str, Change]],
              cached: Sequence[str]) -> list[tuple[str, Change]]:
    """What a command wrote in its areas (``(area, change)``), but in ``cached``."""
    return [(area, change) for area, change in found
            if not any(_within(posixpath.join(area, change.path), cache) for cache in cached)]


def summary(found: Sequence[tuple[str, Change]], home: str) -> str:
    """Where it wrote: the directory each topmost change is in (what a created
    directory holds counts with it; right in an area or the home directory, the
    change itself), with how many changes; a lone change by its path:
    ``/tmp/x/remote.git/objects (6 changes), ~/.gitconfig``."""
    created = {posixpath.join(area, c.path) for area, c in found
               if c.kind == "created" and c.what == "directory"}
    places: dict[str, list[str]] = {}
    for area, change in found:
        path = posixpath.join(area, change.path)
        top = next((d for d in sorted(created, key=len) if _within(path, d)), path)
        place = posixpath.dirname(top)
        places.setdefault(top if place in (area, home.rstrip("/")) else place, []).append(path)
    named = [_home(paths[0] if len(paths) == 1 else place, home)
             + ("" if len(paths) == 1 else f" ({len(paths)} changes)")
             for place, paths in places.items()]
    more = len(named) - SHOWN_PLACES
    return ", ".join(named[:SHOWN_PLACES]) + (f" and {more} more places" if more > 0 else "")


def _home(path: str, home: str) -> str:
    """``path``, ``~/…`` inside the home directory."""
    home = home.rstrip("/")
    return "~" + path[len(home):] if home and _within(path, home) else path


def mount_points(path: str = MOUNTINFO) -> list[str]:
    """Every mount point of this mount namespace (its mount table, unescaped)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as table:
            lines = table.read().splitlines()
    except OSError:
        return []
    return [_unescape(line.split(" ")[4]) for line in lines if len(line.split(" ")) > 4]


def _unescape(field: str) -> str:
    """A mount table field: space, tab, newline and backslash are written ``\\ooo``."""
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field


def _overlays(area: str, directory: Path) -> bool:
    """Whether an overlay in a user namespace takes ``area`` as its lower layer (with
    its upper directory under ``directory``): tried once per file system."""
    try:
        device = os.stat(area).st_dev
    except OSError:
        return False
    if device not in _TRIED:
        _TRIED[device] = _try(area, directory)
    return _TRIED[device]


def _try(area: str, directory: Path) -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.TemporaryDirectory(dir=directory, prefix="probe-") as tmp:
            base = Path(tmp)
            for name in ("upper", "work", "view"):
                (base / name).mkdir()
            (base / "lower").symlink_to(area)
            done = subprocess.run(
                [unshare, "--user", "--map-root-user", "--mount", "sh", "-c",
                 OVERLAY + 'cd "$1" && view . view', "sh", tmp],
                capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
            return done.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")
