"""The tool catalog: every built-in tool declared once.

    ToolEntry(name, permission, kind, argument, cls)

* ``permission``: what the tool's main request is judged under (write and edit
  both ask for ``edit``);
* ``kind``: what its main argument names, which decides how requests are derived
  (``dm_cc.permissions.requests.derive``: file, directory, search, shell, url,
  name, json);
* ``argument``: the main argument (what ``dm_cc policy check TOOL INPUT`` and a
  policy file's ``tests:`` fill); None when the tool has none and its request is
  for ``*``; ``many`` an argument giving several main values at once, ``default``
  the value when the argument is absent;
* ``cls``: ``module:Class`` of the implementation, imported only when the tool is
  used, so ``dm_cc policy …`` never loads the tools' pydantic models.

The registry (:func:`builtin_tools`), the list of known permissions (lint), the
policy commands and request derivation all read this table; adding a tool is one
file plus one entry here. An MCP tool ``mcp__<server>__<tool>`` is an entry of
kind ``json`` made on demand by :func:`entry`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.patterns import load_arguments
from dm_cc.permissions.requests import KIND_LANGUAGE, Kind, Value, derive
from dm_cc.permissions.rules import (
    ENGINE_PERMISSIONS,
    MCP_PREFIX,
    Request,
    is_mcp_permission,
    language_of,
)

if TYPE_CHECKING:
    from dm_cc.tools.base import Tool


@dataclass(frozen=True, slots=True)
class ToolEntry:
    name: str
    permission: str
    kind: Kind
    argument: str | None
    cls: str | None = None
    default: str | None = None
    many: str | None = None

    def __post_init__(self) -> None:
        if KIND_LANGUAGE[self.kind] != language_of(self.permission):
            raise ValueError(f"tool {self.name}: a {self.kind} argument is matched as "
                             f"{KIND_LANGUAGE[self.kind]}, but {self.permission!r} rules are "
                             f"written as {language_of(self.permission)}")

    def main_value(self, args: Mapping[str, Any]) -> Value:
        """The value of the main argument in a call's arguments (ValueError if missing)."""
        if self.kind == "json":
            return args
        several = args.get(self.many) if self.many else None
        if isinstance(several, list) and several:
            return [str(value) for value in several]
        if self.argument is None:
            return "*"
        value = args.get(self.argument)
        if isinstance(value, str) and value:
            return value
        if self.default is not None:
            return self.default
        raise ValueError(f"missing argument: {self.argument}")

    def main_text(self, args: Mapping[str, Any]) -> str:
        """The main input as a person reads it: the whole command, path or URL; the
        arguments as JSON for MCP tools; "" when the tool has none or it is missing."""
        if self.argument is None and self.kind != "json" and not self.many:
            return ""
        try:
            value = self.main_value(args)
        except ValueError:
            return ""
        if isinstance(value, list):
            return " ".join(value)
        if isinstance(value, str):
            return value
        import json  # only MCP tools need it

        return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ""

    def requests(self, args: Mapping[str, Any], where: PathContextDirs) -> list[Request]:
        """The permission requests a call with these arguments makes."""
        return derive(self.kind, self.permission, self.main_value(args), where)

    def arguments(self, text: str) -> dict[str, Any]:
        """The arguments a call has when its main input is ``text`` (``dm_cc policy
        check TOOL INPUT``, a policy file's tests). ValueError when ``text`` cannot be."""
        if self.kind == "json":
            value = load_arguments(text) if text.strip() else {}
            if not isinstance(value, dict):
                raise ValueError("an MCP tool's INPUT is a JSON object of its arguments")
            return value
        if self.argument is None:
            if text.strip() not in ("", "*"):
                raise ValueError(f"{self.name} has no main argument: its request is always "
                                 f"`{self.permission} *`; give '' as INPUT")
            return {}
        return {self.argument: text}

    def load(self) -> type[Tool[Any]]:
        """The implementing class (imported now)."""
        if self.cls is None:
            raise LookupError(f"{self.name} is judged by policy but has no implementation yet")
        module, _, name = self.cls.partition(":")
        loaded: type[Tool[Any]] = getattr(importlib.import_module(module), name)
        return loaded


CATALOG: tuple[ToolEntry, ...] = (
    ToolEntry("read", "read", "file", "path", "dm_cc.tools.read:ReadTool", many="paths"),
    ToolEntry("write", "edit", "file", "path", "dm_cc.tools.write:WriteTool"),
    ToolEntry("edit", "edit", "file", "path", "dm_cc.tools.edit:EditTool"),
    ToolEntry("glob", "glob", "directory", "path", "dm_cc.tools.glob_tool:GlobTool", default="."),
    ToolEntry("grep", "grep", "search", "path", "dm_cc.tools.grep:GrepTool", default="."),
    ToolEntry("list", "list", "directory", "path", "dm_cc.tools.list_dir:ListTool", default="."),
    ToolEntry("bash", "bash", "shell", "command", "dm_cc.tools.bash:BashTool", default=""),
    ToolEntry("todo", "todo", "name", None, "dm_cc.tools.todo:TodoTool"),
    ToolEntry("webfetch", "webfetch", "url", "url", "dm_cc.tools.webfetch:WebFetchTool"),
    ToolEntry("plan_enter", "plan_enter", "name", None, "dm_cc.tools.plan:PlanEnterTool"),
    ToolEntry("plan_exit", "plan_exit", "name", None, "dm_cc.tools.plan:PlanExitTool"),
    ToolEntry("task", "task", "name", "subagent_type", "dm_cc.tools.task:TaskTool"),
)

_BY_NAME: dict[str, ToolEntry] = {}
for _entry in CATALOG:
    if _BY_NAME.setdefault(_entry.name, _entry) is not _entry:
        raise ValueError(f"two catalog entries are named {_entry.name}")


def entry(name: str) -> ToolEntry:
    """The entry for tool ``name``; an MCP tool's is made on demand. LookupError
    (naming the known tools) when there is none."""
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    if is_mcp_permission(name):
        return ToolEntry(name, name, "json", None)
    raise LookupError(f"unknown tool {name!r} (known: {', '.join(_BY_NAME)}, "
                      f"{MCP_PREFIX}<server>__<tool>)")


def input_requests(tool: str, text: str, where: PathContextDirs) -> list[Request]:
    """The requests of a ``tool`` call whose main input is ``text`` (``dm_cc policy
    check TOOL INPUT``, a policy file's tests). LookupError for an unknown tool,
    ValueError for an input it cannot take."""
    found = entry(tool)
    return found.requests(found.arguments(text), where)


def known_permissions() -> frozenset[str]:
    """Every permission a rule can name, but MCP tools' (see :func:`is_known_permission`)."""
    return frozenset(e.permission for e in CATALOG) | ENGINE_PERMISSIONS


def is_known_permission(permission: str) -> bool:
    return permission in known_permissions() or is_mcp_permission(permission)


def builtin_tools() -> list[Tool[Any]]:
    """One instance of every implemented built-in tool, in catalog order."""
    return [e.load()() for e in CATALOG if e.cls is not None]
