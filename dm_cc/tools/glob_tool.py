"""glob: files whose path matches a pattern, newest first.

Named ``glob_tool`` so that it does not shadow the standard library's ``glob``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import ClassVar

from pydantic import BaseModel, Field
from wcmatch import glob as wcglob

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput
from dm_cc.tools.list_dir import IGNORED_DIRS
from dm_cc.tools.read import resolve

FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
MAX_RESULTS = 200


class GlobParams(BaseModel):
    pattern: str = Field(description="A glob relative to `path`, e.g. `**/*.py` or "
                                     "`src/**/*.{ts,tsx}`.")
    path: str | None = Field(default=None, description="The directory to search in; defaults "
                                                       "to the working directory.")


class GlobTool(CatalogTool[GlobParams]):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files by path pattern. `*` and `?` stay within one directory, `**` crosses "
        "directories (`*.py` is only the top level; `**/*.py` is any depth), `{a,b}` gives "
        "alternatives, and dotfiles match. The pattern is relative to `path` (no `..`, not "
        "absolute). Only files are returned, newest first, as paths relative to the working "
        f"directory; at most {MAX_RESULTS}. Symlinked directories are not followed and "
        + ", ".join(sorted(IGNORED_DIRS)) + " are skipped."
    )
    Params = GlobParams


    async def run(self, params: GlobParams, ctx: ToolContext) -> ToolOutput:
        where = params.path or "."
        root = resolve(where, ctx)
        if not root.is_dir():
            problem = "is not a directory" if root.exists() else "does not exist"
            return ToolOutput(f"{where} {problem}.", is_error=True)
        pattern = params.pattern.strip()
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if not pattern:
            return ToolOutput("The pattern is empty.", is_error=True)
        if pattern.startswith(("/", "~")) or ".." in pattern.split("/"):
            return ToolOutput("The pattern must be relative to `path` and stay inside it: put "
                              "the directory in `path` and the glob in `pattern`.", is_error=True)
        try:
            matcher = wcglob.compile(pattern, flags=FLAGS)
        except Exception as exc:  # wcmatch raises several kinds for bad or huge patterns
            return ToolOutput(f"Invalid glob pattern {pattern!r}: {exc}", is_error=True)
        start = _literal_prefix(pattern)
        if not _inside(os.path.join(root, start), root):
            start = ""   # a symlinked directory named in the pattern is not followed either
        found = await asyncio.to_thread(
            lambda: [(mtime, rel) for rel, mtime in walk_files(str(root), start)
                     if matcher.match(rel) and ctx.may_read(os.path.join(root, rel))])
        if not found:
            return ToolOutput(f"No files match {pattern!r} under {where}.")
        found.sort(key=lambda item: (-item[0], item[1]))
        lines = [shown_path(os.path.join(root, rel), ctx) for _, rel in found[:MAX_RESULTS]]
        if len(found) > MAX_RESULTS:
            lines.append(f"\n(showing the {MAX_RESULTS} newest of {len(found)} matches; "
                         "narrow the pattern or the path)")
        return ToolOutput("\n".join(lines))


def shown_path(path: str, ctx: ToolContext) -> str:
    """A path as the model should pass it back: relative to cwd when inside it."""
    path = os.path.normpath(path)
    relative = os.path.relpath(path, ctx.cwd)
    return path if relative == ".." or relative.startswith("../") else relative


def _inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip("/") + "/")


def _literal_prefix(pattern: str) -> str:
    """The leading directories of a pattern that contain no wildcard: the walk starts there."""
    parts = pattern.split("/")[:-1]
    prefix = []
    for part in parts:
        if not part or part == "." or wcglob.is_magic(part, flags=FLAGS):
            break
        prefix.append(part)
    return "/".join(prefix)


def walk_files(root: str, start: str = "", *,
               hidden: bool = True) -> Iterator[tuple[str, float]]:
    """``(path relative to root, mtime)`` of every file under ``root/start``, depth first
    in name order (as ``rg --sort path``). Symlinked directories are not followed; the
    directories in ``IGNORED_DIRS`` (and with ``hidden=False`` every dot-entry) are
    skipped below the start."""
    try:
        with os.scandir(os.path.join(root, start) if start else root) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if not hidden and entry.name.startswith("."):
            continue
        rel = f"{start}/{entry.name}" if start else entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS:
                    yield from walk_files(root, rel, hidden=hidden)
            elif entry.is_file():
                yield rel, entry.stat().st_mtime
        except OSError:
            continue
