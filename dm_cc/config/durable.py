"""What dm_cc's files share to survive crashes and other dm_cc processes (the
stores in the data dir, a policy file /permissions edits): an exclusive lock on a
lock file beside the store, a file replaced whole in one step
(:func:`replace_file`), damage moved aside unchanged (:func:`set_aside`), and an
fsync of the directory after a file in it was created, replaced or renamed (so the
new name survives a crash, not only the bytes)."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; changes are still atomic replaces
    fcntl = None  # type: ignore[assignment]


@contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (made, with its private directory,
    when missing); OSError when it cannot be made."""
    lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by close
        yield
    finally:
        os.close(fd)


@contextmanager
def shared(lock_path: Path) -> Iterator[None]:
    """Hold a shared lock on ``lock_path`` while reading, when it exists (reading
    creates nothing): no writer is half-way through meanwhile."""
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def sync_directory(directory: Path) -> None:
    """fsync ``directory`` (only POSIX can open and fsync one)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, mode: int = 0o600, *, sync: bool = True) -> None:
    """Make ``data`` the content of ``path`` in one step: written to a temporary file
    in the same directory (``mode``), fsynced, ``os.replace``-d over ``path``, then the
    directory fsynced. A reader sees the old file or the new one, whole. OSError
    when it cannot be done (the temporary file is removed). ``sync=False``: no fsync
    (still one step for readers, but a crash may leave the old file or a damaged
    one): for derived data, rebuilt when damaged, that is written often."""
    fd, temporary = _new_temporary(path)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if mode != 0o600:   # what _new_temporary made it
                os.fchmod(out.fileno(), mode)
            if sync:
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    if sync:
        sync_directory(path.parent)


def _new_temporary(path: Path) -> tuple[int, str]:
    """A new empty file beside ``path`` (``.NAME.<random>.tmp``), open for writing and
    readable by the user only: what ``tempfile.mkstemp`` makes -- created, never an
    existing file or a link (``O_EXCL``, ``O_NOFOLLOW``), another name tried if taken --
    without importing tempfile (with shutil, random and three compressors) in every
    process that saves a store."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def set_aside(path: Path, label: str, *, suffix: str = "",
              companions: Sequence[str] = ()) -> Path:
    """Move the damaged file ``path`` aside, its bytes unchanged, to the first free
    name ``<stem>.<label>-<time>[-<n>]<suffix>`` beside it (``stem``: its name without
    ``suffix``; ``n`` counts from 2), and each companion (a file named ``path``'s name
    plus a companion's ending, e.g. ``.head``) to that name plus the same ending; then
    fsync the directory. Those of them that exist are moved (none: the OSError of
    renaming ``path``). Call it under the store's lock, so no other dm_cc picks the
    same name. The new path of ``path``; OSError when a move fails."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    stem = path.name[: len(path.name) - len(suffix)]
    ends = ("", *companions)
    aside = path.with_name(f"{stem}.{label}-{stamp}{suffix}")
    number = 1
    while any(aside.with_name(aside.name + end).exists() for end in ends):
        number += 1
        aside = path.with_name(f"{stem}.{label}-{stamp}-{number}{suffix}")
    present = [end for end in ends if path.with_name(path.name + end).exists()]
    for end in present or [""]:  # none there: renaming ``path`` says why
        os.rename(path.with_name(path.name + end), aside.with_name(aside.name + end))
    sync_directory(path.parent)
    return aside
