"""The tool catalog: every built-in tool declared once.

    ToolEntry(name, permission, kind, argument, cls, effects)

* ``permission``: what the tool's main request is judged under (write and edit
  both ask for ``edit``);
* ``kind``: what its main argument names, which decides how requests are derived
  (``dm_cc.permissions.derive_requests``: file, directory, search, shell, url,
  name, json) and so the pattern language its permission's rules are written in
  (:func:`language_of`: a path, a shell command, a URL, a name);
* ``effects``: what a call does to the machine (read, write, execute, network,
  delegate, switch; ``dm_cc.permissions.rules.Effect``). An agent's rights are
  derived from them: a read-only agent is denied every permission whose effects
  go beyond reading (``dm_cc.policy.rights``), so a new tool is judged by what it
  does, not by whether someone remembered to list it;
* ``argument``: the main argument (what ``dm_cc policy check TOOL INPUT`` and a
  policy file's ``tests:`` fill); None when the tool has none and its request is
  for ``*``; ``many`` an argument giving several main values at once, ``default``
  the value when the argument is absent;
* ``cls``: ``module:Class`` of the implementation, imported only when the tool is
  used, so ``dm_cc policy …`` never loads the tools' pydantic models.

The registry (``dm_cc.tools.base.builtin_tools``), the known permissions, their
pattern languages and effects (lint, the schema, the rights of read-only agents),
the policy commands and request derivation all read this table; adding a tool is
one file plus one entry here. An MCP tool ``mcp__<server>__<tool>`` is an entry of
kind ``json`` made on demand by :func:`entry`, whose effects its server's
annotations give (:func:`mcp_effects`; unknown: every effect).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dm_cc.permissions import (
    DELETE,
    EFFECTS,
    ENGINE_EFFECTS,
    ENGINE_LANGUAGES,
    ENGINE_PERMISSIONS,
    KIND_LANGUAGE,
    MCP_PREFIX,
    READS,
    SANDBOX_ESCAPE,
    Effect,
    Kind,
    Language,
    PathContextDirs,
    Request,
    Value,
    derive_requests,
    escape_requests,
    is_mcp_permission,
    load_arguments,
    path_requests,
)


@dataclass(frozen=True, slots=True)
class ToolEntry:
    name: str
    permission: str
    kind: Kind
    argument: str | None
    cls: str | None = None
    default: str | None = None
    many: str | None = None
    effects: frozenset[Effect] = field(default=EFFECTS)   # unknown: everything

    @property
    def language(self) -> Language:
        """The pattern language of its permission's rules: its argument kind's."""
        return KIND_LANGUAGE[self.kind]

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
        return derive_requests(self.kind, self.permission, self.main_value(args), where)

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



WRITES: frozenset[Effect] = frozenset({"write"})

CATALOG: tuple[ToolEntry, ...] = (
    ToolEntry("read", "read", "file", "path", "dm_cc.tools.read:ReadTool", many="paths",
              effects=READS),
    ToolEntry("write", "edit", "file", "path", "dm_cc.tools.write:WriteTool", effects=WRITES),
    ToolEntry("edit", "edit", "file", "path", "dm_cc.tools.edit:EditTool", effects=WRITES),
    ToolEntry("glob", "glob", "directory", "path", "dm_cc.tools.glob_tool:GlobTool", default=".",
              effects=READS),
    ToolEntry("grep", "grep", "search", "path", "dm_cc.tools.grep:GrepTool", default=".",
              effects=READS),
    ToolEntry("list", "list", "directory", "path", "dm_cc.tools.list_dir:ListTool", default=".",
              effects=READS),
    # What a command does is the shell analysis's to say, request by request: a
    # read-only agent may run the commands it finds read-only (dm_cc.policy.rights).
    ToolEntry("bash", "bash", "shell", "command", "dm_cc.tools.bash:BashTool", default="",
              effects=frozenset({"execute"})),
    # the session's own notes: nothing outside the conversation changes
    ToolEntry("todo", "todo", "name", None, "dm_cc.tools.todo:TodoTool", effects=frozenset()),
    ToolEntry("webfetch", "webfetch", "url", "url", "dm_cc.tools.webfetch:WebFetchTool",
              effects=frozenset({"network"})),
    ToolEntry("plan_enter", "plan_enter", "name", None, "dm_cc.tools.plan:PlanEnterTool",
              effects=frozenset({"switch"})),
    ToolEntry("plan_exit", "plan_exit", "name", None, "dm_cc.tools.plan:PlanExitTool",
              effects=frozenset({"switch"})),
    # starts the named agent: what it may do is that agent's rights (task NAME)
    ToolEntry("task", "task", "name", "subagent_type", "dm_cc.tools.task:TaskTool",
              effects=frozenset({"delegate"})),
)


def _checked(entries: Iterable[ToolEntry]) -> dict[str, ToolEntry]:
    """The entries by name; ValueError for two of one name, for a permission of two
    pattern languages or for an engine-owned permission taken by a tool."""
    by_name: dict[str, ToolEntry] = {}
    languages: dict[str, Language] = dict(ENGINE_LANGUAGES)
    for item in entries:
        if by_name.setdefault(item.name, item) is not item:
            raise ValueError(f"two catalog entries are named {item.name}")
        if item.permission in ENGINE_PERMISSIONS:
            raise ValueError(f"tool {item.name}: {item.permission!r} is a permission the "
                             "engine makes itself")
        if languages.setdefault(item.permission, item.language) != item.language:
            raise ValueError(f"tool {item.name}: {item.permission!r} rules are written as "
                             f"{languages[item.permission]}, but a {item.kind} argument is "
                             f"matched as {item.language}")
    return by_name


_BY_NAME: dict[str, ToolEntry] = _checked(CATALOG)


def entries() -> tuple[ToolEntry, ...]:
    """Every built-in tool's entry, in catalog order."""
    return tuple(_BY_NAME.values())


def entry(name: str) -> ToolEntry:
    """The entry for tool ``name``; an MCP tool's is made on demand (every effect:
    its server's annotations are not known here). LookupError (naming the known
    tools) when there is none."""
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    if is_mcp_permission(name):
        return ToolEntry(name, name, "json", None)
    raise LookupError(f"unknown tool {name!r} (known: {', '.join(_BY_NAME)}, "
                      f"{MCP_PREFIX}<server>__<tool>)")


def mcp_effects(read_only: bool | None, open_world: bool | None) -> frozenset[Effect]:
    """An MCP tool's effects from its server's annotations (MCP spec, ToolAnnotations):
    ``readOnlyHint`` true → it only reads, and reaches the network too unless
    ``openWorldHint`` is false (the spec's default is an open world); else (or
    unknown) every effect."""
    if not read_only:
        return EFFECTS
    return READS if open_world is False else READS | {"network"}


def input_requests(tool: str, text: str, where: PathContextDirs) -> list[Request]:
    """The requests of a ``tool`` call whose main input is ``text`` (``dm_cc policy
    check TOOL INPUT``, a policy file's tests); ``sandbox_escape``, not a tool: the
    requests to run the command line ``text`` again outside the sandbox, as the loop
    asks them when the sandbox stopped it; ``delete``, not a tool either: a command's
    removal of the path ``text`` (docs/sandbox.md, "Transactions"). LookupError for an
    unknown tool, ValueError for an input it cannot take."""
    if tool == SANDBOX_ESCAPE:
        return escape_requests(text)
    if tool == DELETE:
        return path_requests(DELETE, text, where)
    found = _input_entry(tool)
    return found.requests(found.arguments(text), where)


def check_input_tool(tool: str) -> None:
    """LookupError (naming what there is) unless :func:`input_requests` judges ``tool``."""
    if tool not in (SANDBOX_ESCAPE, DELETE):
        _input_entry(tool)


def _input_entry(tool: str) -> ToolEntry:
    try:
        return entry(tool)
    except LookupError as exc:
        raise LookupError(f"{exc.args[0]}; or {SANDBOX_ESCAPE} (a command the sandbox "
                          f"stopped, run again outside it), or {DELETE} (a path a command "
                          "removed)") from None


def known_permissions() -> frozenset[str]:
    """Every permission a rule can name, but MCP tools' (see :func:`is_known_permission`)."""
    return frozenset(e.permission for e in entries()) | ENGINE_PERMISSIONS


def is_known_permission(permission: str) -> bool:
    return permission in known_permissions() or is_mcp_permission(permission)


def language_of(permission: str) -> Language:
    """The pattern language ``permission``'s rules are written in: its tools'
    argument kind's, the engine's own for its permissions, else a name (MCP tools,
    unknown permissions)."""
    for item in entries():
        if item.permission == permission:
            return item.language
    return ENGINE_LANGUAGES.get(permission, "name")


def effects_of(permission: str) -> frozenset[Effect]:
    """What a request of ``permission`` may do: the effects of its tools, the
    engine's own for its permissions; every effect for anything else (an MCP tool
    whose annotations are not known here, an unknown permission)."""
    found = [item.effects for item in entries() if item.permission == permission]
    if found:
        return frozenset().union(*found)
    return ENGINE_EFFECTS.get(permission, EFFECTS)
