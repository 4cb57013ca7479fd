"""list: a directory's tree, breadth first, so a capped listing still shows the top."""

from __future__ import annotations

import asyncio
import os
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput
from dm_cc.tools.read import resolve

# Directories no listing or search descends into: version control, dependencies, caches.
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
})
MAX_ENTRIES = 500


class ListParams(BaseModel):
    path: str = Field(default=".", description="The directory to list: absolute, or relative "
                                               "to the working directory; ~ is the home "
                                               "directory.")


class ListTool(CatalogTool[ListParams]):
    name: ClassVar[str] = "list"
    description: ClassVar[str] = (
        "List a directory as an indented tree: directories end with /, symlinks show their "
        "target and are not followed. Hidden files are shown; "
        + ", ".join(sorted(IGNORED_DIRS)) + " are skipped. Breadth first, at most "
        f"{MAX_ENTRIES} entries; a directory marked … was not expanded (list it). "
        "To find files by name use glob; to search contents use grep."
    )
    Params = ListParams


    async def run(self, params: ListParams, ctx: ToolContext) -> ToolOutput:
        root = resolve(params.path, ctx)
        if not root.exists():
            return ToolOutput(f"Directory not found: {params.path}", is_error=True)
        if not root.is_dir():
            return ToolOutput(f"{params.path} is a file, not a directory; use read.",
                              is_error=True)
        try:
            os.listdir(root)
        except OSError as exc:
            return ToolOutput(f"Cannot list {params.path}: {exc.strerror or exc}", is_error=True)
        return ToolOutput(await asyncio.to_thread(tree, os.path.normpath(root), MAX_ENTRIES))


@dataclass
class _Node:
    name: str
    path: str
    is_dir: bool
    link: str | None = None
    children: list[_Node] | None = None     # None: not expanded
    unreadable: bool = False
    hidden_children: int = 0                # entries left out by the cap


def tree(root: str, cap: int) -> str:
    """An indented listing of ``root``, breadth first, at most ``cap`` entries."""
    top = _Node(os.path.basename(root.rstrip("/")) or root, root, True)
    queue, shown, capped = deque([top]), 0, False
    while queue:
        node = queue.popleft()
        if shown >= cap:
            capped = True
            break
        entries = _entries(node)
        if entries is None:
            continue
        node.hidden_children = max(0, len(entries) - (cap - shown))
        node.children = entries[:cap - shown]
        capped |= node.hidden_children > 0
        shown += len(node.children)
        queue.extend(child for child in node.children if child.is_dir and child.link is None)
    lines = [root.rstrip("/") + "/"]
    _render(top, 1, lines)
    if capped:
        lines.append(f"\n(showing {shown} entries; the listing is capped at {cap}: list a "
                     "subdirectory to see more)")
    return "\n".join(lines)


def _entries(node: _Node) -> list[_Node] | None:
    try:
        with os.scandir(node.path) as scan:
            found = list(scan)
    except OSError:
        node.unreadable = True
        return None
    nodes = []
    for entry in found:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            link = os.readlink(entry.path) if entry.is_symlink() else None
        except OSError:
            is_dir, link = False, None
        if is_dir and entry.name in IGNORED_DIRS:
            continue
        nodes.append(_Node(entry.name, entry.path, is_dir, link))
    nodes.sort(key=lambda n: (not n.is_dir, n.name))
    return nodes


def _render(node: _Node, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for child in node.children or ():
        if child.link is not None:
            lines.append(f"{pad}{child.name} -> {child.link}")
        elif not child.is_dir:
            lines.append(f"{pad}{child.name}")
        elif child.unreadable:
            lines.append(f"{pad}{child.name}/ (unreadable)")
        elif child.children is None:
            lines.append(f"{pad}{child.name}/ …")
        else:
            lines.append(f"{pad}{child.name}/")
            _render(child, depth + 1, lines)
    if node.hidden_children:
        lines.append(f"{pad}… {node.hidden_children} more")
