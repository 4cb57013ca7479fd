"""The tool catalog: every tool declared once, and everything reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel, Field

from dm_cc.cli import main
from dm_cc.config.dirs import HostFilesystem
from dm_cc.core.prompts import tool_specs
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.requests import KIND_LANGUAGE
from dm_cc.permissions.rules import EFFECTS, ENGINE_PERMISSIONS, READS
from dm_cc.policy.schema import policy_json_schema
from dm_cc.tools import catalog
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput, builtin_tools, load_tool
from dm_cc.tools.catalog import (
    CATALOG,
    ToolEntry,
    entry,
    input_requests,
    is_known_permission,
    known_permissions,
    language_of,
)
from dm_cc.tools.todo import TodoTool


@pytest.fixture
def where(tmp_path: Path) -> PathContextDirs:
    (tmp_path / "p").mkdir()
    return PathContextDirs(tmp_path / "p", tmp_path / "p", tmp_path / "home", HostFilesystem())


def test_every_entry_is_unique_and_loads_a_tool_of_its_own_name():
    names = [e.name for e in CATALOG]
    assert len(set(names)) == len(names)
    for e in CATALOG:
        if e.cls is not None:
            assert load_tool(e).name == e.name
    # every implemented entry, in catalog order (a new tool joins by its entry alone)
    assert [t.name for t in builtin_tools()] == [e.name for e in CATALOG if e.cls is not None]
    assert {"read", "write", "edit", "bash", "task"} <= set(names)


def test_every_kind_is_matched_in_its_permissions_pattern_language():
    for e in CATALOG:
        assert KIND_LANGUAGE[e.kind] == language_of(e.permission), e.name
    with pytest.raises(ValueError, match="matched as path"):
        catalog._checked([*CATALOG, ToolEntry("oops", "bash", "file", "path")])
    with pytest.raises(ValueError, match="engine makes itself"):
        catalog._checked([*CATALOG, ToolEntry("oops", "network", "url", "url")])


def test_known_permissions_come_from_the_catalog_and_the_engine():
    assert known_permissions() == {e.permission for e in CATALOG} | ENGINE_PERMISSIONS
    assert {"read", "edit", "bash", "external_directory", "sandbox_escape"} <= known_permissions()
    assert is_known_permission("mcp__git__status")
    assert not is_known_permission("write")  # write asks for edit


def test_every_tool_says_what_it_does():
    """Read-only rights are derived from these (dm_cc.policy.effects): a tool that
    only reads says so, one that writes, runs or reaches out says that."""
    effects = {e.name: e.effects for e in CATALOG}
    assert all(effects[name] == {"read"} for name in ("read", "glob", "grep", "list"))
    assert effects["write"] == effects["edit"] == {"write"}
    assert effects["bash"] == {"execute"} and effects["webfetch"] == {"network"}
    assert entry("mcp__some__tool").effects == EFFECTS   # nothing known: everything


@pytest.mark.parametrize("tool, text, expected", [
    ("read", "a.txt", [("read", "a.txt")]),
    ("write", "a.txt", [("edit", "a.txt")]),
    ("edit", "a.txt", [("edit", "a.txt")]),
    ("list", "src", [("list", "src")]),
    ("glob", "src", [("glob", "src")]),
    ("grep", "src", [("grep", "src"), ("read", "src")]),
    ("bash", "git status && ls", [("bash", "git status"), ("bash", "ls")]),
    ("webfetch", "HTTPS://Example.COM/a/../b", [("webfetch", "https://example.com/b")]),
    ("task", "explore", [("task", "explore")]),
    ("todo", "", [("todo", "*")]),
    ("plan_exit", "*", [("plan_exit", "*")]),
    ("mcp__git__log", '{"repo": "x", "n": 1}', [("mcp__git__log", '{"n": 1, "repo": "x"}')]),
])
def test_requests_of_every_kind(tool, text, expected, where):
    assert [(r.permission, r.pattern) for r in input_requests(tool, text, where)] == expected


def test_a_call_without_its_main_argument_uses_the_default_or_is_refused(where):
    assert [r.pattern for r in entry("list").requests({}, where)] == ["."]
    with pytest.raises(ValueError, match="missing argument: path"):
        entry("read").requests({}, where)
    assert [r.pattern for r in entry("read").requests({"path": "x", "paths": ["a", "b"]},
                                                      where)] == ["a", "b"]


def test_bad_inputs_are_named(where):
    with pytest.raises(LookupError, match="unknown tool 'nope' .known: read, write"):
        entry("nope")
    with pytest.raises(ValueError, match="plan_exit has no main argument"):
        input_requests("plan_exit", "soon", where)
    with pytest.raises(ValueError, match="JSON object"):
        input_requests("mcp__git__log", "[1]", where)
    with pytest.raises(LookupError, match="no implementation yet"):
        load_tool(entry("mcp__git__log"))


def test_duplicate_tool_names_are_refused():
    with pytest.raises(ValueError, match="two tools are named todo"):
        tool_specs([TodoTool(), TodoTool()])


def test_every_parameter_is_described():
    def walk(schema, where):
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{where}.{name} has no description"
        for sub_name, sub in schema.get("$defs", {}).items():
            walk(sub, f"{where}.{sub_name}")

    for spec in tool_specs(builtin_tools()):
        assert spec.description and len(spec.description) < 1000, spec.name
        walk(spec.parameters, spec.name)


# --------------------------------------------------------------------------- adding a tool


class StatParams(BaseModel):
    path: str = Field(description="The file to describe")


class StatTool(CatalogTool[StatParams]):
    """A throwaway tool with a permission of its own, as a new tool's file would be."""

    name: ClassVar[str] = "stat"
    description: ClassVar[str] = "Describe a file"
    Params = StatParams

    async def run(self, params: StatParams, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(params.path)


def test_a_tool_with_a_permission_of_its_own_is_one_file_and_one_entry(monkeypatch, project,
                                                                        capsys):
    """Adding a tool is its file (here, the class above) and its catalog entry: the
    catalog, the policy loader and lint, the schema, the engine and the rights of
    read-only agents all read it from there."""
    stat = ToolEntry("stat", "stat", "file", "path", f"{__name__}:StatTool", effects=READS)
    monkeypatch.setattr(catalog, "_BY_NAME", catalog._checked([*CATALOG, stat]))
    assert "stat" in known_permissions() and language_of("stat") == "path"
    assert builtin_tools()[-1].name == "stat"
    schema = policy_json_schema()["$defs"]["RuleSpec"]["properties"]["permission"]
    assert "stat" in schema["examples"]
    # a policy file names it, and lint reads its patterns as paths
    policy = project / "stat.yaml"
    policy.write_text("rules:\n  - {permission: stat, pattern: 'src/**', action: allow}\n"
                      "  - {permission: stat, pattern: '../x', action: deny}\n")
    assert main(["policy", "lint", str(policy)]) == 1
    out = capsys.readouterr().out
    assert "stat.yaml:3: never-matches" in out and "unknown" not in out
    # its rules are matched as paths (`*` stays in a segment), for build and plan alike
    for agent, expected in (("build", "allow"), ("plan", "allow")):
        assert main(["policy", "check", "--policy", str(policy), "--agent", agent, "--json",
                     "stat", "src/deep/a.py"]) == 0
        assert json.loads(capsys.readouterr().out)["decision"] == expected
    assert main(["policy", "check", "--policy", str(policy), "--json", "stat", "lib/a.py"]) == 0
    assert json.loads(capsys.readouterr().out)["decision"] == "ask"
