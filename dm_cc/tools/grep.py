"""grep: lines matching a regular expression, as ``file:line:text``.

ripgrep (``rg``) does the work when it is on PATH; a pure-Python search with the
same walk (hidden files and ``IGNORED_DIRS`` skipped below the search root,
binary files skipped, files in path order) stands in otherwise. Differences:
ripgrep also honours ``.gitignore`` inside a git repository, and the regex
dialects differ at the edges (Rust vs ``re``).

Hidden files are skipped because a search reads contents under one ``grep``
request for its root: ``.env`` and friends are not searched unless the model
names them as ``path``, which the policy then sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field
from wcmatch import glob as wcglob

from dm_cc.config import counted
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput
from dm_cc.tools.glob_tool import FLAGS, shown_path, walk_files
from dm_cc.tools.list_dir import IGNORED_DIRS
from dm_cc.tools.read import BINARY_SNIFF_BYTES, resolve

MAX_MATCHES = 200
MAX_LINE_CHARS = 500
TIMEOUT_SECONDS = 60

Match = tuple[str, int, str]     # absolute file, 1-based line number, text


class GrepParams(BaseModel):
    pattern: str = Field(description="The regular expression to search file contents for.")
    path: str | None = Field(default=None, description="The file or directory to search; "
                                                       "defaults to the working directory.")
    include: str | None = Field(default=None, description='Only search files matching this '
                                                          'glob, e.g. "*.py" or "*.{ts,tsx}"; '
                                                          'a glob without / matches file names '
                                                          'at any depth.')


class GrepTool(CatalogTool[GrepParams]):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents with a regular expression (ripgrep/Rust syntax; `(?i)` for "
        "case-insensitive). Returns matching lines as `file:line:text`, files in path order, "
        f"at most {MAX_MATCHES} matches, each line cut at {MAX_LINE_CHARS} characters. "
        "Hidden files and directories (name one as `path` to search it), binary files, "
        ".gitignored files, node_modules and __pycache__ are skipped. Narrow with `path` "
        "and `include`. To find files by name use glob."
    )
    Params = GrepParams

    def __init__(self, *, use_ripgrep: bool = True) -> None:
        """``use_ripgrep=False`` forces the pure-Python search (tests, odd systems)."""
        self.use_ripgrep = use_ripgrep


    async def run(self, params: GrepParams, ctx: ToolContext) -> ToolOutput:
        where = params.path or "."
        root = resolve(where, ctx)
        if not root.exists():
            return ToolOutput(f"{where} does not exist.", is_error=True)
        if not params.pattern:
            return ToolOutput("The pattern is empty.", is_error=True)
        rg = shutil.which("rg") if self.use_ripgrep else None
        try:
            if rg:
                matches, more, note = await ripgrep(rg, params.pattern, root, params.include)
            else:
                matches, more, note = await asyncio.to_thread(
                    python_grep, params.pattern, root, params.include)
        except GrepError as exc:
            return ToolOutput(str(exc), is_error=True)
        readable = [m for m in matches if ctx.may_read(m[0])]
        if len(readable) < len(matches):
            hidden = len({m[0] for m in matches} - {m[0] for m in readable})
            note += (f"\n({counted(hidden, 'file')} with matches left out: the policy does not allow "
                     "reading them)")
            matches = readable
        if not matches:
            return ToolOutput(f"No matches for {params.pattern!r} under {where}." + note)
        lines = [f"{shown_path(file, ctx)}:{number}:{_cut(text)}" for file, number, text in matches]
        if more:
            lines.append(f"\n(showing the first {MAX_MATCHES} matches; there are more: narrow "
                         "the pattern, path or include)")
        return ToolOutput("\n".join(lines) + note)


class GrepError(Exception):
    """The search could not run (an invalid regex or glob): the model gets the message."""


def _cut(text: str) -> str:
    text = text.rstrip("\r")
    if len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS] + " [… line cut]"
    return text


async def ripgrep(rg: str, pattern: str, root: Path, include: str | None,
                  pcre2: bool = False) -> tuple[list[Match], bool, str]:
    """Matches, whether there are more than ``MAX_MATCHES``, and a note for the model."""
    argv = [rg, "--no-config", "--no-heading", "--with-filename", "--line-number",
            "--color=never", "--null", "--sort=path", "--no-messages",
            f"--max-columns={MAX_LINE_CHARS * 2}", "--max-columns-preview"]
    for name in sorted(IGNORED_DIRS):
        argv += ["--glob", f"!{name}/"]
    if include:
        argv += ["--glob", include]
    if pcre2:
        argv.append("--pcre2")
    # Run inside the search root so that an include glob with a / is anchored there.
    cwd, target = (root, ".") if root.is_dir() else (root.parent, root.name)
    argv += ["-e", pattern, "--", target]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=1 << 20, start_new_session=True)
    except OSError as exc:
        raise GrepError(f"Cannot run ripgrep: {exc.strerror or exc}") from exc
    matches: list[Match] = []
    more, note = False, ""
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            assert proc.stdout is not None
            async for raw in proc.stdout:
                if len(matches) >= MAX_MATCHES:
                    more = True
                    break
                file, _, rest = raw.decode("utf-8", errors="replace").partition("\0")
                number, _, text = rest.rstrip("\n").partition(":")
                if number.isdigit():
                    matches.append((os.path.join(cwd, file), int(number), text))
    except TimeoutError:
        note = f"\n(the search stopped after {TIMEOUT_SECONDS} s; results are incomplete)"
    except ValueError:      # a line longer than the stream limit
        note = "\n(the search stopped at an overlong line; results are incomplete)"
    finally:
        _kill(proc)
        stderr = await proc.stderr.read() if proc.stderr else b""
        await proc.wait()
    if proc.returncode == 2 and not matches and not more and not note:
        message = stderr.decode("utf-8", errors="replace").strip()
        if not pcre2 and ("look-around" in message or "backreferences" in message):
            return await ripgrep(rg, pattern, root, include, pcre2=True)
        if "regex parse error" in message:
            raise GrepError(f"Invalid regular expression {pattern!r} for ripgrep:\n{message}")
        raise GrepError(f"ripgrep failed: {message or 'exit code 2'}")
    return matches, more, note


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def python_grep(pattern: str, root: Path, include: str | None) -> tuple[list[Match], bool, str]:
    """The same search without ripgrep (Python ``re``); see the module docstring."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise GrepError(f"Invalid regular expression {pattern!r}: {exc}") from exc
    try:
        wanted = wcglob.compile(include, flags=FLAGS | wcglob.MATCHBASE) if include else None
    except Exception as exc:  # wcmatch raises several kinds for bad or huge patterns
        raise GrepError(f"Invalid include glob {include!r}: {exc}") from exc
    if root.is_file():
        files: Iterable[str] = [str(root)]
    else:
        files = (os.path.join(root, rel) for rel, _ in walk_files(str(root), hidden=False)
                 if wanted is None or wanted.match(rel))
    matches: list[Match] = []
    for file in files:
        try:
            with open(file, "rb") as handle:
                if b"\0" in handle.read(BINARY_SNIFF_BYTES):
                    continue     # binary, as ripgrep decides by default
                handle.seek(0)
                for number, raw in enumerate(handle, 1):
                    line = raw.decode("utf-8", errors="replace").removesuffix("\n")
                    if regex.search(line):
                        if len(matches) >= MAX_MATCHES:
                            return matches, True, ""
                        matches.append((file, number, line))
        except OSError:
            continue
    return matches, False, ""
