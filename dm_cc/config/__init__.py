"""Where dm_cc keeps its files (per-user, managed, project), its settings, and YAML
that remembers line numbers. Imports nothing of dm_cc but ``dm_cc.errors``.

    dirs.py         the per-user, managed and project directories; the host
                    filesystem the engine resolves paths with
    settings.py     ``config.yaml`` (user, then project): model, sandbox, MCP servers ...
    mcp_servers.py  the ``mcp.servers`` section, and whether each server may start
    server_files.py the files inside the project a server's command line names
    trust.py        whether the person trusts what the project's own files say
    yaml_lines.py   YAML with the line of each value; errors naming ``file:line``
    yaml_stream.py  how yaml_lines reads a document: one pass over its events,
                    alias expansion and nesting bounded (a hostile file's bombs)
    native.py       a library's compiled module without its package's Python
                    (pydantic_core's validator without its 200 TypedDicts)
    durable.py      a file replaced whole in one step, locks, damage set aside:
                    what every store and edited file shares to survive crashes
    words.py        counts and near misses in messages (``1 line``, ``did you
                    mean``), for every part's messages: each may import this part

The front door is lazy: a name's module is imported on its first use, so
``dm_cc --help`` loads ``dirs.py`` and no YAML.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.config.dirs import (
        MANAGED_POLICY,
        PLAN_FILE_PATTERN,
        PROJECT_DIR,
        HostFilesystem,
        ProjectRoot,
        agent_files_in,
        cache_dir,
        config_dir,
        data_dir,
        find_project,
        home_dir,
        managed_dir,
        plan_file,
        policy_files,
        project_dir,
        project_files,
        project_root,
        state_dir,
    )
    from dm_cc.config.durable import locked, replace_file, set_aside, shared, sync_directory
    from dm_cc.config.mcp_servers import STARTING_TRUST, ServerDefinition, Trust
    from dm_cc.config.native import pydantic_core_native
    from dm_cc.config.settings import Settings, load_settings, thinking_budget
    from dm_cc.config.trust import ProjectFile, ProjectTrust, digest
    from dm_cc.config.words import counted, did_you_mean
    from dm_cc.config.yaml_lines import display_path, line_of, load_yaml, validation_error
    from dm_cc.config.yaml_stream import LinePath

__all__ = [
    "MANAGED_POLICY",
    "PLAN_FILE_PATTERN",
    "PROJECT_DIR",
    "STARTING_TRUST",
    "HostFilesystem",
    "LinePath",
    "ProjectFile",
    "ProjectRoot",
    "ProjectTrust",
    "ServerDefinition",
    "Settings",
    "Trust",
    "agent_files_in",
    "cache_dir",
    "config_dir",
    "counted",
    "data_dir",
    "did_you_mean",
    "digest",
    "display_path",
    "find_project",
    "home_dir",
    "line_of",
    "load_settings",
    "load_yaml",
    "locked",
    "managed_dir",
    "plan_file",
    "policy_files",
    "project_dir",
    "project_files",
    "project_root",
    "pydantic_core_native",
    "replace_file",
    "set_aside",
    "shared",
    "state_dir",
    "sync_directory",
    "thinking_budget",
    "validation_error",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.config.dirs": ("MANAGED_POLICY", "PLAN_FILE_PATTERN", "PROJECT_DIR",
                          "HostFilesystem", "ProjectRoot",
                          "agent_files_in", "cache_dir", "config_dir", "data_dir",
                          "find_project", "home_dir", "managed_dir", "plan_file",
                          "policy_files", "project_dir", "project_files", "project_root",
                          "state_dir"),
    "dm_cc.config.durable": ("locked", "replace_file", "set_aside", "shared", "sync_directory"),
    "dm_cc.config.mcp_servers": ("STARTING_TRUST", "ServerDefinition", "Trust"),
    "dm_cc.config.native": ("pydantic_core_native",),
    "dm_cc.config.settings": ("Settings", "load_settings", "thinking_budget"),
    "dm_cc.config.trust": ("ProjectFile", "ProjectTrust", "digest"),
    "dm_cc.config.words": ("counted", "did_you_mean"),
    "dm_cc.config.yaml_lines": ("display_path", "line_of", "load_yaml", "validation_error"),
    "dm_cc.config.yaml_stream": ("LinePath",),
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
