"""The built-in tools, listed explicitly, and their specs as the model sees them."""

from __future__ import annotations

from collections.abc import Iterable

from dm_cc.llm.base import ToolSpec
from dm_cc.tools.base import Tool
from dm_cc.tools.bash import BashTool
from dm_cc.tools.edit import EditTool
from dm_cc.tools.glob_tool import GlobTool
from dm_cc.tools.grep import GrepTool
from dm_cc.tools.list_dir import ListTool
from dm_cc.tools.read import ReadTool
from dm_cc.tools.todo import TodoTool
from dm_cc.tools.webfetch import WebFetchTool
from dm_cc.tools.write import WriteTool

BUILTIN_TOOLS: tuple[type[Tool], ...] = (
    ReadTool,
    WriteTool,
    EditTool,
    GlobTool,
    GrepTool,
    ListTool,
    BashTool,
    TodoTool,
    WebFetchTool,
)

ToolLike = Tool | type[Tool]


def tool_specs(tools: Iterable[ToolLike]) -> list[ToolSpec]:
    """Name, description and the JSON schema of ``Params`` for each tool (classes or
    instances), in order. Raises ValueError when two tools share a name."""
    specs = [ToolSpec(tool.name, tool.description, tool.Params.model_json_schema())
             for tool in tools]
    names = [spec.name for spec in specs]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"two tools are named {', '.join(duplicates)}")
    return specs


def tool_by_name(name: str, tools: Iterable[ToolLike] = BUILTIN_TOOLS) -> ToolLike:
    """The tool (class or instance, whichever ``tools`` holds) called ``name``.
    Raises KeyError naming the known tools when there is none."""
    tools = tuple(tools)
    for tool in tools:
        if tool.name == name:
            return tool
    known = ", ".join(tool.name for tool in tools)
    raise KeyError(f"no tool named {name!r}; known tools: {known}")
