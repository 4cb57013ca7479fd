"""Settings: user ``config.yaml``, then project ``.dm_cc/config.yaml`` (once the
person trusts it), then the environment, then command-line flags — later wins, key
by key.

```yaml
model: openai/gpt-4o-mini        # env DM_CC_MODEL, flag --model
api_base: http://localhost:8000  # env DM_CC_API_BASE, flag --api-base
default_agent: build             # the primary agent a new session starts with
max_task_depth: 3                # how deep subagents may nest (a child is depth 1)
max_turns: 50                    # model calls in one turn (a subagent's: at most this)
temperature: 0.2                 # for agents that set none
sandbox: auto                    # auto | required | off: user or managed config only
agents:                          # dm_cc's built-in subagents (explore, general, reviewer)
  explore: {model: openai/gpt-4o-mini, temperature: 0, max_turns: 20}
thinking: 8000                   # extended thinking, in tokens; off (default): none
telemetry: otlp                  # decisions to an OpenTelemetry collector (docs/telemetry.md);
telemetry_endpoint: http://collector:4318   # off (default): nothing is sent. These four:
telemetry_protocol: http/protobuf          #   user, managed config or DM_CC_* only
telemetry_input: false           # send each call's input (a command can hold a token)
mcp:                             # MCP servers (dm_cc/config/mcp_servers.py, docs/mcp.md)
  servers:
    time: {command: mcp-server-time, args: [--local-timezone, UTC]}
    docs: {url: "http://127.0.0.1:8765/mcp", headers: {Authorization: "Bearer ${TOKEN}"}}
```

The keys are data (:data:`KEYS`, :data:`AGENT_KEYS`): each names its type and limits
once, and from that come the file's schema, the environment variable that
overrides it (``DM_CC_MAX_TASK_DEPTH``; ``DM_CC_AGENTS_EXPLORE_MODEL`` for
``agents.explore.model``) and how that variable's text is read — checked as the
file's value is, an error naming the variable. A new key is one line of the table
and a field of :class:`Settings`. ``mcp`` (a structure) has no variable.

A key set to null (``model:`` with nothing after it) is "not set here" and does not
override an earlier file; an empty environment variable is ignored likewise. MCP
servers merge by name: a project server replaces a user server of the same name
(and, being a project's, starts only once approved); ``agents:`` merge by agent and
key.

``sandbox:`` (how shell commands are confined, DESIGN.md §8) is read from the user
config, the environment and the managed config (``<managed>/config.yaml``, which may
set only it, the ``telemetry*`` keys and ``managed_policy:`` -- the managed files
delivered from a URL, read by dm_cc.policy -- and wins over everything); a project
file that sets it is an error, as one that sets ``api_base`` is: a cloned repository
must not turn the sandbox off. So are the ``telemetry*`` keys (where decisions are
sent): a cloned repository must not send your commands to its collector, nor stop
them reaching your team's.

Every value remembers where it came from (``Settings.sources``: ``file:line``,
``environment DM_CC_MODEL``, ``--model``) so the loop can tell the user, and decide
whether to trust it: a project file can point ``api_base`` elsewhere or start MCP
servers, so callers should treat those with care when they come from a project
(each MCP server carries its ``origin``).

Errors are :class:`~dm_cc.errors.SettingsError` naming ``file:line`` (or
``environment DM_CC_…``). pydantic is imported only when a settings file exists;
nothing on the ``dm_cc policy`` path imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from dm_cc.config import dirs
from dm_cc.config.mcp_servers import Origin, ServerDefinition, parse_servers
from dm_cc.config.yaml_lines import display_path, line_of, load_yaml, validation_error
from dm_cc.errors import SettingsError

if TYPE_CHECKING:  # pydantic is imported only when a file must be validated
    from pydantic import BaseModel

SandboxMode = Literal["auto", "required", "off"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
TelemetryExporter = Literal["off", "otlp"]
TelemetryProtocol = Literal["grpc", "http/protobuf"]


@dataclass(frozen=True, slots=True)
class Key:
    """One settings key: its type (``str``, ``int``, ``float`` or a ``Literal``) and
    limits, which the file's schema and its environment variable share."""

    name: str
    type: Any
    ge: float | None = None
    le: float | None = None
    convert: Callable[[Any], Any] | None = None   # its own reading (ValueError: what it wants)

    def env(self, prefix: str = "DM_CC_") -> str:
        return prefix + self.name.upper()

    def parse(self, text: str) -> Any:
        """An environment variable's text as the file's value, checked as it is; a
        ValueError saying what was expected."""
        if self.convert is not None:
            return self.convert(text)
        kind = {int: "a whole number", float: "a number"}.get(self.type)
        if kind is not None:
            try:
                value = self.type(text.strip())
            except ValueError:
                raise ValueError(f"expected {kind}, not {text!r}") from None
            if (self.ge is not None and value < self.ge) or \
                    (self.le is not None and value > self.le):
                raise ValueError(f"expected {kind} from {_number(self.ge)} to "
                                 f"{_number(self.le)}, not {text!r}")
            return value
        if (choices := get_args(self.type)) and text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, not {text!r}")
        return text

    def field(self) -> tuple[Any, Any]:
        """The pydantic field of the file's schema (every key may be null: not set)."""
        from pydantic import BeforeValidator, Field

        if self.convert is not None:
            convert = self.convert
            checked = BeforeValidator(lambda value: None if value is None else convert(value))
            return Annotated[self.type | None, checked], Field(default=None)
        limits = {name: value for name, value in (("ge", self.ge), ("le", self.le))
                  if value is not None}
        if self.type is str:
            limits["min_length"] = 1
        return self.type | None, Field(default=None, **limits)  # type: ignore[call-overload]


def _number(value: float | None) -> str:
    return "any" if value is None else f"{value:g}"


def _table(*keys: Key) -> dict[str, Key]:
    table: dict[str, Key] = {}
    for key in keys:
        if key.name in table:
            raise ValueError(f"settings key {key.name} twice")
        table[key.name] = key
    return table


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


def telemetry_exporter(value: Any) -> str:
    """A ``telemetry:`` value: otlp, or off (YAML reads a bare ``off`` as false)."""
    if value is False or (isinstance(value, str) and value.strip().lower() in ("off", "false", "no")):
        return "off"
    if isinstance(value, str) and value.strip() == "otlp":
        return "otlp"
    raise ValueError(f"expected otlp or off, not {value!r}")


def switch(value: Any) -> bool:
    """A yes/no value: true/false as YAML reads them, or (a variable's text) true, false,
    on, off, yes, no, 1, 0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "on", "yes", "1"):
            return True
        if text in ("false", "off", "no", "0"):
            return False
    raise ValueError(f"expected true or false, not {value!r}")


#: The top-level keys that hold one value: the file, ``DM_CC_<KEY>``, and (some) a flag.
KEYS = _table(
    Key("model", str),
    Key("api_base", str),
    Key("default_agent", str),
    Key("max_task_depth", int, ge=0, le=10),
    Key("max_turns", int, ge=1, le=10_000),
    Key("temperature", float, ge=0, le=2),
    Key("sandbox", SandboxMode),
    Key("thinking", int, convert=thinking_budget),
    Key("telemetry", TelemetryExporter, convert=telemetry_exporter),
    Key("telemetry_endpoint", str),
    Key("telemetry_protocol", TelemetryProtocol),
    Key("telemetry_input", bool, convert=switch),
)
#: What ``agents.<name>:`` may set for a built-in subagent (an agent file's keys of the
#: same names): ``DM_CC_AGENTS_<NAME>_<KEY>``.
AGENT_KEYS = _table(
    Key("model", str),
    Key("temperature", float, ge=0, le=2),
    Key("max_turns", int, ge=1, le=10_000),
)
TELEMETRY_KEYS = ("telemetry", "telemetry_endpoint", "telemetry_protocol", "telemetry_input")
# Keys a project's config may not set, and why.
NOT_FROM_PROJECT = {
    "api_base": ("api_base is not accepted from a project's config: a cloned repository "
                 "could send your API key to its own server. Set it in your user config, "
                 "DM_CC_API_BASE or --api-base."),
    "sandbox": ("sandbox is not accepted from a project's config: a cloned repository could "
                "turn the sandbox off. Set it in your user config ({user}) or the managed "
                "config."),
    **{key: (f"{key} is not accepted from a project's config: a cloned repository could "
             "send your decisions (and the commands they are about) to its own collector, or "
             "stop them reaching your team's. Set it in your user config ({user}), the "
             "managed config or DM_CC_" + key.upper() + ".")
       for key in TELEMETRY_KEYS},
}
# Keys the managed config may set (it wins over everything): the organisation's word.
MANAGED_KEYS = ("sandbox", *TELEMETRY_KEYS)
DEFAULT_TASK_DEPTH = 3


def environment_variables(subagents: Collection[str] = ()) -> dict[str, str]:
    """Each key's environment variable: ``{"max_task_depth": "DM_CC_MAX_TASK_DEPTH",
    "agents.explore.model": "DM_CC_AGENTS_EXPLORE_MODEL", …}``."""
    variables = {name: key.env() for name, key in KEYS.items()}
    for agent in subagents:
        prefix = f"DM_CC_AGENTS_{agent.upper().replace('-', '_')}_"
        variables.update({f"agents.{agent}.{name}": key.env(prefix)
                          for name, key in AGENT_KEYS.items()})
    return variables




@dataclass(frozen=True, slots=True)
class Settings:
    model: str | None = None
    api_base: str | None = None
    default_agent: str = "build"
    max_task_depth: int = DEFAULT_TASK_DEPTH
    max_turns: int | None = None
    temperature: float | None = None
    sandbox: str = "auto"
    # agents.<built-in subagent>: {model, temperature, max_turns} as set (only those set)
    agents: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({}))
    thinking: int = 0               # a budget of thinking tokens; 0: off
    telemetry: str = "off"          # otlp: every decision to a collector (docs/telemetry.md)
    telemetry_endpoint: str | None = None   # None: the OTEL_* variables say, or localhost
    telemetry_protocol: str | None = None   # None: the OTEL_* variables say, or http/protobuf
    telemetry_input: bool = False   # each call's input too (it can hold a secret)
    mcp: Mapping[str, ServerDefinition] = field(default_factory=lambda: MappingProxyType({}))
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@cache
def _model() -> type[BaseModel]:
    from pydantic import BaseModel, ConfigDict, create_model

    class _Strict(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")

    fields: dict[str, Any] = {name: key.field() for name, key in AGENT_KEYS.items()}
    agent: Any = create_model("AgentSettings", __base__=_Strict, **fields)
    fields = {name: key.field() for name, key in KEYS.items()}
    fields["agents"] = (dict[str, agent] | None, None)
    fields["mcp"] = (Any, None)   # checked by parse_servers, which names each line
    fields[dirs.MANAGED_POLICY] = (Any, None)   # the managed config's only: dm_cc.policy reads it
    return create_model("SettingsFile", __base__=_Strict, **fields)


Values = dict[str, Any]     # "model": …, "agents.explore.model": … (flat, as the sources)


def parse_settings(text: str, shown: str, *, origin: Origin = "user",
                   env: Mapping[str, str] = os.environ, root: Path | None = None,
                   subagents: Collection[str] = (), managed: bool = False
                   ) -> tuple[Values, dict[str, str], dict[str, ServerDefinition]]:
    """One settings file → (values set, their sources, MCP servers); ``${VAR}`` in a
    server's strings is read from ``env``; ``root``: the project whose file it is
    (its servers' named files are fingerprinted); ``subagents``: the agents
    ``agents:`` may name; ``managed``: it is the managed config (which alone may
    have ``managed_policy:``)."""
    data, lines = load_yaml(text, shown, SettingsError)
    if data is None:
        return {}, {}, {}
    if not isinstance(data, dict):
        raise SettingsError(shown, 1, "a settings file is a mapping (model:, api_base:, "
                            "default_agent:, max_task_depth:, sandbox:, thinking:, telemetry:, "
                            "agents:, mcp:)")
    if data.get("sandbox") is False:
        data = {**data, "sandbox": "off"}    # YAML reads a bare `off` as false
    from pydantic import ValidationError

    model = _model()
    try:
        spec: Any = model.model_validate(data)  # its fields are those of KEYS
    except ValidationError as exc:
        raise validation_error(exc, shown, lines, SettingsError,
                               model.__pydantic_core_schema__) from None
    if getattr(spec, dirs.MANAGED_POLICY) is not None and not managed:
        raise SettingsError(shown, line_of(lines, (dirs.MANAGED_POLICY,)), (
            f"{dirs.MANAGED_POLICY}: is read only from the managed config "
            f"({display_path(dirs.managed_dir(env) / 'config.yaml')})"))
    values = {name: getattr(spec, name) for name in KEYS if getattr(spec, name) is not None}
    paths: dict[str, tuple[str, ...]] = {name: (name,) for name in values}
    for agent, keys in (spec.agents or {}).items():
        if agent not in subagents:
            raise SettingsError(shown, line_of(lines, ("agents", agent)), _not_subagent(
                agent, subagents))
        for name in AGENT_KEYS:
            if (value := getattr(keys, name)) is not None:
                values[f"agents.{agent}.{name}"] = value
                paths[f"agents.{agent}.{name}"] = ("agents", agent, name)
    sources = {key: f"{shown}:{line_of(lines, path)}" for key, path in paths.items()}
    return values, sources, parse_servers(spec.mcp, origin, shown, lines, env, root)


def _not_subagent(agent: str, subagents: Collection[str]) -> str:
    return (f"agents: {agent!r} is not one of dm_cc's built-in subagents "
            f"({', '.join(subagents) or 'none'}); an agent file sets its own model:, "
            "temperature: and max_turns:, and a primary agent uses the top-level keys")


def from_environment(env: Mapping[str, str], subagents: Collection[str] = ()
                     ) -> tuple[Values, dict[str, str]]:
    """The values the ``DM_CC_*`` variables set (an empty one sets nothing), read as
    the file's are; SettingsError naming the variable for one that does not parse."""
    values: Values = {}
    for name, variable in environment_variables(subagents).items():
        text = env.get(variable)
        if not text:
            continue
        key = AGENT_KEYS[name.rsplit(".", 1)[1]] if name.startswith("agents.") else KEYS[name]
        try:
            values[name] = key.parse(text)
        except ValueError as exc:
            raise SettingsError(f"environment {variable}", None,
                                f"{exc} ({name}; unset it or fix it)") from None
    return values, {name: f"environment {environment_variables(subagents)[name]}"
                    for name in values}


def settings_files(root: Path, env: Mapping[str, str] = os.environ) -> list[Path]:
    """The settings files :func:`load_settings` reads, in order (user, then project)."""
    return [dirs.config_dir(env) / "config.yaml", dirs.project_dir(root) / "config.yaml"]


def load_settings(root: Path, env: Mapping[str, str] = os.environ, *,
                  model: str | None = None, api_base: str | None = None,
                  flags: Mapping[str, Any] | None = None, subagents: Collection[str] = (),
                  trusts: Callable[[Path], bool] = lambda path: False) -> Settings:
    """The settings in force. ``trusts``: whether the person trusts the project's
    config file as it is (``dm_cc.config.trust``); untrusted, its values are not
    used (its MCP servers still are: each starts only once the person approves it).
    ``flags``: the command line's values by key (``max_turns``: ``--max-turns``),
    ``model`` and ``api_base`` among them; ``subagents``: the built-in subagents
    ``agents:`` may name."""
    values: Values = {}
    sources: dict[str, str] = {}
    servers: dict[str, ServerDefinition] = {}
    for path in settings_files(root, env):
        if not path.exists():
            continue
        shown = display_path(path)
        project = path.is_relative_to(root)
        file_values, file_sources, file_servers = parse_settings(
            _read(path, shown), shown, origin="project" if project else "user", env=env,
            root=root if project else None, subagents=subagents)
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
    env_values, env_sources = from_environment(env, subagents)
    values.update(env_values)
    sources.update(env_sources)
    for key, value in {"model": model, "api_base": api_base, **(flags or {})}.items():
        if value is not None and value != "":
            values[key] = value
            sources[key] = f"--{key.replace('_', '-')}"
    managed = dirs.managed_dir(env) / "config.yaml"
    if managed.exists():   # the organisation's word on the sandbox wins over everything
        shown = display_path(managed)
        file_values, file_sources, file_servers = parse_settings(_read(managed, shown), shown,
                                                                 env=env, managed=True)
        others = [file_sources[key] for key in file_values if key not in MANAGED_KEYS]
        others += [server.source for server in file_servers.values()]
        if others:
            raise SettingsError(shown, _line(others[0]), "the managed config sets only "
                                + ", ".join(f"{key}:" for key in MANAGED_KEYS)
                                + f" and {dirs.MANAGED_POLICY}:")
        values.update(file_values)
        sources.update(file_sources)
    sources.update({f"mcp.servers.{name}": server.source for name, server in servers.items()})
    agents: dict[str, dict[str, Any]] = {}
    for name in [name for name in values if name.startswith("agents.")]:
        _, agent, key = name.split(".")
        agents.setdefault(agent, {})[key] = values.pop(name)
    return Settings(**values, agents=MappingProxyType({name: MappingProxyType(keys)
                                                       for name, keys in agents.items()}),
                    mcp=MappingProxyType(servers), sources=MappingProxyType(sources))


def _read(path: Path, shown: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(shown, None, f"cannot read settings file: {exc}") from None


def _line(source: str) -> int | None:
    line = source.rsplit(":", 1)[-1]
    return int(line) if line.isdigit() else None
