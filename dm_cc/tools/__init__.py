"""Tools: each describes what it will touch (requests) and runs; none decides.

    catalog.py   every built-in tool declared once: its permission, the kind of its
                 main argument, its effects; what policy commands and lint read
    base.py      the Tool seam: typed params, ToolContext, ToolOutput; ``builtin_tools``
    bash.py, read.py, write.py, edit.py, glob_tool.py, grep.py, list_dir.py,
    webfetch.py, todo.py, plan.py, task.py     one tool each

The front door is lazy: a name's module is imported on its first use, so
``dm_cc policy …`` loads the catalog and never the tools' pydantic models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.tools.base import (
        JsonArguments,
        Tool,
        ToolContext,
        ToolOutput,
        UndoRecorder,
        builtin_tools,
    )
    from dm_cc.tools.bash import DEFAULT_TIMEOUT, run_plan
    from dm_cc.tools.catalog import (
        ToolEntry,
        check_input_tool,
        effects_of,
        entry,
        input_requests,
        is_known_permission,
        known_permissions,
        language_of,
        mcp_effects,
    )
    from dm_cc.tools.task import TaskParams

__all__ = [
    "DEFAULT_TIMEOUT",
    "JsonArguments",
    "TaskParams",
    "Tool",
    "ToolContext",
    "ToolEntry",
    "ToolOutput",
    "UndoRecorder",
    "builtin_tools",
    "check_input_tool",
    "effects_of",
    "entry",
    "input_requests",
    "is_known_permission",
    "known_permissions",
    "language_of",
    "mcp_effects",
    "run_plan",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.tools.base": ("JsonArguments", "Tool", "ToolContext", "ToolOutput", "UndoRecorder",
                         "builtin_tools"),
    "dm_cc.tools.bash": ("DEFAULT_TIMEOUT", "run_plan"),
    "dm_cc.tools.catalog": ("ToolEntry", "check_input_tool", "effects_of", "entry", "input_requests",
                            "is_known_permission", "known_permissions", "language_of",
                            "mcp_effects"),
    "dm_cc.tools.task": ("TaskParams",),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
