"""Commands as transactions: a confined command runs against a copy-on-write view of
the project, and what it changed is listed, judged and applied after it exits.

    tx = Transaction.begin(root, directory)       # upper/ and work/ under directory
    argv = tx.wrap(bwrap_argv)                    # unshare -Urm: mount the overlay, exec bwrap
    … run argv …
    changes = tx.changes()                        # created, modified, deleted, mode, special
    tx.apply(change, keep)                        # one change onto the real project
    tx.close()                                    # what was not applied is gone

The command runs in a new user and mount namespace (``unshare -Urm``: the person's
uid mapped to root there, which may mount an overlay since Linux 5.11) in which the
project root is an overlay: the real project the lower layer, a private directory
the upper. bubblewrap runs inside that namespace as today (with its own user
namespace, so the command sees its own uid), binding the project root -- the
overlay -- writable. Every write lands in the upper directory: new and changed
files whole (a changed file is copied up first), a deletion as a *whiteout* (a
character device 0/0), a directory replaced as a whole as one marked *opaque*
(the ``user.overlay.opaque`` attribute: the ``userxattr`` mount option). The
real project is untouched until :meth:`Transaction.apply`.

Listing is proportional to what changed, never to the project: the upper
directory is walked, and each entry is compared with the real path (``lstat``,
then the bytes when the size is the same). A file only touched (same bytes, same
mode) is no change. The sha256 of the bytes read so (up to :data:`DIGESTED`) is
kept: applying hands it on with the file (``landed``), so the undo step's record
does not read the file again.

Applying one change is a rename of its upper file onto the real path (the upper
directory is kept on the project's file system when it can be: then nothing is
copied; a file the command hard-linked is copied, so that no two landed names share
one inode) after walking down from the root without following a symbolic link (a
directory that became a link since is a conflict, never followed). A change whose
real path changed after the command started (its ``ctime`` is not older than the
start, as the file system stamps it) is a *conflict*: not applied unless the
caller says so. What no change is applied for is removed with the transaction.

Where it cannot run (no ``unshare``, no user namespaces, an upper directory on a
file system overlay refuses), :func:`support` says why, once per directory; the
caller then runs commands as before and says effects are not judged.

A transaction's directory is held (``flock``) by the process that began it, until
it is removed. :meth:`Transaction.close` hands it to a thread that removes it after
the command's result is back (a view's dozen entries cost a command milliseconds of
its start, tens on a busy disk): held until then, no other dm_cc takes it, and
:func:`wait_removed` waits for what was handed over (at exit too). One a killed
dm_cc left behind (with whatever its command wrote) is removed by the next
:meth:`Transaction.begin` in the same directory, once per process: a directory no
process holds, older than :data:`LEFT_OVER_AFTER` (so one being made right now is
never taken for it).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import posixpath
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

OPAQUE = "user.overlay.opaque"
OVERLAY_XATTRS = "user.overlay."
# Mounted by the unshared shell, then bubblewrap exec'd in its place: $1 the
# transaction's directory (lower, upper and work named relative to it, so no path
# needs escaping in the mount options), $2 the project root, $3 how many scratch
# areas (outside/N/, each with its lower, upper, work and the view to mount:
# :mod:`dm_cc.sandbox.outside`), then bwrap's argv.
# A view whose directory holds a ``mask`` (:mod:`dm_cc.sandbox.mask`) has it as a
# read-only layer above the real one.
OVERLAY = ('view() { l="$1/lower"; if [ -e "$1/mask" ]; then l="$1/mask:$l"; fi; '
           'mount -t overlay dm_cc -o "lowerdir=$l,upperdir=$1/upper,'
           'workdir=$1/work,userxattr" "$2"; }; ')
MOUNT_SCRIPT = (OVERLAY + 'cd "$1" && view . "$2" && n=$3 && i=0 && '
                'while [ "$i" -lt "$n" ]; do view "outside/$i" "outside/$i/view" || break; '
                'i=$((i + 1)); done && [ "$i" -eq "$n" ] '
                '|| { echo "dm_cc: the command\'s copy-on-write view of the project could '
                'not be set up" >&2; exit 125; }; shift 3; exec "$@"')
NOT_SET_UP = 125
DIGESTED = 4 * 1024 * 1024   # bytes: a file compared in listing up to this size is hashed too
CHUNK = 1024 * 1024
OPENED = 64        # project directories a transaction keeps open while applying
LEFT_OVER_AFTER = 60.0   # seconds: an unheld transaction's directory older is left over
_SWEPT: set[str] = set()   # the directories whose left-over transactions were removed

# told each path a change landed at: the path, its parent directory's descriptor, the
# inode and sha256 of a file renamed there whose bytes listing read
Landed = Callable[[str, int, "tuple[int, str] | None"], None]
Kind = Literal["created", "modified", "deleted", "mode", "special", "unreadable"]
What = Literal["file", "directory", "link", "other"]


@dataclass(frozen=True, slots=True)
class Support:
    usable: bool
    reason: str     # what was found, or why commands cannot run as transactions here


_TRIED: dict[int, Support] = {}    # by the file system (device) upper directories are on


def support(directory: str) -> Support:
    """Whether a command can run as a transaction with its upper directory under
    ``directory``: tried once per file system (an overlay mounted in ``unshare
    -Urm``, a file written through it landing in the upper directory)."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True, mode=0o700)
        device = os.stat(directory).st_dev
    except OSError as exc:
        return Support(False, f"commands cannot run as transactions here: {exc}")
    if device not in _TRIED:
        _TRIED[device] = _try(directory)
    return _TRIED[device]


def _try(directory: str) -> Support:
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if unshare is None or mount is None:
        return Support(False, "unshare or mount (util-linux) is not installed")
    try:
        with tempfile.TemporaryDirectory(dir=directory, prefix="probe-") as tmp:
            base = Path(tmp)
            for name in ("lower", "upper", "work", "view"):
                (base / name).mkdir()
            done = subprocess.run(
                [unshare, "--user", "--map-root-user", "--mount", "sh", "-c",
                 MOUNT_SCRIPT,
                 "sh", str(base), str(base / "view"), "0", "touch", str(base / "view" / "x")],
                capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
            if done.returncode != 0 or not (base / "upper" / "x").exists():
                error = done.stderr.strip().splitlines()
                return Support(False, "an overlay in a user namespace does not work here: "
                               + (error[0] if error else f"exit {done.returncode}"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Support(False, f"commands cannot run as transactions here: {exc}")
    return Support(True, "an overlay in a user namespace")


@dataclass(frozen=True, slots=True)
class Change:
    """One effect of a command on the project: ``path`` (project-relative, ``/``)."""

    path: str
    kind: Kind
    what: What
    size: int = 0            # bytes of a created or modified file
    target: str = ""         # a created symbolic link's target

    @property
    def shown(self) -> str:
        """The path on one line, every character to see (:func:`shown`)."""
        return shown(self.path)

    def describe(self) -> str:
        thing = {"directory": "directory ", "link": "link ", "other": ""}.get(self.what, "")
        if self.kind == "special":
            return f"made {self.shown} (a FIFO, socket or device: never applied)"
        if self.kind == "unreadable":
            return f"made {self.shown} unreadable (what it holds cannot be judged)"
        if self.what == "link" and self.kind != "deleted":
            return f"{self.kind} link {self.shown} -> {shown(self.target)}"
        return f"{self.kind} {thing}{self.shown}"


def shown(name: str) -> str:
    """``name`` as it is shown in a list of changes: what is not printable (a newline,
    a control character, a byte that is no UTF-8) escaped as Python writes it, so a
    name is one line and cannot pass for another change, or push one out of sight."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


class Conflict(Exception):
    """The real path changed after the command started (or can no longer be reached
    without following a link): the change is not applied unless forced."""


class Transaction:
    """One command's copy-on-write view of ``root`` (see the module docstring)."""

    def __init__(self, root: str, base: Path, started: int,
                 outside: Sequence[str] = ()) -> None:
        self.root = root
        self.base = base
        self.upper = base / "upper"
        self.started = started
        self.outside = tuple(outside)     # its scratch areas (outside/N/ each)
        self.same_fs = os.stat(base).st_dev == os.stat(root).st_dev
        self._changes: list[Change] | None = None
        self._opened: dict[str, int] = {}     # project directories reached, by path ("": root)
        # what each change's real path was when its conflict was judged (None: nothing
        # there; a directory is any directory): it must still be so when it is applied
        self._judged: dict[str, tuple[int, ...] | None] = {}
        self._replaced: set[str] = set()   # paths whose kind the command changed
        # the sha256 of upper files read whole in listing, by path, with what the file
        # was then (inode, size, mtime, ctime): handed on only while it still is so
        self._digests: dict[str, tuple[tuple[int, ...], str]] = {}
        self._held: int | None = None      # the lock on ``base`` (begin's), until close

    @classmethod
    def begin(cls, root: str, directory: Path, outside: Sequence[str] = (),
              mask: Path | None = None) -> Transaction:
        """A new view of ``root``, and one of each scratch area in ``outside``
        (absolute directories: :mod:`dm_cc.sandbox.outside`); ``mask``: a read-only
        layer over the real project (the spec's hidden paths: :mod:`dm_cc.sandbox.mask`)."""
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if str(directory) not in _SWEPT:
            _SWEPT.add(str(directory))
            _remove_left_over(directory)
        base = Path(tempfile.mkdtemp(dir=directory, prefix="tx-"))
        held = _hold(str(base))
        try:
            if mask is not None:
                (base / "mask").symlink_to(mask)
            for at, lower in [(base, root), *((base / "outside" / str(n), area)
                                              for n, area in enumerate(outside))]:
                for name in ("upper", "work", *(("view",) if at != base else ())):
                    (at / name).mkdir(parents=True)
                (at / "lower").symlink_to(lower)
            # now, as the file system stamps a change (its coarse clock, not time.time)
            began = cls(root, base, os.lstat(base / "lower").st_ctime_ns, outside)
        except BaseException:
            _remove(str(base))
            os.close(held)
            raise
        began._held = held
        return began

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` (bubblewrap's, which must bind the root writable, and each scratch
        area's view on it: :meth:`outside_views`) run in a new user and mount
        namespace where the root is the overlay."""
        return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", MOUNT_SCRIPT,
                "sh", str(self.base), self.root, str(len(self.outside)), *argv]

    def outside_views(self) -> list[str]:
        """Where each scratch area's overlay is mounted (to bind on the area)."""
        return [str(self.base / "outside" / str(n) / "view") for n in range(len(self.outside))]

    def outside_changes(self, ignore: Callable[[str], bool] = lambda path: False
                        ) -> list[tuple[str, Change]]:
        """What the command wrote in its scratch areas, as ``(area, change)`` (``ignore``:
        absolute paths the sandbox mounts on, as for :meth:`changes`). OSError when an
        upper directory cannot be read."""
        found: list[tuple[str, Change]] = []
        for n, area in enumerate(self.outside):
            view = Transaction(area, self.base / "outside" / str(n), self.started)
            found += [(area, change) for change in view.changes(
                ignore=functools.partial(_joined, ignore, area))]
        return found

    # ------------------------------------------------------------------ listing

    def changes(self, *, ignore: Callable[[str], bool] = lambda path: False) -> list[Change]:
        """What the command changed, parents before what they hold (deletions of a
        directory's entries before the directory). ``ignore``: paths that are the
        sandbox's own (an empty mount point bubblewrap made). OSError when the upper
        directory cannot be read (nothing of it may land then)."""
        if self._changes is None:
            found: list[Change] = []
            try:
                top = self._entries("", found)
            except FileNotFoundError:       # the command never started
                top = []
            # a stack, not recursion: a tree deeper than Python's stack is listed too
            pending: list[tuple[str, Iterator[os.DirEntry[str]]]] = [("", iter(top))]
            while pending:
                relative, entries = pending[-1]
                entry = next(entries, None)
                if entry is None:
                    pending.pop()
                elif self._entry(relative, entry, found, ignore):
                    path = f"{relative}/{entry.name}" if relative else entry.name
                    pending.append((path, iter(self._entries(path, found))))
            self._changes = found
        return self._changes

    def _entries(self, relative: str, found: list[Change]) -> list[os.DirEntry[str]]:
        """The upper directory's entries at ``relative``, by name; none when the command
        took its own read or search right away (said as an ``unreadable`` change)."""
        try:
            with os.scandir(self.upper / relative if relative else self.upper) as entries:
                return sorted(entries, key=lambda e: e.name)
        except PermissionError:
            found.append(Change(relative, "unreadable", "directory"))
            return []

    def _entry(self, relative: str, entry: os.DirEntry[str], found: list[Change],
               ignore: Callable[[str], bool]) -> bool:
        """The changes of one entry of the upper directory; whether it is a directory
        to walk into."""
        path = f"{relative}/{entry.name}" if relative else entry.name
        if ignore(path) and _empty(entry):
            return False
        real = os.path.join(self.root, path)
        mine = entry.stat(follow_symlinks=False)
        try:
            theirs: os.stat_result | None = os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            theirs = None
        if stat.S_ISCHR(mine.st_mode) and mine.st_rdev == 0:       # a whiteout
            if theirs is not None:
                self._deleted(path, theirs, found)
            return False
        if theirs is not None and _kind(theirs.st_mode) != _kind(mine.st_mode):
            self._deleted(path, theirs, found)                     # replaced by another kind
            self._replaced.add(path)
            theirs = None
        if stat.S_ISDIR(mine.st_mode):
            if theirs is None:
                found.append(Change(path, "created", "directory"))
            else:
                if _opaque(entry.path):                            # emptied, then refilled
                    self._deleted_within(path, {e.name for e in _listing(entry.path)}, found)
                if stat.S_IMODE(mine.st_mode) != stat.S_IMODE(theirs.st_mode):
                    found.append(Change(path, "mode", "directory"))
            return True
        if stat.S_ISLNK(mine.st_mode):
            target = os.readlink(entry.path)
            if theirs is None or os.readlink(real) != target:
                found.append(Change(path, "created" if theirs is None else "modified",
                                    "link", target=target))
        elif stat.S_ISREG(mine.st_mode):
            if theirs is None:
                found.append(Change(path, "created", "file", mine.st_size))
            elif mine.st_size != theirs.st_size or not self._same_bytes(path, entry.path, real):
                found.append(Change(path, "modified", "file", mine.st_size))
            elif stat.S_IMODE(mine.st_mode) != stat.S_IMODE(theirs.st_mode):
                found.append(Change(path, "mode", "file", mine.st_size))
        else:
            found.append(Change(path, "special", "other"))
        return False

    def _same_bytes(self, path: str, mine: str, theirs: str) -> bool:
        """Whether the upper file ``mine`` and the real ``theirs`` (of one size) hold the
        same bytes; ``mine``'s sha256 is kept on the way (up to :data:`DIGESTED`)."""
        try:
            first = os.open(mine, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            second = os.open(theirs, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            os.close(first)
            return False
        try:
            before = os.fstat(first)
            digest = hashlib.sha256() if before.st_size <= DIGESTED else None
            same = stat.S_ISREG(before.st_mode) and stat.S_ISREG(os.fstat(second).st_mode)
            while chunk := os.read(first, CHUNK):
                if digest is not None:
                    digest.update(chunk)
                if same and os.read(second, len(chunk)) != chunk:
                    same = False
                if not same and digest is None:
                    break
            if same and os.read(second, 1):
                same = False
            if digest is not None and _identity(os.fstat(first)) == _identity(before):
                self._digests[path] = (_identity(before), digest.hexdigest())
            return same
        except OSError:
            return False
        finally:
            os.close(first)
            os.close(second)

    def _deleted(self, path: str, theirs: os.stat_result, found: list[Change]) -> None:
        if stat.S_ISDIR(theirs.st_mode):
            self._deleted_within(path, set(), found)
        found.append(Change(path, "deleted", _kind(theirs.st_mode)))

    def _deleted_within(self, path: str, kept: set[str], found: list[Change]) -> None:
        """Every entry of the real directory ``path`` but ``kept``, deepest first (a
        stack, not recursion: however deep the directory)."""
        def entries(relative: str, but: Collection[str] = ()) -> Iterator[os.DirEntry[str]]:
            with contextlib.suppress(OSError):
                return iter(sorted((e for e in _listing(os.path.join(self.root, relative))
                                    if e.name not in but), key=lambda e: e.name))
            return iter(())

        pending: list[tuple[str, Iterator[os.DirEntry[str]]]] = [(path, entries(path, kept))]
        while pending:
            relative, listed = pending[-1]
            entry = next(listed, None)
            if entry is None:
                pending.pop()
                if pending:                 # a directory within: after what it held
                    found.append(Change(relative, "deleted", "directory"))
                continue
            inner = f"{relative}/{entry.name}"
            try:
                theirs = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(theirs.st_mode):
                pending.append((inner, entries(inner)))
            else:
                found.append(Change(inner, "deleted", _kind(theirs.st_mode)))

    # ------------------------------------------------------------------ applying

    def conflict(self, change: Change) -> str | None:
        """Why ``change`` conflicts with the project as it is now, or None. What its
        path is now is remembered: :meth:`apply` refuses it when the path changed
        again meanwhile (while the person was asked, another command landed)."""
        try:
            now = os.lstat(os.path.join(self.root, change.path))
        except (FileNotFoundError, NotADirectoryError):
            self._judged[change.path] = None
            if change.kind in ("modified", "mode"):
                return "it was deleted after the command started"
            return None
        self._judged[change.path] = _identity(now)
        if change.kind == "created" and change.what == "directory" and stat.S_ISDIR(now.st_mode):
            return None                                   # made by another change meanwhile
        if change.kind == "created" and change.path not in self._replaced:
            return "it was created after the command started"
        if now.st_ctime_ns >= self.started and not stat.S_ISDIR(now.st_mode):
            return "it changed after the command started"
        return None

    def apply(self, change: Change, *, keep: Callable[[str], None] = lambda path: None,
              landed: Landed | None = None) -> None:
        """Make ``change`` in the real project (``keep`` is told each path first, for
        undo; ``landed`` each path after, with the descriptor of its parent directory
        and, for a file renamed there whose bytes listing read, its inode and sha256).
        Conflict when a parent directory is no longer one (a link, a file); OSError
        when the file system refuses."""
        parent, name = _split(change.path)
        fd = self._directory(parent)
        judged = change.path in self._judged
        if judged and _now(name, fd) != self._judged[change.path]:
            raise Conflict(f"{change.path} changed after the change was judged")
        known = self._apply(change, name, fd, keep)
        if judged:                     # as this change left it, for the next one there
            self._judged[change.path] = _now(name, fd)
        if landed is not None:
            landed(change.path, fd, known)

    def parent(self, path: str) -> int:
        """An open descriptor of the project directory holding ``path`` (reached as
        :meth:`apply` reaches it: never through a link; the transaction's, not to be
        closed). Conflict when it is no longer a directory of the project."""
        return self._directory(_split(path)[0])

    def _apply(self, change: Change, name: str, fd: int,
               keep: Callable[[str], None]) -> tuple[int, str] | None:
        if change.kind == "deleted":
            keep(change.path)
            if change.what == "directory":
                self._forget(change.path)
                with contextlib.suppress(FileNotFoundError):
                    os.rmdir(name, dir_fd=fd)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
            return None
        source = f"{self.upper}/{change.path}"     # a str: per change, pathlib costs
        if change.kind == "created" and _now(name, fd) not in (
                None, *([(stat.S_IFDIR,)] if change.what == "directory" else [])):
            # what was there did not go (its removal was refused): a rename onto it
            # would remove it all the same
            raise Conflict(f"{change.path} is still there: its removal did not land")
        if change.kind == "mode":
            keep(change.path)
            try:
                os.chmod(name, stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd,
                         follow_symlinks=False)
            except NotImplementedError:     # a link was put in its place meanwhile
                raise Conflict(f"{change.path} is a link now") from None
            return None
        if change.what == "directory":
            keep(change.path)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd)
            return None
        keep(change.path)
        info = os.lstat(source)
        listed = self._digests.get(change.path)
        known = (info.st_ino, listed[1]) if listed and listed[0] == _identity(info) else None
        _clean_xattrs(source)
        # a file the command hard-linked to another lands as a copy of its own: one
        # inode under two names (an innocent one, and one the person was asked about)
        # would let a later write to the one -- in place, as the edit tool writes --
        # change the other, unasked
        if self.same_fs and info.st_nlink == 1:
            os.replace(source, name, dst_dir_fd=fd)
            return known
        _copy_into(source, name, fd)
        return None

    def _directory(self, relative: str) -> int:
        """An open descriptor of the project directory ``relative``, reached from the
        root (or the nearest directory reached before) without following a link;
        kept open until :meth:`close` (at most :data:`OPENED` of them: a wide tree
        must not run out of descriptors)."""
        if relative in self._opened:
            self._opened[relative] = self._opened.pop(relative)      # used last
            return self._opened[relative]
        parts = relative.split("/") if relative else []
        reached = len(parts)
        while reached and "/".join(parts[:reached]) not in self._opened:
            reached -= 1
        if reached == 0 and "" not in self._opened:
            self._opened[""] = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        fd = self._opened["/".join(parts[:reached])]
        for at in range(reached, len(parts)):
            path = "/".join(parts[:at + 1])
            try:
                fd = os.open(parts[at], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise Conflict(f"{path} is no longer a directory of the project "
                               f"({exc.strerror or exc})") from None
            self._opened[path] = fd
            self._close_some(keep=path)
        return fd

    def _close_some(self, keep: str) -> None:
        """Close the directories used longest ago but ``keep`` and the root, beyond
        :data:`OPENED` (reached again from the root when needed: never through a link)."""
        while len(self._opened) > OPENED:
            oldest = next(p for p in self._opened if p and p != keep)
            os.close(self._opened.pop(oldest))

    def _forget(self, relative: str) -> None:
        """A directory about to be removed: close it and what was reached through it."""
        for path in [p for p in self._opened if p == relative or p.startswith(relative + "/")]:
            os.close(self._opened.pop(path))

    def close(self) -> None:
        """Remove the transaction's directory: what was not applied is gone (by the
        removing thread, the directory held until then: :func:`wait_removed`)."""
        for fd in self._opened.values():
            os.close(fd)
        self._opened.clear()
        held, self._held = self._held, None
        if held is None:              # closed before, or never held: nothing to hand over
            return
        _REMOVING.hand(str(self.base), held)


# ------------------------------------------------------------------ helpers

def _joined(ignore: Callable[[str], bool], area: str, path: str) -> bool:
    return ignore(posixpath.join(area, path))


def _kind(mode: int) -> What:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "other"


def _identity(found: os.stat_result) -> tuple[int, ...]:
    """What tells a path changed: a directory is any directory (its entries change as
    the changes are applied); anything else, its inode, kind, size and ctime."""
    if stat.S_ISDIR(found.st_mode):
        return (stat.S_IFDIR,)
    return (found.st_dev, found.st_ino, stat.S_IFMT(found.st_mode), found.st_size,
            found.st_ctime_ns)


def _now(name: str, fd: int) -> tuple[int, ...] | None:
    try:
        return _identity(os.stat(name, dir_fd=fd, follow_symlinks=False))
    except FileNotFoundError:
        return None


def _listing(path: str) -> list[os.DirEntry[str]]:
    with os.scandir(path) as entries:
        return list(entries)


def _hold(path: str) -> int:
    """A descriptor of the directory ``path`` holding an exclusive ``flock`` on it
    (released when it is closed, or when the process ends however it ends)."""
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


class _Removing:
    """The thread removing closed transactions' directories, each held (its ``flock``
    descriptor open) until it is gone; started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._queue: list[tuple[str, int]] = []
        self._busy = False
        self._thread: threading.Thread | None = None

    def hand(self, path: str, held: int) -> None:
        with self._lock:
            self._queue.append((path, held))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="dm_cc-views",
                                                daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._busy = False
                    self._lock.notify_all()
                    self._lock.wait()
                path, held = self._queue.pop(0)
                self._busy = True
            try:
                _remove(path)
            finally:
                os.close(held)           # removed: no other process may take it

    def wait(self, timeout: float | None = None) -> bool:
        """Whether every directory handed over is removed (waiting up to ``timeout``)."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._queue and not self._busy, timeout)


_REMOVING = _Removing()


def wait_removed(timeout: float | None = None) -> bool:
    """Wait until the directories of the transactions closed so far are removed (at
    most ``timeout`` seconds); whether they are. A dm_cc that exits first leaves what
    is left unheld, for the next one to remove (:func:`_remove_left_over`)."""
    return _REMOVING.wait(timeout)


atexit.register(wait_removed, 10.0)


def _remove_left_over(directory: Path) -> None:
    """Remove the transactions in ``directory`` that no process holds and that are
    older than :data:`LEFT_OVER_AFTER` (a dm_cc killed while its command ran)."""
    try:
        names = [name for name in os.listdir(directory) if name.startswith("tx-")]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            # a young one is never locked here: its dm_cc may be about to hold it
            if time.time() - os.lstat(path).st_mtime < LEFT_OVER_AFTER:
                continue
            fd = _hold(path)
        except OSError:
            continue                 # held: its dm_cc still runs (or it is gone)
        try:
            _remove(path)
        finally:
            os.close(fd)


def _remove(path: str) -> None:
    """Remove ``path`` and all it holds, whatever the command made of it: by
    descriptors, one open at a time (paths longer than the system takes, trees deeper
    than descriptors may be open), with a stack (deeper than Python's), opening each
    directory it closed (``chmod 000``) again first."""
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    # per level: the names left to remove there, and that directory's own name
    pending: list[tuple[list[str], str | None]] = [([os.path.basename(path)], None)]
    try:
        while pending:
            left, here = pending[-1]
            if not left:
                pending.pop()
                if here is not None:        # emptied: up, and remove it
                    up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                    os.close(fd)
                    fd = up
                    with contextlib.suppress(OSError):
                        os.rmdir(here, dir_fd=fd)
                continue
            name = left.pop()
            try:
                if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=fd)
                    continue
                with contextlib.suppress(OSError):
                    os.chmod(name, 0o700, dir_fd=fd)
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                continue                    # cannot be removed: left behind
            os.close(fd)
            fd = inner
            try:
                names = os.listdir(fd)
            except OSError:
                names = []
            pending.append((names, name))
    except OSError:
        pass
    finally:
        os.close(fd)


def _empty(entry: os.DirEntry[str]) -> bool:
    info = entry.stat(follow_symlinks=False)
    if stat.S_ISDIR(info.st_mode):
        return not _listing(entry.path)
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _clean_xattrs(path: str) -> None:
    """Drop what overlay marked on a file (``user.overlay.*``) before it leaves."""
    with contextlib.suppress(OSError):
        for name in os.listxattr(path, follow_symlinks=False):
            if name.startswith(OVERLAY_XATTRS):
                os.removexattr(path, name, follow_symlinks=False)


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    if not name or name in (".", "..") or any(p in ("", ".", "..") for p in parent.split("/")
                                              if parent):
        raise Conflict(f"{path!r} is not a plain project path")
    return parent, name


def _copy_into(source: str, name: str, fd: int) -> None:
    """Another file system: copy beside the real path, then rename onto it."""
    temporary = f".{name}.dm_cc-{os.getpid()}"
    if os.path.islink(source):
        os.symlink(os.readlink(source), temporary, dir_fd=fd)
    else:
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                      stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd)
        with open(out, "wb") as target, open(source, "rb") as data:
            shutil.copyfileobj(data, target)
    os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
