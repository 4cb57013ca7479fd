"""The project's instruction files (AGENTS.md, then CLAUDE.md, at the project root),
read as a read tool call of them would be: a repository is untrusted input, and
what these files hold goes to the model.

    found = read_instructions(where, may_read)
    found.loaded      # (name, text) of each file loaded, its text capped
    found.left_out    # (name, why) of each file present but not loaded

A file is loaded only when all of this holds (else it is left out, and why is
said: the loop tells the person once, ``/context`` shows it):

* its path, every symlink resolved, stays inside the project: a link to
  ``/proc/self/environ``, ``~/.ssh/id_rsa`` or any file outside is refused
  whatever the rules say;
* ``may_read`` (the read rules of the agent in charge, both the link's name and
  its target's, see ``Rights.may_read``) allows reading it outright. A rule that
  asks leaves it out: nobody is asked for a file dm_cc reads on its own;
* it is a regular file (a FIFO, a device or a directory is never opened for
  reading in a way that could block) with no other name (a hard link may be
  another name of a file outside the project);
* only its first MAX_INSTRUCTION_BYTES are read; the rest is left out, and said so.

CLAUDE.md is left out silently when it is the same file as AGENTS.md (a link).
Only the project root's files are read: none from sub-directories or parents.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from dm_cc.permissions import PathContextDirs

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")   # in this order, each when present
MAX_INSTRUCTION_BYTES = 32 * 1024                 # per file; the rest is left out, and said so


class Instruction(NamedTuple):
    name: str       # AGENTS.md, CLAUDE.md
    text: str       # its content (capped, a truncation said at its end)


class LeftOut(NamedTuple):
    name: str
    why: str        # "it leads outside the project (/proc/self/environ)", …

    def notice(self) -> str:
        return f"{self.name} was not given to the model: {self.why}."


class Instructions(NamedTuple):
    loaded: list[Instruction]
    left_out: list[LeftOut]


class _Skip(Exception):
    """Why one file is not loaded (empty: silently, it is a file loaded already)."""


def read_instructions(where: PathContextDirs, may_read: Callable[[str], bool]) -> Instructions:
    """The instruction files at ``where.root`` that may be loaded, and those that
    may not with why (see the module docstring)."""
    found = Instructions([], [])
    seen: list[os.stat_result] = []
    for name in INSTRUCTION_FILES:
        path = where.root / name
        if not os.path.lexists(path):
            continue
        try:
            found.loaded.append(Instruction(name, _read(path, where.root, may_read, seen)))
        except _Skip as skip:
            if str(skip):
                found.left_out.append(LeftOut(name, str(skip)))
    return found


def _read(path: Path, root: Path, may_read: Callable[[str], bool],
          seen: list[os.stat_result]) -> str:
    """The text of the instruction file ``path``; _Skip saying why not."""
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(root):
        raise _Skip(f"it leads outside the project ({target}), and an instruction file is "
                    "read only inside it")
    if not may_read(str(path)):
        raise _Skip(f"the read rules do not allow reading {path.relative_to(root).as_posix()} "
                    "outright (they deny it or ask), and dm_cc asks no one for its own "
                    "context; a rule allowing it loads it")
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise _Skip(f"it cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Skip("it is not a regular file")
        if info.st_nlink > 1:   # a hard link: its other names may lie outside the project
            raise _Skip("it has other names (hard links), which may lie outside the project")
        if not _opened(fd, target).is_relative_to(root):  # a directory swapped for a link since
            raise _Skip("it moved outside the project while it was being read")
        if any(os.path.samestat(info, other) for other in seen):
            raise _Skip("")
        seen.append(info)
        data = file.read(MAX_INSTRUCTION_BYTES + 1)
    return _capped(path.name, data, max(info.st_size, len(data)))


def _opened(fd: int, target: Path) -> Path:
    """The path the kernel opened as ``fd`` (``target`` where /proc cannot say)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return target


def _capped(name: str, data: bytes, size: int) -> str:
    """``data`` as text; past MAX_INSTRUCTION_BYTES cut (never inside a character),
    and the cut said."""
    text = data[:MAX_INSTRUCTION_BYTES].decode("utf-8", errors="replace").strip()
    if size <= MAX_INSTRUCTION_BYTES:
        return text
    return (text.rstrip("\ufffd") + f"\n\n[{name} was truncated: only its first "
            f"{MAX_INSTRUCTION_BYTES} of {size} bytes are shown.]")
