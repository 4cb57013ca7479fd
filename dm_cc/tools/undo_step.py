"""The edit and write tools' changes as undo steps: what a call is about to change,
kept in the step ``ctx.undo`` makes (docs/undo.md).

    with undo_step(ctx, f"edit {params.path}", [path]) as notes:
        ...write path...
    # notes: what could not be kept, for the person

A path is kept as the filesystem will change it: symlinks resolved (writing through
a link changes its target), and only inside the project (undo restores the
project; a file outside it is not kept). For a file that does not exist yet, the
missing directories above it are kept too, so that undo removes them again when
they are empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dm_cc.errors import DmccError
from dm_cc.tools.base import ToolContext


@contextmanager
def undo_step(ctx: ToolContext, label: str, paths: Sequence[Path]) -> Iterator[list[str]]:
    """Keep ``paths`` before the block changes them, and close the step after it
    (nothing is kept when the runtime keeps no undo steps). Yields the notes on what
    could not be kept (filled by the end of the block)."""
    notes: list[str] = []
    if ctx.undo is None:
        yield notes
        return
    recorder = ctx.undo(label)
    try:
        for relative in kept_paths(paths, ctx.root):
            recorder.keep(relative)
    except DmccError as exc:
        notes.append(f"(this change cannot be undone: {exc})")
    try:
        yield notes
    finally:
        try:
            recorder.close()
        except DmccError as exc:
            notes.append(f"(this change cannot be undone: {exc})")


def kept_paths(paths: Sequence[Path], root: Path) -> list[str]:
    """The paths (POSIX, from the root) that writing ``paths`` changes inside the
    project: each one's real path, and the directories that will be made for it."""
    top = os.path.realpath(root)
    out: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        missing = real
        while (parent := os.path.dirname(missing)) != missing and not os.path.lexists(parent):
            missing = parent
            out.append(parent)
        out.append(real)
    inside = [os.path.relpath(real, top) for real in out
              if real != top and real.startswith(top.rstrip(os.sep) + os.sep)]
    return [relative.replace(os.sep, "/") for relative in dict.fromkeys(inside)]
