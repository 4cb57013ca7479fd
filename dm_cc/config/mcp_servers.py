"""MCP server definitions: the ``mcp.servers`` section of a settings file.

```yaml
mcp:
  servers:
    time:                                   # stdio: a program dm_cc starts
      command: mcp-server-time              # the program (one word, not split)
      args: [--local-timezone, UTC]
      env: {TZ_DATA: "${HOME}/tz"}          # added to a small inherited environment
      cwd: tools                            # relative to the project root
    docs:                                   # streamable HTTP: a server already running
      url: http://127.0.0.1:8765/mcp
      headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    old: {command: legacy-server, disabled: true}
```

``${VAR}`` in any string value is replaced from the environment when the file is
read; a variable that is not set is an error naming ``file:line``. Server names
are letters, digits and ``-``, with single ``_`` between them (``__`` separates
server and tool in ``mcp__<server>__<tool>``).

Each definition remembers its ``origin`` (``user`` or ``project``) and ``source``
(``file:line``). A project's server is code a cloned repository would run, so it
starts only once the person approved its :attr:`ServerDefinition.fingerprint`: a
hash of the definition *as written* (before ``${VAR}`` is replaced, so a rotated
token does not ask again, while any change to the text does).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from dm_cc.config.yaml_lines import LinePath, line_of
from dm_cc.errors import SettingsError

Origin = Literal["user", "project"]
SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
HTTP_KEYS = frozenset({"url", "headers"})
KEYS = STDIO_KEYS | HTTP_KEYS | {"disabled"}


def _frozen(mapping: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class ServerDefinition:
    """One MCP server: stdio (``command``) or streamable HTTP (``url``)."""

    name: str
    origin: Origin
    source: str                              # file:line of its name
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_frozen)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=_frozen)
    disabled: bool = False
    written: str = "{}"                      # the definition as written, canonical JSON

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def argv(self) -> list[str]:
        """The program and its arguments (stdio servers; [] for HTTP)."""
        return [self.command, *self.args] if self.command is not None else []

    @property
    def fingerprint(self) -> str:
        """``sha256:<hex>`` of the definition as written: what a trust approval names."""
        return "sha256:" + hashlib.sha256(self.written.encode("utf-8")).hexdigest()

    def where(self) -> str:
        """What it runs or where it connects, for people (``mcp-server-time --x``, a URL)."""
        if self.url is not None:
            return self.url
        return " ".join(self.argv)

    def trust(self, trusted: Mapping[str, str]) -> Trust:
        """Whether it may start: a user's server always; a project's only when
        ``trusted`` (name → fingerprint, from the approval store) holds its definition."""
        if self.origin == "user":
            return "user config"
        approved = trusted.get(self.name)
        if approved is None:
            return "not approved"
        return "approved" if approved == self.fingerprint else "changed since approved"

    def refusal(self, trust: Trust) -> str:
        """Why this project's server was not started, and how to let it start."""
        state = "has changed since it was approved" if trust == "changed since approved" \
            else "is not approved"
        return (f"MCP server {self.name} ({self.source}) is defined by this project and "
                f"{state}, so it was not started: it would run `{self.where()}`. Review it, "
                f"then approve it with `dm_cc mcp trust {self.name}`.")


def parse_servers(section: Any, origin: Origin, shown: str,
                  lines: dict[LinePath, int], env: Mapping[str, str]) -> dict[str, ServerDefinition]:
    """The ``mcp:`` section of one settings file → its servers by name.
    SettingsError naming ``file:line`` for a bad entry or a missing variable."""
    if section is None:
        return {}

    def fail(loc: LinePath, message: str) -> SettingsError:
        return SettingsError(shown, line_of(lines, ("mcp", *loc)), message)

    if not isinstance(section, dict) or set(section) - {"servers"}:
        raise fail((), "mcp: expected `servers:` (mcp: {servers: {NAME: {command: …} or "
                       "{url: …}}})")
    servers = section.get("servers") or {}
    if not isinstance(servers, dict):
        raise fail(("servers",), "mcp.servers: a mapping of server names to definitions")
    found = {}
    for name, spec in servers.items():
        loc: LinePath = ("servers", name)
        if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
            raise fail(loc, f"mcp.servers: bad server name {name!r} (letters, digits, '-', "
                            "and single '_' between them)")
        found[name] = _definition(name, spec, origin, shown, lines, env, fail)
    return found


def _definition(name: str, spec: Any, origin: Origin, shown: str, lines: dict[LinePath, int],
                env: Mapping[str, str], fail: Any) -> ServerDefinition:
    here = f"mcp.servers.{name}"
    loc: LinePath = ("servers", name)
    if not isinstance(spec, dict):
        raise fail(loc, f"{here}: a mapping with command: (stdio) or url: (streamable HTTP)")
    if unknown := sorted(set(map(str, spec)) - KEYS):
        raise fail((*loc, unknown[0]), f"{here}: unknown key {unknown[0]!r} (known: "
                                       f"{', '.join(sorted(KEYS))})")
    if ("command" in spec) == ("url" in spec):
        raise fail(loc, f"{here}: give exactly one of command: (stdio) or url: (streamable HTTP)")
    stdio = "command" in spec
    wrong = sorted(set(spec) & (HTTP_KEYS if stdio else STDIO_KEYS))
    if wrong:
        kind = "a stdio server (command:)" if stdio else "an HTTP server (url:)"
        raise fail((*loc, wrong[0]), f"{here}.{wrong[0]}: not accepted for {kind}")

    def text(key: str, value: Any, at: LinePath) -> str:
        if not isinstance(value, str) or not value:
            raise fail(at, f"{here}.{key}: a non-empty string")
        return _interpolate(value, env, lambda variable: fail(at, (
            f"{here}.{key}: environment variable {variable} is not set")))

    def strings(key: str) -> tuple[str, ...]:
        value = spec.get(key, [])
        if not isinstance(value, list):
            raise fail((*loc, key), f"{here}.{key}: a list of strings")
        return tuple(text(key, item, (*loc, key, index)) for index, item in enumerate(value))

    def table(key: str) -> Mapping[str, str]:
        value = spec.get(key, {})
        if not isinstance(value, dict):
            raise fail((*loc, key), f"{here}.{key}: a mapping of names to strings")
        out = {}
        for item, content in value.items():
            if not isinstance(content, str):
                raise fail((*loc, key, item), f"{here}.{key}.{item}: a string (quote numbers)")
            out[str(item)] = _interpolate(content, env, lambda variable, item=item: fail(
                (*loc, key, item), f"{here}.{key}.{item}: environment variable {variable} "
                                   "is not set"))
        return _frozen(out)

    disabled = spec.get("disabled", False)
    if not isinstance(disabled, bool):
        raise fail((*loc, "disabled"), f"{here}.disabled: true or false")
    written = json.dumps({"name": name, **spec}, sort_keys=True, ensure_ascii=False)
    source = f"{shown}:{line_of(lines, ('mcp', *loc))}"
    if stdio:
        cwd = spec.get("cwd")
        return ServerDefinition(
            name, origin, source, command=text("command", spec["command"], (*loc, "command")),
            args=strings("args"), env=table("env"),
            cwd=None if cwd is None else text("cwd", cwd, (*loc, "cwd")),
            disabled=disabled, written=written)
    url = text("url", spec["url"], (*loc, "url"))
    if not re.match(r"https?://[^/\s]", url):
        raise fail((*loc, "url"), f"{here}.url: an http:// or https:// URL, not {url!r}")
    return ServerDefinition(name, origin, source, url=url, headers=table("headers"),
                            disabled=disabled, written=written)


def _interpolate(value: str, env: Mapping[str, str], missing: Any) -> str:
    def one(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable not in env:
            raise missing(variable)
        return env[variable]

    return _VARIABLE.sub(one, value)


Trust = Literal["user config", "approved", "not approved", "changed since approved"]
#: The trust a server starts with (any other: it starts only once approved).
STARTING_TRUST: tuple[Trust, ...] = ("user config", "approved")
