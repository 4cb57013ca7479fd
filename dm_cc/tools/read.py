"""read: a text file's lines, numbered like ``cat -n``, a window at a time."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import ClassVar, NamedTuple

from pydantic import BaseModel, Field

from dm_cc.config import counted
from dm_cc.permissions import expand_home
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
BINARY_SNIFF_BYTES = 8192


class ReadParams(BaseModel):
    path: str = Field(description="The file to read: absolute, or relative to the working "
                                  "directory; ~ is the home directory.")
    offset: int = Field(default=1, ge=1, description="The 1-based line number to start at.")
    limit: int = Field(default=2000, ge=1, description="The maximum number of lines to read.")
    paths: list[str] | None = Field(
        default=None,
        description="Several files to read in one call; when given, these are read instead "
                    "of `path`, each with the same offset and limit.")


class Window(NamedTuple):
    """What a read gives: the numbered lines (with notes) or an error message."""

    text: str
    error: bool = False
    lines: int = 0              # how many of the file's lines ``text`` holds
    more: bool = False          # lines remain after them

    def summary(self, offset: int) -> str:
        """What the person is shown: ``Read 120 lines``, ``Read 3 lines from line 40,
        more remain``; the error itself."""
        if self.error:
            return self.text
        where = f" from line {offset}" if offset > 1 and self.lines else ""
        return f"Read {counted(self.lines, 'line')}{where}" + (", more remain" if self.more else "")


class ReadTool(CatalogTool[ReadParams]):
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file. Returns its lines numbered like `cat -n` (number, tab, text), "
        "starting at `offset` (1-based) for at most `limit` lines (default 2000); lines longer "
        f"than {MAX_LINE_CHARS} characters are cut, and the output stops near "
        f"{MAX_OUTPUT_CHARS:,} characters. When more lines remain, a final note gives the "
        "offset to continue from. Use `paths` to read several files at once. Directories "
        "(use list), missing files and binary files are errors. Read a file before editing it."
    )
    Params = ReadParams


    async def run(self, params: ReadParams, ctx: ToolContext) -> ToolOutput:
        # Exactly the files the requests describe: `paths` when given, else `path`.
        targets = list(dict.fromkeys(params.paths or [params.path]))
        if len(targets) == 1:
            window = read_window(targets[0], params.offset, params.limit, ctx)
            return ToolOutput(window.text, display=window.summary(params.offset),
                              is_error=window.error)
        parts, failed, lines = [], 0, 0
        for raw in targets:
            window = read_window(raw, params.offset, params.limit, ctx)
            failed += window.error
            lines += window.lines
            parts.append(f"==> {raw} <==\n{window.text}")
        display = f"Read {len(targets) - failed} of {len(targets)} files ({counted(lines, 'line')})"
        return ToolOutput("\n\n".join(parts), display=display, is_error=failed == len(targets))


def resolve(raw: str, ctx: ToolContext) -> Path:
    """A path argument as the filesystem sees it: ``~`` expanded, relative to cwd."""
    return Path(ctx.cwd, expand_home(raw, ctx.where))


def read_window(raw: str, offset: int, limit: int, ctx: ToolContext) -> Window:
    """The numbered lines of a window of the file, or why there are none."""
    path = resolve(raw, ctx)
    try:
        if path.is_dir():
            return Window(f"{raw} is a directory, not a file; use the list tool to see its "
                          "entries.", True)
        if path.exists() and not path.is_file():
            return Window(f"{raw} is not a regular file (a device, FIFO or socket).", True)
        with path.open("rb") as handle:
            if b"\0" in handle.read(BINARY_SNIFF_BYTES):
                return Window(f"{raw} is a binary file; read only shows text files.", True)
            handle.seek(0)
            return _numbered(handle, raw, offset, limit)
    except FileNotFoundError:
        return Window(f"File not found: {raw}{_suggestion(path)}", True)
    except OSError as exc:
        return Window(f"Cannot read {raw}: {exc.strerror or exc}", True)


def _numbered(handle, raw: str, offset: int, limit: int) -> Window:
    lines: list[str] = []
    size, number, undecodable, cut_short = 0, 0, False, False
    for number, data in enumerate(handle, start=1):
        if number < offset:
            continue
        if len(lines) >= limit or size >= MAX_OUTPUT_CHARS:
            cut_short = True
            break
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text, undecodable = data.decode("utf-8", errors="replace"), True
        text = text.rstrip("\r\n")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} characters]"
        lines.append(f"{number:6}\t{text}")
        size += len(lines[-1]) + 1
    if not lines:
        if number == 0:
            return Window(f"(empty file: {raw})")
        return Window(f"offset {offset} is past the end of {raw}, which has "
                      f"{counted(number, 'line')}.", True)
    notes = []
    if undecodable:
        notes.append("the file is not valid UTF-8; undecodable bytes are shown as �")
    if cut_short:
        last = offset + len(lines) - 1
        notes.append(f"showing lines {offset}-{last}; more lines remain, "
                     f"continue with offset={last + 1}")
    body = "\n".join(lines)
    return Window(body + "".join(f"\n\n({note})" for note in notes), lines=len(lines),
                  more=cut_short)


def _suggestion(path: Path) -> str:
    try:
        siblings = os.listdir(path.parent)
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, siblings, n=3)
    return f". Did you mean: {', '.join(close)}?" if close else ""
