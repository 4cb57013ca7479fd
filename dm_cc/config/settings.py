"""Settings: user ``config.yaml``, then project ``.dm_cc/config.yaml`` (once the
person trusts it), then the environment, then command-line flags — later wins, key
by key.

```yaml
model: openai/gpt-4o-mini        # env DM_CC_MODEL, flag --model
api_base: http://localhost:8000  # env DM_CC_API_BASE, flag --api-base
default_agent: build             # the primary agent a new session starts with
max_task_depth: 3                # how deep subagents may nest (a child is depth 1)
sandbox: auto                    # auto | required | off: user or managed config only
thinking: 8000                   # extended thinking, in tokens; off (default): none
mcp:                             # MCP servers (dm_cc/config/mcp_servers.py, docs/mcp.md)
  servers:
    time: {command: mcp-server-time, args: [--local-timezone, UTC]}
    docs: {url: "http://127.0.0.1:8765/mcp", headers: {Authorization: "Bearer ${TOKEN}"}}
```

A key set to null (``model:`` with nothing after it) is "not set here" and does not
override an earlier file; an empty environment variable is ignored likewise. MCP
servers merge by name: a project server replaces a user server of the same name
(and, being a project's, starts only once approved).

``sandbox:`` (how shell commands are confined, DESIGN.md §8) is read from the user
config and from the managed config (``<managed>/config.yaml``, which may set only
it, and wins); a project file that sets it is an error, as one that sets
``api_base`` is: a cloned repository must not turn the sandbox off.

Every value remembers where it came from (``Settings.sources``: ``file:line``,
``environment DM_CC_MODEL``, ``--model``) so the loop can tell the user, and decide
whether to trust it: a project file can point ``api_base`` elsewhere or start MCP
servers, so callers should treat those with care when they come from a project
(each MCP server carries its ``origin``).

Errors are :class:`~dm_cc.errors.SettingsError` naming ``file:line``. pydantic is
imported only when a settings file exists; nothing on the ``dm_cc policy`` path
imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from dm_cc.config import dirs
from dm_cc.config.mcp_servers import Origin, ServerDefinition, parse_servers
from dm_cc.config.yaml_lines import display_path, line_of, load_yaml, validation_error
from dm_cc.errors import SettingsError

if TYPE_CHECKING:  # pydantic is imported only when a file must be validated
    from pydantic import BaseModel

SCALARS = ("model", "api_base", "default_agent", "max_task_depth", "sandbox", "thinking")
SANDBOX_MODES = ("auto", "required", "off")
# Keys a project's config may not set, and why.
NOT_FROM_PROJECT = {
    "api_base": ("api_base is not accepted from a project's config: a cloned repository "
                 "could send your API key to its own server. Set it in your user config, "
                 "DM_CC_API_BASE or --api-base."),
    "sandbox": ("sandbox is not accepted from a project's config: a cloned repository could "
                "turn the sandbox off. Set it in your user config ({user}) or the managed "
                "config."),
}
DEFAULT_TASK_DEPTH = 3
ENVIRONMENT = {"model": "DM_CC_MODEL", "api_base": "DM_CC_API_BASE",
               "thinking": "DM_CC_THINKING"}
THINKING_MOST = 1_000_000   # tokens: more is a typo (a model cuts it to what it allows)


def thinking_budget(value: Any) -> int:
    """A ``thinking:`` value as a budget of tokens, 0 for off: a whole number (0 is
    off), or off / false / no (YAML reads a bare ``off`` as false); ValueError
    otherwise (a bare ``true`` too: how much is for the person to say)."""
    if isinstance(value, str):
        text = value.strip().lower()
        value = False if text in ("off", "false", "no") else int(text) if text.isdigit() else value
    if value is False:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= THINKING_MOST:
        return value
    raise ValueError(f"expected a number of thinking tokens (e.g. 8000) or off, not {value!r}")


@dataclass(frozen=True, slots=True)
class Settings:
    model: str | None = None
    api_base: str | None = None
    default_agent: str = "build"
    max_task_depth: int = DEFAULT_TASK_DEPTH
    sandbox: str = "auto"
    thinking: int = 0               # a budget of thinking tokens; 0: off
    mcp: Mapping[str, ServerDefinition] = field(default_factory=lambda: MappingProxyType({}))
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@cache
def _model() -> type[BaseModel]:
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class _Strict(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")

    class SettingsFile(_Strict):
        model: str | None = Field(default=None, min_length=1)
        api_base: str | None = Field(default=None, min_length=1)
        default_agent: str | None = Field(default=None, min_length=1)
        max_task_depth: int | None = Field(default=None, ge=0, le=10)
        sandbox: Literal["auto", "required", "off"] | None = None
        thinking: Any = None  # thinking_budget checks it
        mcp: Any = None  # checked by parse_servers, which names each line

        @field_validator("thinking", mode="before")
        @classmethod
        def _thinking(cls, value: Any) -> Any:
            return None if value is None else thinking_budget(value)

        @field_validator("sandbox", mode="before")
        @classmethod
        def _yaml_off(cls, value: Any) -> Any:
            return "off" if value is False else value  # YAML reads a bare `off` as false

    return SettingsFile


def parse_settings(text: str, shown: str, *, origin: Origin = "user",
                   env: Mapping[str, str] = os.environ, root: Path | None = None
                   ) -> tuple[dict[str, Any], dict[str, str], dict[str, ServerDefinition]]:
    """One settings file → (values set, their sources, MCP servers); ``${VAR}`` in a
    server's strings is read from ``env``; ``root``: the project whose file it is
    (its servers' named files are fingerprinted)."""
    data, lines = load_yaml(text, shown, SettingsError)
    if data is None:
        return {}, {}, {}
    if not isinstance(data, dict):
        raise SettingsError(shown, 1, "a settings file is a mapping (model:, api_base:, "
                            "default_agent:, max_task_depth:, sandbox:, thinking:, mcp:)")
    from pydantic import ValidationError

    model = _model()
    try:
        spec: Any = model.model_validate(data)  # its fields are SettingsFile's
    except ValidationError as exc:
        raise validation_error(exc, shown, lines, SettingsError,
                               model.__pydantic_core_schema__) from None
    values = {key: getattr(spec, key) for key in SCALARS if getattr(spec, key) is not None}
    sources = {key: f"{shown}:{line_of(lines, (key,))}" for key in values}
    return values, sources, parse_servers(spec.mcp, origin, shown, lines, env, root)


def settings_files(root: Path, env: Mapping[str, str] = os.environ) -> list[Path]:
    """The settings files :func:`load_settings` reads, in order (user, then project)."""
    return [dirs.config_dir(env) / "config.yaml", dirs.project_dir(root) / "config.yaml"]


def load_settings(root: Path, env: Mapping[str, str] = os.environ, *,
                  model: str | None = None, api_base: str | None = None,
                  thinking: int | None = None,
                  trusts: Callable[[Path], bool] = lambda path: False) -> Settings:
    """The settings in force. ``trusts``: whether the person trusts the project's
    config file as it is (``dm_cc.config.trust``); untrusted, its values are not
    used (its MCP servers still are: each starts only once the person approves it)."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    servers: dict[str, ServerDefinition] = {}
    for path in settings_files(root, env):
        if not path.exists():
            continue
        shown = display_path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(shown, None, f"cannot read settings file: {exc}") from None
        project = path.is_relative_to(root)
        file_values, file_sources, file_servers = parse_settings(
            text, shown, origin="project" if project else "user", env=env,
            root=root if project else None)
        if project:
            for key, why in NOT_FROM_PROJECT.items():
                if key in file_values:
                    raise SettingsError(shown, _line(file_sources[key]), why.format(
                        user=display_path(dirs.config_dir(env) / "config.yaml")))
            if not trusts(path):
                file_values, file_sources = {}, {}
        values.update(file_values)
        sources.update(file_sources)
        servers.update(file_servers)
    managed = dirs.managed_dir(env) / "config.yaml"
    if managed.exists():
        shown = display_path(managed)
        try:
            text = managed.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(shown, None, f"cannot read settings file: {exc}") from None
        file_values, file_sources, file_servers = parse_settings(text, shown, env=env)
        others = [file_sources[key] for key in file_values if key != "sandbox"]
        others += [server.source for server in file_servers.values()]
        if others:
            raise SettingsError(shown, _line(others[0]), "the managed config sets only sandbox:")
        values.update(file_values)
        sources.update(file_sources)
    for key, variable in ENVIRONMENT.items():
        if env.get(variable):
            values[key] = _from_environment(key, variable, env[variable])
            sources[key] = f"environment {variable}"
    for key, flag in (("model", model), ("api_base", api_base)):
        if flag:
            values[key] = flag
            sources[key] = f"--{key.replace('_', '-')}"
    if thinking is not None:
        values["thinking"], sources["thinking"] = thinking, "--thinking"
    sources.update({f"mcp.servers.{name}": server.source for name, server in servers.items()})
    return Settings(**values, mcp=MappingProxyType(servers), sources=MappingProxyType(sources))


def _from_environment(key: str, variable: str, text: str) -> Any:
    """An environment variable's text as its key's value (SettingsError naming it)."""
    if key != "thinking":
        return text
    try:
        return thinking_budget(text)
    except ValueError as exc:
        raise SettingsError(f"environment {variable}", None, str(exc)) from None


def _line(source: str) -> int | None:
    line = source.rsplit(":", 1)[-1]
    return int(line) if line.isdigit() else None
