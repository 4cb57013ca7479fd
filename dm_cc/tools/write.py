"""write: create or overwrite a UTF-8 text file; the user sees a diff. What it
replaces (or that the file and its directories did not exist) is kept as an undo
step (``ctx.undo``, docs/undo.md)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.config import counted
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput
from dm_cc.tools.read import resolve
from dm_cc.tools.undo_step import undo_step

MAX_DIFF_LINES = 400


class WriteParams(BaseModel):
    path: str = Field(description="The file to write: absolute, or relative to the working "
                                  "directory; ~ is the home directory.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(CatalogTool[WriteParams]):
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write a UTF-8 text file, replacing all of its content; missing parent directories are "
        "created. Prefer the edit tool to change part of an existing file, and read a file "
        "before overwriting it."
    )
    Params = WriteParams


    async def run(self, params: WriteParams, ctx: ToolContext) -> ToolOutput:
        path = resolve(params.path, ctx)
        try:
            if path.is_dir():
                return ToolOutput(f"{params.path} is a directory; give a file path.",
                                  is_error=True)
            if path.exists() and not path.is_file():
                return ToolOutput(f"{params.path} is not a regular file.", is_error=True)
            old = _old_content(path)
        except OSError as exc:
            return ToolOutput(f"Cannot write {params.path}: {exc.strerror or exc}", is_error=True)
        error: str | None = None
        with undo_step(ctx, f"write {params.path}", [path]) as notes:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("w", encoding="utf-8", newline="") as handle:
                    handle.write(params.content)
            except OSError as exc:
                error = f"Cannot write {params.path}: {exc.strerror or exc}"
        if error is not None:
            return ToolOutput(error, is_error=True)
        lines = len(params.content.splitlines())
        size = len(params.content.encode("utf-8"))
        if old is None:
            display = f"new file: {params.path}\n" + unified_diff("", params.content, params.path)
            return ToolOutput(f"Created {params.path} ({counted(lines, 'line')}, "
                              f"{counted(size, 'byte')}).",
                              display="\n".join([display, *notes]))
        if old == params.content:
            return ToolOutput(f"{params.path} already had this content; nothing changed.",
                              display=f"{params.path}: unchanged")
        return ToolOutput(f"Wrote {params.path} ({counted(lines, 'line')}, {counted(size, 'byte')}).",
                          display="\n".join([unified_diff(old, params.content, params.path),
                                              *notes]))

    def preview(self, params: WriteParams, ctx: ToolContext) -> str | None:
        """What the write would change, for the approval prompt."""
        path = resolve(params.path, ctx)
        if path.exists() and not path.is_file():  # never read a device or a FIFO to show it
            return f"({params.path} is not a regular file; the write would fail)"
        try:
            old = _old_content(path)
        except OSError as exc:
            return f"(cannot read {params.path}: {exc.strerror or exc})"
        if old is None:
            return f"new file: {params.path}\n" + unified_diff("", params.content, params.path)
        return unified_diff(old, params.content, params.path) or f"{params.path}: unchanged"


def _old_content(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def unified_diff(old: str, new: str, label: str) -> str:
    """A unified diff of two texts for the user, cut at ``MAX_DIFF_LINES`` lines."""
    lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                      fromfile=f"a/{label}" if old else "/dev/null",
                                      tofile=f"b/{label}"))
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
             for line in lines]
    if len(lines) > MAX_DIFF_LINES:
        hidden = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"… {counted(hidden, 'more diff line')}\n"]
    return "".join(lines).rstrip("\n")
