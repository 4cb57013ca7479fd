from __future__ import annotations

import pytest

from dm_cc.permissions.requests import DERIVERS
from dm_cc.tools.registry import BUILTIN_TOOLS, tool_by_name, tool_specs
from dm_cc.tools.todo import TodoTool


def test_every_builtin_tool_has_a_unique_name_and_a_request_deriver():
    names = [tool.name for tool in BUILTIN_TOOLS]
    assert len(set(names)) == len(names)
    assert set(names) <= set(DERIVERS)
    assert names == ["read", "write", "edit", "glob", "grep", "list", "bash", "todo", "webfetch"]


def test_tools_build_without_arguments():
    for cls in BUILTIN_TOOLS:
        assert cls().name == cls.name


def test_every_parameter_is_described():
    def walk(schema, where):
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{where}.{name} has no description"
        for sub_name, sub in schema.get("$defs", {}).items():
            walk(sub, f"{where}.{sub_name}")

    for spec in tool_specs(BUILTIN_TOOLS):
        assert spec.description and len(spec.description) < 1000, spec.name
        walk(spec.parameters, spec.name)


def test_tool_by_name():
    assert tool_by_name("todo") is TodoTool
    instances = [cls() for cls in BUILTIN_TOOLS]
    assert tool_by_name("todo", instances) is instances[7]
    with pytest.raises(KeyError, match="no tool named 'nope'; known tools: read, write"):
        tool_by_name("nope")


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="two tools are named todo"):
        tool_specs([TodoTool, TodoTool()])
