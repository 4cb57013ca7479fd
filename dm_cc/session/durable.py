"""What the stores in the data dir share to survive crashes and other dm_cc
processes: an exclusive lock on a lock file beside the store, and an fsync of the
directory after a file in it was created or replaced (so the new name survives a
crash, not only the bytes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
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
