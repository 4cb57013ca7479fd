"""What a transaction holds without a mount: the spec's hidden and read-only paths
inside the project, as one read-only overlay layer and a list of discarded effects.

    outer, held = split(spec, root)        # bwrap's spec: no mount inside the project
    layer = held.layer(masks_dir)          # the mask: built once per spec, then reused
    held.why("api/.env")                   # why a change there never lands, or None

bubblewrap's start grows with the square of its mounts (it reads its mount table
again for each): 1,000 hidden ``.env`` files cost seconds a command, a few
thousand fail. A command run as a transaction (:mod:`dm_cc.sandbox.transaction`)
sees the project through an overlay anyway, so inside the project:

* **a hidden path** is an empty file (mode ``0444``), or an empty directory
  marked opaque (``user.overlay.opaque``), at its place in one extra lower layer,
  the *mask*, between the real project and the command's upper directory: the
  command reads the mask's empty file, never the real one, as it read the empty
  file bound over it before. The mask's directories on the way take the real
  ones' modes, so copying one up changes nothing;
* **a read-only path** is not mounted: what the command writes there lands in its
  view, as any write, and is *discarded* after it, never applied;
* so is any change at or under a hidden path (a write to the mask's empty file, a
  removal): the real file is never replaced or removed through it;
* the directories pinned against renames are not mounted either: a rename is a
  removal and a creation among the changes, each judged.

The mask depends only on the hidden paths (their place and whether a directory),
so it is built once per spec and kept, named by them, under dm_cc's state
directory (hidden from commands); a spec derived again when the tree changed (a
command planted a ``.env``) gets its own. The cost of a command's start no longer
depends on how many paths are hidden or held.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from dm_cc.sandbox.derive import PINNED
from dm_cc.sandbox.spec import Mount, SandboxSpec

OPAQUE = "user.overlay.opaque"
KEPT_MASKS = 8        # masks kept on disk (a parent and its subagents take turns)


@dataclass(frozen=True)
class Held:
    """The spec's paths inside ``root`` a transaction holds itself (relative POSIX)."""

    root: str
    hidden: tuple[Mount, ...] = ()
    read_only: tuple[Mount, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.hidden or self.read_only)

    def why(self, relative: str) -> str | None:
        """Why a change at ``relative`` (project-relative) is discarded: it is at or
        under a hidden or read-only path of the spec; None otherwise. As many
        lookups as the path has segments, however many paths are held."""
        found = self._index
        path = relative
        while path:
            hit = found.get(path)
            if hit is not None:
                return hit
            path = path.rpartition("/")[0]
        return None

    @cached_property
    def _index(self) -> dict[str, str]:
        index: dict[str, str] = {}
        for mount in self.read_only:
            index[_relative(mount.path, self.root)] = (
                f"the sandbox keeps it read-only ({mount.why}): a change there never lands")
        for mount in self.hidden:   # hidden wins: the command never saw what is there
            index[_relative(mount.path, self.root)] = (
                f"the sandbox hides it ({mount.why}): the command saw an empty "
                f"{'directory' if mount.directory else 'file'} there, and a change there "
                "never lands")
        return index

    @cached_property
    def _ways(self) -> dict[str, int]:
        """The directories on the way to the hidden paths, with the real ones' modes:
        the overlay shows the top layer's directory, and a copy-up must change no mode."""
        modes: dict[str, int] = {}
        for mount in self.hidden:
            parts = _relative(mount.path, self.root).split("/")
            for at in range(1, len(parts)):
                inner = "/".join(parts[:at])
                if inner not in modes:
                    modes[inner] = _mode_of(os.path.join(self.root, inner))
        return modes

    @cached_property
    def key(self) -> str:
        """The mask's name: what it depends on (the hidden paths, their kinds, and the
        modes of the directories on their way -- a ``chmod`` gets a mask of its own)."""
        digest = hashlib.sha256()
        for mount in sorted(self.hidden, key=lambda m: m.path):
            digest.update(f"{int(mount.directory)}{_relative(mount.path, self.root)}\0".encode(
                "utf-8", "surrogateescape"))
        for inner, mode in sorted(self._ways.items()):
            digest.update(f"{mode:o}{inner}\0".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()[:32]

    def layer(self, directory: Path) -> Path | None:
        """The mask for the hidden paths (None when there are none): built under
        ``directory`` the first time, then reused; the fewest kept (:data:`KEPT_MASKS`).
        OSError when it cannot be built (the caller refuses the command then)."""
        if not self.hidden:
            return None
        target = directory / self.key
        if target.is_dir():
            os.utime(target)          # used last: kept longest
            return target
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        building = Path(tempfile.mkdtemp(dir=directory, prefix="building-"))
        try:
            self._build(building)
            os.chmod(building, 0o755)
            try:
                os.rename(building, target)
            except OSError:           # built meanwhile by another session's command
                if not target.is_dir():
                    raise
                _remove(building)
        except BaseException:
            _remove(building)
            raise
        _forget_old(directory, keep=target)
        return target

    def _build(self, base: Path) -> None:
        for inner in sorted(self._ways, key=lambda d: d.count("/")):
            (base / inner).mkdir(mode=0o700)
        for mount in sorted(self.hidden, key=lambda m: m.path):
            relative = _relative(mount.path, self.root)
            if not relative:
                continue                       # the root itself is never hidden whole
            place = base / relative
            if mount.directory:
                place.mkdir(mode=0o700, exist_ok=True)
                os.setxattr(place, OPAQUE, b"y", follow_symlinks=False)
                os.chmod(place, 0o755)
            else:
                os.close(os.open(place, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o444))
                os.chmod(place, 0o444)
        for inner in sorted(self._ways, key=lambda d: d.count("/"), reverse=True):
            os.chmod(base / inner, self._ways[inner])


def split(spec: SandboxSpec, root: str) -> tuple[SandboxSpec, Held]:
    """``spec`` without its mounts inside ``root`` (the project root itself stays:
    it is the overlay), and those it had there -- hidden and read-only paths, which
    the transaction holds; the pins against renames inside it are dropped."""
    def within(mount: Mount) -> bool:
        return mount.path.startswith(root.rstrip("/") + "/")

    hidden = tuple(m for m in spec.hidden if within(m))
    read_only = tuple(m for m in spec.read_only if within(m))
    outer = replace(
        spec, hidden=tuple(m for m in spec.hidden if not within(m)),
        read_only=tuple(m for m in spec.read_only if not within(m)),
        writable=tuple(m for m in spec.writable if not (within(m) and m.why == PINNED)))
    return outer, Held(root.rstrip("/"), hidden, read_only)


def _mode_of(path: str) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o755


def _relative(path: str, root: str) -> str:
    root = root.rstrip("/")
    return path[len(root) + 1:] if path.startswith(root + "/") else ""


def _forget_old(directory: Path, keep: Path) -> None:
    """Remove masks beyond :data:`KEPT_MASKS`, used longest ago first (and leftovers
    of a build that was interrupted)."""
    with contextlib.suppress(OSError):
        found = sorted((entry for entry in os.scandir(directory) if entry.is_dir()),
                       key=lambda e: e.stat().st_mtime_ns, reverse=True)
        kept = 0
        for entry in found:
            if entry.path == str(keep) or (not entry.name.startswith("building-")
                                           and kept < KEPT_MASKS - 1):
                kept += entry.path != str(keep)
                continue
            _remove(Path(entry.path))


def _remove(path: Path) -> None:
    """A mask's directories may be closed to their owner (as the real ones were)."""
    pending = [str(path)]
    while pending:
        directory = pending.pop()
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)
            with os.scandir(directory) as entries:
                pending += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    shutil.rmtree(path, ignore_errors=True)
