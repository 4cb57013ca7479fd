"""edit: replace an exact, unique piece of a text file; the user sees a diff. The
file's previous content is kept as an undo step (``ctx.undo``, docs/undo.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput
from dm_cc.tools.read import resolve
from dm_cc.tools.undo_step import undo_step
from dm_cc.tools.write import unified_diff


class EditParams(BaseModel):
    path: str = Field(description="The file to edit: absolute, or relative to the working "
                                  "directory; ~ is the home directory.")
    old_string: str = Field(description="The exact text to replace, including whitespace and "
                                        "indentation; it must occur exactly once unless "
                                        "replace_all is true.")
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(default=False,
                              description="Replace every occurrence of old_string.")


class EditTool(CatalogTool[EditParams]):
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace text in an existing UTF-8 file. `old_string` must match the file exactly "
        "(whitespace and indentation included; copy it from read output without the line "
        "number prefix) and occur exactly once, unless `replace_all` is true. Include enough "
        "surrounding lines to make it unique. To create a file, use write."
    )
    Params = EditParams


    async def run(self, params: EditParams, ctx: ToolContext) -> ToolOutput:
        change = plan_edit(params, ctx)
        if isinstance(change, str):
            return ToolOutput(change, is_error=True)
        error: str | None = None
        with undo_step(ctx, f"edit {params.path}", [change.path]) as notes:
            try:
                with change.path.open("w", encoding="utf-8", newline="") as handle:
                    handle.write(change.after)
            except OSError as exc:
                error = f"Cannot write {params.path}: {exc.strerror or exc}"
        if error is not None:
            return ToolOutput(error, is_error=True)
        diff = unified_diff(change.before, change.after, params.path)
        return ToolOutput(f"Edited {params.path}: {change.summary}.",
                          display="\n".join([diff, *notes]))

    def preview(self, params: EditParams, ctx: ToolContext) -> str | None:
        """The diff the edit would make, for the approval prompt."""
        change = plan_edit(params, ctx)
        if isinstance(change, str):
            return f"(this edit would fail: {change})"
        return unified_diff(change.before, change.after, params.path)


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    before: str
    after: str
    summary: str


def plan_edit(params: EditParams, ctx: ToolContext) -> Change | str:
    """The change an edit makes, or why it cannot be made. Reads, never writes."""
    if not params.old_string:
        return "old_string is empty; to create or overwrite a file use write."
    if params.old_string == params.new_string:
        return "old_string and new_string are the same; there is nothing to change."
    path = resolve(params.path, ctx)
    try:
        if path.is_dir():
            return f"{params.path} is a directory; give a file path."
        if path.exists() and not path.is_file():
            return f"{params.path} is not a regular file."
        content = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return f"File not found: {params.path}. To create a file use write."
    except UnicodeDecodeError:
        return f"{params.path} is not UTF-8 text; edit only changes text files."
    except OSError as exc:
        return f"Cannot read {params.path}: {exc.strerror or exc}"

    old, new = params.old_string, params.new_string
    count = content.count(old)
    if count == 0 and "\r\n" in content and "\n" in old and "\r\n" not in old:
        # The file has Windows line endings and the model wrote Unix ones.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = content.count(old)
    if count == 0:
        return f"old_string was not found in {params.path}.{_hint(content, old)}"
    if count > 1 and not params.replace_all:
        return (f"old_string occurs {count} times in {params.path}; add surrounding lines to "
                "make it unique, or set replace_all to replace every one.")
    first_line = content[:content.index(old)].count("\n") + 1
    after = content.replace(old, new) if params.replace_all else content.replace(old, new, 1)
    summary = (f"replaced {count} occurrences" if count > 1
               else f"replaced 1 occurrence at line {first_line}")
    return Change(path, content, after, summary)


def _hint(content: str, old: str) -> str:
    """Where a match ignoring leading/trailing whitespace on each line would be, if any."""
    wanted = [line.strip() for line in old.strip("\r\n").splitlines()]
    lines = [line.strip() for line in content.splitlines()]
    if wanted and any(wanted):
        for start in range(len(lines) - len(wanted) + 1):
            if lines[start:start + len(wanted)] == wanted:
                return (f" A match that differs only in whitespace or indentation starts at "
                        f"line {start + 1}; read the file and copy the text exactly.")
    return (" It must match exactly, including whitespace and indentation; read the file "
            "again and copy the text (without the line-number prefix).")
