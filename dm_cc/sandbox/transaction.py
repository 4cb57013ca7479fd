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
mode) is no change.

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
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

OPAQUE = "user.overlay.opaque"
OVERLAY_XATTRS = "user.overlay."
# Mounted by the unshared shell, then bubblewrap exec'd in its place: $1 the
# transaction's directory (lower, upper and work named relative to it, so no path
# needs escaping in the mount options), $2 the project root, then bwrap's argv.
MOUNT_SCRIPT = ('cd "$1" && mount -t overlay dm_cc -o '
                'lowerdir=lower,upperdir=upper,workdir=work,userxattr "$2" '
                '|| { echo "dm_cc: the command\'s copy-on-write view of the project could '
                'not be set up" >&2; exit 125; }; shift 2; exec "$@"')
NOT_SET_UP = 125

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
                 "sh", str(base), str(base / "view"), "touch", str(base / "view" / "x")],
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

    def describe(self) -> str:
        thing = {"directory": "directory ", "link": "link ", "other": ""}.get(self.what, "")
        if self.kind == "special":
            return f"made {self.path} (a FIFO, socket or device: never applied)"
        if self.kind == "unreadable":
            return f"made {self.path} unreadable (what it holds cannot be judged)"
        if self.what == "link" and self.kind != "deleted":
            return f"{self.kind} link {self.path} -> {self.target}"
        return f"{self.kind} {thing}{self.path}"


class Conflict(Exception):
    """The real path changed after the command started (or can no longer be reached
    without following a link): the change is not applied unless forced."""


class Transaction:
    """One command's copy-on-write view of ``root`` (see the module docstring)."""

    def __init__(self, root: str, base: Path, started: int) -> None:
        self.root = root
        self.base = base
        self.upper = base / "upper"
        self.started = started
        self.same_fs = os.stat(base).st_dev == os.stat(root).st_dev
        self._changes: list[Change] | None = None
        self._opened: dict[str, int] = {}     # project directories reached, by path ("": root)
        # what each change's real path was when its conflict was judged (None: nothing
        # there; a directory is any directory): it must still be so when it is applied
        self._judged: dict[str, tuple[int, ...] | None] = {}
        self._replaced: set[str] = set()   # paths whose kind the command changed

    @classmethod
    def begin(cls, root: str, directory: Path) -> Transaction:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        base = Path(tempfile.mkdtemp(dir=directory, prefix="tx-"))
        (base / "upper").mkdir()
        (base / "work").mkdir()
        (base / "lower").symlink_to(root)
        # now, as the file system stamps a change (its coarse clock, not time.time)
        return cls(root, base, os.lstat(base / "lower").st_ctime_ns)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` (bubblewrap's, which must bind the root writable) run in a new user
        and mount namespace where the root is the overlay."""
        return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", MOUNT_SCRIPT,
                "sh", str(self.base), self.root, *argv]

    # ------------------------------------------------------------------ listing

    def changes(self, *, ignore: Callable[[str], bool] = lambda path: False) -> list[Change]:
        """What the command changed, parents before what they hold (deletions of a
        directory's entries before the directory). ``ignore``: paths that are the
        sandbox's own (an empty mount point bubblewrap made)."""
        if self._changes is None:
            found: list[Change] = []
            with contextlib.suppress(FileNotFoundError):
                self._walk("", found, ignore)
            self._changes = found
        return self._changes

    def _walk(self, relative: str, found: list[Change], ignore: Callable[[str], bool]) -> None:
        upper = self.upper / relative if relative else self.upper
        try:
            with os.scandir(upper) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except PermissionError:   # the command took its own read or search right away
            found.append(Change(relative, "unreadable", "directory"))
            return
        for entry in listed:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if ignore(path) and _empty(entry):
                continue
            real = os.path.join(self.root, path)
            mine = entry.stat(follow_symlinks=False)
            try:
                theirs: os.stat_result | None = os.lstat(real)
            except (FileNotFoundError, NotADirectoryError):
                theirs = None
            if stat.S_ISCHR(mine.st_mode) and mine.st_rdev == 0:       # a whiteout
                if theirs is not None:
                    self._deleted(path, theirs, found)
                continue
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
                self._walk(path, found, ignore)
            elif stat.S_ISLNK(mine.st_mode):
                target = os.readlink(entry.path)
                if theirs is None or os.readlink(real) != target:
                    found.append(Change(path, "created" if theirs is None else "modified",
                                        "link", target=target))
            elif stat.S_ISREG(mine.st_mode):
                if theirs is None:
                    found.append(Change(path, "created", "file", mine.st_size))
                elif mine.st_size != theirs.st_size or not _same_bytes(entry.path, real):
                    found.append(Change(path, "modified", "file", mine.st_size))
                elif stat.S_IMODE(mine.st_mode) != stat.S_IMODE(theirs.st_mode):
                    found.append(Change(path, "mode", "file", mine.st_size))
            else:
                found.append(Change(path, "special", "other"))

    def _deleted(self, path: str, theirs: os.stat_result, found: list[Change]) -> None:
        if stat.S_ISDIR(theirs.st_mode):
            self._deleted_within(path, set(), found)
        found.append(Change(path, "deleted", _kind(theirs.st_mode)))

    def _deleted_within(self, path: str, kept: set[str], found: list[Change]) -> None:
        """Every entry of the real directory ``path`` but ``kept``, deepest first."""
        with contextlib.suppress(OSError):
            for entry in sorted(_listing(os.path.join(self.root, path)), key=lambda e: e.name):
                if entry.name in kept:
                    continue
                inner = f"{path}/{entry.name}"
                self._deleted(inner, entry.stat(follow_symlinks=False), found)

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

    def apply(self, change: Change, *, keep: Callable[[str], None] = lambda path: None) -> None:
        """Make ``change`` in the real project (``keep`` is told each path first, for
        undo). Conflict when a parent directory is no longer one (a link, a file);
        OSError when the file system refuses."""
        parent, name = _split(change.path)
        fd = self._directory(parent)
        judged = change.path in self._judged
        if judged and _now(name, fd) != self._judged[change.path]:
            raise Conflict(f"{change.path} changed after the change was judged")
        self._apply(change, name, fd, keep)
        if judged:                     # as this change left it, for the next one there
            self._judged[change.path] = _now(name, fd)

    def _apply(self, change: Change, name: str, fd: int, keep: Callable[[str], None]) -> None:
        if change.kind == "deleted":
            keep(change.path)
            if change.what == "directory":
                self._forget(change.path)
                with contextlib.suppress(FileNotFoundError):
                    os.rmdir(name, dir_fd=fd)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
            return
        source = self.upper / change.path
        if change.kind == "mode":
            keep(change.path)
            try:
                os.chmod(name, stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd,
                         follow_symlinks=False)
            except NotImplementedError:     # a link was put in its place meanwhile
                raise Conflict(f"{change.path} is a link now") from None
            return
        if change.what == "directory":
            keep(change.path)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd)
            return
        keep(change.path)
        _clean_xattrs(source)
        # a file the command hard-linked to another lands as a copy of its own: one
        # inode under two names (an innocent one, and one the person was asked about)
        # would let a later write to the one -- in place, as the edit tool writes --
        # change the other, unasked
        if self.same_fs and os.lstat(source).st_nlink == 1:
            os.replace(source, name, dst_dir_fd=fd)
        else:
            _copy_into(source, name, fd)

    def _directory(self, relative: str) -> int:
        """An open descriptor of the project directory ``relative``, reached from the
        root (or the nearest directory reached before) without following a link;
        kept open until :meth:`close`."""
        if relative in self._opened:
            return self._opened[relative]
        if not relative:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        else:
            parent, _, name = relative.rpartition("/")
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                             dir_fd=self._directory(parent))
            except OSError as exc:
                raise Conflict(f"{relative} is no longer a directory of the project "
                               f"({exc.strerror or exc})") from None
        self._opened[relative] = fd
        return fd

    def _forget(self, relative: str) -> None:
        """A directory about to be removed: close it and what was reached through it."""
        for path in [p for p in self._opened if p == relative or p.startswith(relative + "/")]:
            os.close(self._opened.pop(path))

    def close(self) -> None:
        """Remove the transaction's directory: what was not applied is gone."""
        for fd in self._opened.values():
            os.close(fd)
        self._opened.clear()
        shutil.rmtree(self.base, ignore_errors=True)


# ------------------------------------------------------------------ helpers

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


def _same_bytes(first: str, second: str) -> bool:
    try:
        return filecmp.cmp(first, second, shallow=False)
    except OSError:
        return False


def _clean_xattrs(path: Path) -> None:
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


def _copy_into(source: Path, name: str, fd: int) -> None:
    """Another file system: copy beside the real path, then rename onto it."""
    temporary = f".{name}.dm_cc-{os.getpid()}"
    if source.is_symlink():
        os.symlink(os.readlink(source), temporary, dir_fd=fd)
    else:
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                      stat.S_IMODE(os.lstat(source).st_mode), dir_fd=fd)
        with open(out, "wb") as target, open(source, "rb") as data:
            shutil.copyfileobj(data, target)
    os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
