"""What a path inside a project is, and putting an earlier state back, never
following a symlink: the file half of the undo store (``undo.py``).

    with Tree(root) as tree:
        state = tree.look("src/a.py", digest=True)    # State: absent|file|symlink|dir|other
        state, kept = tree.keep("src/a.py", blob, moving=False)   # before a change
        tree.remove("build/out.o", current)            # unlink, or rmdir when empty
        tree.put("src/a.py", state, blob, now)         # the file, link or directory back

Every path is relative to the root, POSIX, with no ``..`` (``undo_records.clean``). Each
parent is opened with ``O_NOFOLLOW`` from the root down, and the last component is
looked at, created, replaced or removed relative to its parent's descriptor: a
parent that is a symlink (or no directory) is :class:`Unsafe`, never followed, so
nothing outside the root is read or changed however the project changed since.
POSIX only (``dir_fd``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dm_cc.session.undo_records import State

HASH_LIMIT = 4 * 1024 * 1024   # files up to this size get a sha256 in their state
CHUNK = 1024 * 1024
_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Unsafe(Exception):
    """A path cannot be looked at or changed without following a symlink, or is not
    one the undo store keeps; the message says why, naming the path."""


def _state(info: os.stat_result, target: str | None = None,
           sha256: str | None = None) -> State:
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISREG(info.st_mode):
        return State("file", mode, info.st_size, info.st_mtime_ns, sha256)
    if stat.S_ISLNK(info.st_mode):
        return State("symlink", target=target)
    if stat.S_ISDIR(info.st_mode):
        return State("dir", mode)
    return State("other", mode)


def _digest_of(fd: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _temporary(name: str) -> str:
    return f".{name[:100]}.dm_cc-undo-{secrets.token_hex(4)}"


class Tree:
    """The project under ``root``, looked at and changed without following a symlink
    (see the module doc). A context manager: it holds the root's descriptor."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd: int | None = None

    def __enter__(self) -> Tree:
        try:
            self._fd = os.open(self.root, _NOFOLLOW_DIR)
        except OSError as exc:
            raise Unsafe(f"cannot open the project {self.root}: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------------ parents

    @contextmanager
    def parent(self, relative: str, *, create: bool = False,
               looking: bool = False) -> Iterator[int | None]:
        """The descriptor of ``relative``'s parent directory, opened one component at a
        time without following a symlink; None when a parent is missing (``create``:
        made, 0777 less the umask). Unsafe when a parent is a symlink or no directory
        -- but ``looking``, a symlink parent is None too: without following it, nothing
        is at the path."""
        assert self._fd is not None, "use Tree as a context manager"
        parts = relative.split("/")[:-1]
        fds: list[int] = []
        current: int | None = self._fd
        try:
            for index, part in enumerate(parts):
                assert current is not None
                opened = self._open_dir(part, current, parts[: index + 1], relative, create,
                                        looking)
                if opened is None:
                    current = None
                    break
                fds.append(opened)
                current = opened
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        try:
            yield current
        finally:
            for fd in fds:
                os.close(fd)

    def _open_dir(self, part: str, at: int, parts: list[str], relative: str,
                  create: bool, looking: bool = False) -> int | None:
        """The directory ``part`` in ``at``, never through a symlink (None: missing)."""
        for attempt in range(2):
            try:
                return os.open(part, _NOFOLLOW_DIR, dir_fd=at)
            except FileNotFoundError:
                if not create or attempt:
                    return None
                with suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=at)
            except OSError as exc:
                where = "/".join(parts)
                if exc.errno not in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
                    raise Unsafe(f"{relative}: cannot open its parent {where}: "
                                 f"{exc.strerror or exc}") from None
                try:
                    info = os.stat(part, dir_fd=at, follow_symlinks=False)
                except OSError:
                    return None
                if stat.S_ISLNK(info.st_mode) and not looking:
                    raise Unsafe(f"{relative}: its parent {where} is now a symlink") from None
                if create:
                    raise Unsafe(f"{relative}: its parent {where} is not a directory") from None
                return None   # a file where a parent was: the path is absent
        return None

    # ------------------------------------------------------------------ looking

    def look(self, relative: str, *, digest: bool = False) -> State:
        """The state of ``relative`` now (``digest``: with a file's sha256 when it is
        at most HASH_LIMIT bytes): absent under a parent that is a symlink (what a
        link leads to is the link's, never the path's)."""
        with self.parent(relative, looking=True) as at:
            return State("absent") if at is None else _look(at, relative, digest)

    # ------------------------------------------------------------------ keeping

    def keep(self, relative: str, blob: Path | str, *, moving: bool) -> tuple[State, int]:
        """The state of ``relative`` now and the bytes kept for it: a regular file's
        content goes to ``blob`` -- a hard link when ``moving`` (the caller replaces or
        unlinks the file, never writes into it) and the store is on the same
        filesystem, else a copy (with its sha256). Unsafe for a special file or a
        symlinked parent; OSError when the copy cannot be made."""
        with self.parent(relative) as at:
            if at is None:
                return State("absent"), 0
            return keep_at(at, relative, blob, moving=moving)

    # ------------------------------------------------------------------ changing

    def remove(self, relative: str, now: State) -> bool:
        """Remove what is at ``relative`` (in state ``now``): unlink, or rmdir a
        directory -- only when empty; whether it was removed."""
        with self.parent(relative) as at:
            if at is None or now.kind == "absent":
                return False
            name = relative.rsplit("/", 1)[-1]
            if now.kind == "dir":
                try:
                    os.rmdir(name, dir_fd=at)
                except OSError as exc:
                    if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                        return False
                    raise
                return True
            os.unlink(name, dir_fd=at)
            return True

    def put(self, relative: str, state: State, blob: Path | None, now: State) -> bool:
        """Make ``relative`` be ``state`` again (a file from ``blob``; its content and
        mode, the modification time now, as ``git checkout`` does); missing parents
        are made. ``now`` is what is there (an absent, file, symlink or other path;
        a directory in the way must be removed first). Whether anything changed."""
        with self.parent(relative, create=True) as at:
            if at is None:
                raise Unsafe(f"{relative}: its parent directory could not be made")
            name = relative.rsplit("/", 1)[-1]
            if state.kind == "dir":
                if now.kind != "dir":
                    os.mkdir(name, state.mode, dir_fd=at)
                fd = os.open(name, _NOFOLLOW_DIR, dir_fd=at)
                try:
                    changed = now.kind != "dir" or stat.S_IMODE(os.fstat(fd).st_mode) != state.mode
                    os.fchmod(fd, state.mode)
                finally:
                    os.close(fd)
                return changed
            if state.kind == "symlink":
                assert state.target is not None
                if now.kind == "symlink" and now.target == state.target:
                    return False
                temporary = _temporary(name)
                os.symlink(state.target, temporary, dir_fd=at)
                _replace(temporary, name, at)
                return True
            if state.kind == "file":
                assert blob is not None
                temporary = _place(blob, at, name, state.mode)
                _replace(temporary, name, at)
                return True
            raise Unsafe(f"{relative}: cannot put back {state.kind}")

    def entries(self, relative: str) -> list[str] | None:
        """The names in the directory ``relative`` (None: it is no directory now)."""
        with self.parent(relative) as at:
            if at is None:
                return None
            try:
                fd = os.open(relative.rsplit("/", 1)[-1], _NOFOLLOW_DIR, dir_fd=at)
            except OSError:
                return None
            try:
                return os.listdir(fd)
            finally:
                os.close(fd)


def keep_at(at: int, relative: str, blob: Path | str, *, moving: bool) -> tuple[State, int]:
    """:meth:`Tree.keep`, ``at`` the descriptor of ``relative``'s parent directory (the
    caller's, opened without following a link)."""
    name = relative.rsplit("/", 1)[-1]
    if moving:        # linked first: what was linked says what it is (no stat before)
        try:
            os.link(name, blob, src_dir_fd=at, follow_symlinks=False)
        except FileNotFoundError:
            return State("absent"), 0
        except OSError:
            pass      # a directory, another file system: looked at below
        else:
            linked = os.lstat(blob)
            if stat.S_ISREG(linked.st_mode):
                return _state(linked), linked.st_size
            os.unlink(blob)   # a link, a special file: looked at below
    state = _look(at, relative, digest=False)
    if state.kind == "other":
        raise Unsafe(f"{relative}: a special file (device, FIFO or socket) cannot be "
                     "kept for undo")
    if state.kind != "file":
        return state, 0
    return _copy_out(at, name, relative, blob)


def look_at(at: int, relative: str, *, known: tuple[int, str] | None = None) -> State:
    """The state of ``relative`` now, with a file's sha256 (up to HASH_LIMIT bytes), ``at``
    the descriptor of its parent directory (the caller's). ``known``: the inode and sha256
    of a file the caller just read whole (what it renamed here): when the file there is
    that inode, its bytes are not read again."""
    if known is not None:
        name = relative.rsplit("/", 1)[-1]
        try:
            info = os.stat(name, dir_fd=at, follow_symlinks=False)
        except OSError:
            info = None
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_ino == known[0] \
                and info.st_size <= HASH_LIMIT:
            return _state(info, sha256=known[1])
    return _look(at, relative, digest=True)


def _look(at: int, relative: str, digest: bool) -> State:
    name = relative.rsplit("/", 1)[-1]
    try:
        info = os.stat(name, dir_fd=at, follow_symlinks=False)
    except FileNotFoundError:
        return State("absent")
    except OSError as exc:
        raise Unsafe(f"{relative}: cannot look at it: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        return _state(info, os.readlink(name, dir_fd=at))
    if digest and stat.S_ISREG(info.st_mode) and info.st_size <= HASH_LIMIT:
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=at)
        except OSError as exc:
            raise Unsafe(f"{relative}: cannot read it: {exc.strerror or exc}") from None
        try:
            again = os.fstat(fd)
            if not stat.S_ISREG(again.st_mode):
                return _state(again)
            return _state(again, sha256=_digest_of(fd))
        finally:
            os.close(fd)
    return _state(info)


def _copy_out(at: int, name: str, relative: str, blob: Path | str) -> tuple[State, int]:
    """Copy the regular file ``name`` to ``blob`` (0600), hashing it on the way."""
    try:
        source = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=at)
    except OSError as exc:
        raise Unsafe(f"{relative}: cannot read it: {exc.strerror or exc}") from None
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            raise Unsafe(f"{relative}: it changed while being kept; try again")
        digest = hashlib.sha256()
        size = 0
        target = os.open(blob, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            while chunk := os.read(source, CHUNK):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(target, view):]
                size += len(chunk)
        finally:
            os.close(target)
        state = State("file", stat.S_IMODE(info.st_mode), size, info.st_mtime_ns,
                      digest.hexdigest())
        return state, size
    finally:
        os.close(source)


def _place(blob: Path, at: int, name: str, mode: int) -> str:
    """A new file beside ``name`` holding ``blob``'s content with ``mode`` and the time
    now: a hard link of the blob when it can be (the store forgets the blob next),
    else a copy. Its name."""
    temporary = _temporary(name)
    try:
        os.link(blob, temporary, dst_dir_fd=at)
    except OSError:
        pass
    else:
        try:
            fd = os.open(temporary, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=at)
        except OSError:
            os.unlink(temporary, dir_fd=at)   # unreadable as linked: copy it instead
        else:
            _finish(fd, mode)
            return temporary
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=at)
    try:
        with open(blob, "rb") as source:
            while chunk := source.read(CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        with suppress(OSError):
            os.unlink(temporary, dir_fd=at)
        raise
    _finish(fd, mode)
    return temporary


def _finish(fd: int, mode: int) -> None:
    try:
        os.fchmod(fd, mode)
        os.utime(fd)
    finally:
        os.close(fd)


def _replace(temporary: str, name: str, at: int) -> None:
    try:
        os.replace(temporary, name, src_dir_fd=at, dst_dir_fd=at)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=at)
        raise
