"""Each part's front door (STYLE.md 19): the names it exports, pinned here as data.

Another part imports a part only through its door (``from dm_cc.tools import entry``,
never ``dm_cc.tools.catalog``: tests/test_architecture.py guards that). So a change
to what a part exports is a deliberate edit of :data:`EXPORTS` -- as httpx pins its
``__all__`` in tests/test_exported_members.py. docs/architecture.md says how to add
a name.

A lazy door (``doors: lazy:`` in architecture.yaml) imports nothing at import time:
its ``_LAZY`` table says which module defines each name, and a module ``__getattr__``
imports it on first use; the same names are imported under ``TYPE_CHECKING`` for mypy.
These tests hold the three in step.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import subprocess
import sys
from types import ModuleType

import pytest
from test_architecture import DESIGN, REPO, door, module_path

EXPORTS: dict[str, list[str]] = {
    "agents": ["Agent", "BUILTIN_SUBAGENTS", "DEFAULT_MAX_TURNS", "configured", "load_agents", "mentioned",
               "named_agent"],
    "cli": ["main"],
    "compose": ["DEFAULT_AGENT", "Options", "World", "open_world"],
    "config": [
        "HostFilesystem", "LinePath", "MANAGED_POLICY", "PLAN_FILE_PATTERN", "PROJECT_DIR", "ProjectFile",
        "ProjectRoot", "ProjectTrust", "STARTING_TRUST", "ServerDefinition", "Settings",
        "Trust", "agent_files_in", "cache_dir", "config_dir", "counted", "data_dir",
        "did_you_mean", "digest",
        "display_path", "find_project", "home_dir", "line_of", "load_settings", "load_yaml",
        "locked", "managed_dir", "plan_file", "policy_files", "project_dir", "project_files",
        "project_root", "pydantic_core_native", "replace_file", "set_aside", "shared",
        "state_dir", "sync_directory",
        "thinking_budget", "validation_error",
    ],
    "core": [
        "AgentSwitched", "Approval", "ApprovalRequest", "Approvals", "Approver", "AskFailed",
        "CallFacts", "ChangesLanded", "Compacted", "Event", "HeadlessApprover", "InTask", "Loop", "Notice",
        "Running", "Runtime", "TaskFinished", "TaskStarted", "ToolDecided", "ToolFinished",
        "TurnEnded", "consult_hooks", "context_report",
    ],
    "errors": [
        "AgentFileError", "ApprovalStoreError", "AuditLogError", "ConfigError", "DmccError",
        "PolicyError", "SessionError", "SettingsError", "UndoError", "UsageError",
    ],
    "llm": [
        "ChatModel", "ContextTooLong", "ModelError", "ModelReply", "OnStream", "ReasoningDelta",
        "RetryNotices", "Retrying", "StreamEvent", "TextDelta", "ToolSpec",
        "Usage", "WarmsUp", "make_model",
    ],
    "mcp": ["Listings", "McpServers", "ServerStatus"],
    "package": ["__version__"],
    "permissions": [
        "ACTIONS", "Action", "Candidate", "Ceiling", "DEFAULT_PROTECTED", "DEFAULT_RULE",
        "DEFAULT_SECRETS", "DELETE", "DOOM_LOOP", "Decision", "EFFECTS", "ENGINE_EFFECTS", "ENGINE_LANGUAGES",
        "ENGINE_PERMISSIONS", "Effect", "Gate", "HeredocBody", "KIND_LANGUAGE", "Kind", "Language", "Layer",
        "MCP_PREFIX", "NAMED_ONLY", "NETWORK", "NEVER_SAVED", "Origin", "PROTECTED_PATHS",
        "PathContext", "PathContextDirs",
        "Protected", "ProtectedPaths", "REACHING", "READS", "REDIRECT", "REPOSITORY", "Request", "Rule",
        "Ruleset", "SANDBOX_ESCAPE", "SECRET_STORES", "STRICTNESS", "Secret", "SecretStore",
        "SecretStores", "UNIVERSAL_PATHS", "Value", "Verdict", "arguments_fault",
        "canonical_url", "combine", "covers", "decide", "derive_requests", "escape_requests",
        "evaluate", "expand_home", "git_data", "heredoc_bodies", "host_requests",
        "is_mcp_permission",
        "load_arguments", "names_a_permission",
        "path_alternatives", "path_pattern_problem", "path_requests", "stricter", "too_broad", "url_names",
    ],
    "policy": [
        "APPROVALS_LAYER", "AUTO_LAYER", "ActionName", "Capabilities", "Changed", "EXPORTERS",
        "Edit", "Finding", "HOOK_LAYER", "Hook", "IMPORTERS", "InlineTestEntry", "InvalidSource",
        "Link", "NewRule", "PROJECT_LAYER",
        "Place", "Policy",
        "RuleSpec", "SHIPPED_PREFIX",
        "TRUSTED_HOOK_LAYERS", "USER_LAYER", "add_rule", "beyond_rights", "file_rules", "findings_of",
        "lifted_for_changes", "lint_files",
        "load_policy", "load_policy_arg", "numbered", "parse_policy", "policy_json_schema",
        "remove_rule", "render_policy", "rules_from", "run_inline_tests", "save", "settle_tests",
        "shipped_names", "shipped_summary", "shipped_text", "stack_rules", "unknown_agents",
    ],
    "sandbox": [
        "Change", "Conflict", "Mount", "Plan", "Sandbox", "SandboxSpec", "Support",
        "Transaction", "git_dirs", "stopped_by_sandbox", "wait_removed",
    ],
    "session": [
        "ApprovalStore", "AuditLog", "DecisionExporter", "Message", "Recorder", "SavedApproval",
        "Session", "SessionInfo", "SessionStore", "Step", "ToolCall", "UndoResult", "UndoStore",
        "Verification", "agent_in_charge", "new_id", "parse_duration", "session_tree",
        "telemetry_config",
    ],
    "tools": [
        "DEFAULT_TIMEOUT", "JsonArguments", "TaskParams", "Tool", "ToolContext", "ToolEntry",
        "ToolOutput", "UndoRecorder", "builtin_tools", "check_input_tool", "effects_of", "entry",
        "input_requests", "is_known_permission", "known_permissions", "language_of",
        "mcp_effects", "run_plan",
    ],
    "ui": [
        "CallLines", "approved_lines", "auto_mode_text", "early_prompt", "event_json",
        "failure_json", "hooks_lines", "layer_lines", "replay", "result_json", "result_lines",
        "retry_line", "run_repl", "server_lines", "server_rows", "session_json", "session_notice",
        "session_table", "status_lines", "step_lines", "trace_lines", "tree_indent", "trust_lines",
        "trusted_lines", "unapproved_line", "where_line",
    ],
}

PARTS = sorted(DESIGN["parts"])
LAZY = sorted(DESIGN["doors"]["lazy"])


def _door(part: str) -> ModuleType:
    return importlib.import_module(door(part))


def lazy_table(module: ModuleType) -> dict[str, str]:
    """A lazy door's ``_LAZY``, as name -> the module that defines it ({} for an eager door)."""
    table = getattr(module, "_LAZY", {})
    return {name: owner for owner, names in table.items() for name in names}


def type_checking_imports(path: str) -> dict[str, str]:
    """The names a door imports under ``if TYPE_CHECKING:``, as name -> module."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    found.update((alias.asname or alias.name, statement.module)
                                 for alias in statement.names)
    return found


def test_every_part_is_pinned():
    assert sorted(EXPORTS) == PARTS


@pytest.mark.parametrize("part", PARTS)
def test_the_front_door_exports_what_is_pinned(part):
    exported = _door(part).__all__
    assert len(set(exported)) == len(exported), f"{door(part)}.__all__ names a name twice"
    assert sorted(exported) == EXPORTS[part], (
        f"{door(part)}.__all__ changed: if that is meant, change EXPORTS[{part!r}] too")


@pytest.mark.parametrize("part", PARTS)
def test_every_exported_name_resolves(part):
    module = _door(part)
    owners = lazy_table(module)
    for name in module.__all__:
        value = getattr(module, name)
        if name in owners:  # the very object its module defines
            assert value is getattr(importlib.import_module(owners[name]), name), name
    assert not hasattr(module, "no_such_name_here")


@pytest.mark.parametrize("part", PARTS)
def test_a_lazy_door_agrees_with_its_table_and_its_type_checking_imports(part):
    module = _door(part)
    owners = lazy_table(module)
    path = module_path(door(part))
    assert path is not None
    if part not in LAZY:
        assert owners == {}, f"{door(part)} has a lazy table: list {part} in doors.lazy"
        return
    assert sorted(owners) == sorted(module.__all__), f"{path}: _LAZY and __all__ differ"
    assert type_checking_imports(path) == owners, (
        f"{path}: the TYPE_CHECKING imports and _LAZY name other modules or names")
    assert all(owner.startswith(door(part) + ".") for owner in owners.values()), (
        f"{path}: a lazy door re-exports only its own part's names")


PACKAGES = [p for p in PARTS if p != "package"  # dm_cc's own modules are the other parts
            and str(module_path(door(p))).endswith("/__init__.py")]


@pytest.mark.parametrize("part", PACKAGES)
def test_no_exported_name_is_also_a_module_of_the_part(part):
    """Importing a submodule sets it as an attribute of its package: an exported name
    spelled like a module would be that module once someone imported it."""
    module = _door(part)
    modules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert sorted(set(module.__all__) & modules) == []


def test_importing_the_lazy_doors_loads_none_of_their_modules(tmp_path):
    code = ("import importlib, sys\n"
            f"doors = {[door(part) for part in LAZY]!r}\n"
            "for name in doors:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules for d in doors if m.startswith(d + '.')))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_a_lazy_name_is_found_once_then_held():
    module = _door("ui")
    value = module.tree_indent
    assert vars(module)["tree_indent"] is value  # the next lookup is a plain attribute
