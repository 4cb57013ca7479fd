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
token does not ask again, while any change to the text -- a reference to another
variable included -- does), followed by the content of every file inside the
project its command line names (``config/server_files.py``: a script a confined
command rewrites after the approval makes the server unapproved again).

What a person approves is shown as written, never expanded: :meth:`where` (the
command or URL with its ``${VAR}`` references), :meth:`facts` (every variable it
reads from the environment, by name, and the field it goes to; the files checked,
and those outside the project that are not) and, once it changed,
:meth:`changes` (the definition, or which file).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

from dm_cc.config.server_files import NamedFile, named_files
from dm_cc.config.words import did_you_mean
from dm_cc.config.yaml_lines import line_of
from dm_cc.errors import SettingsError

if TYPE_CHECKING:
    from dm_cc.config.yaml_stream import LinePath

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
    files: tuple[NamedFile, ...] = ()        # what its command line names (a project's)
    broken: str = ""                         # why the entry cannot be used: never started

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def argv(self) -> list[str]:
        """The program and its arguments (stdio servers; [] for HTTP)."""
        return [self.command, *self.args] if self.command is not None else []

    def directory(self, root: Path) -> Path:
        """Where it runs: its ``cwd:`` under the project root, else the root."""
        return root / self.cwd if self.cwd else root

    @property
    def fingerprint(self) -> str:
        """What a trust approval names: ``sha256:<hex>`` of the definition as written,
        then ``<path>=<digest>`` for each file it names (none: the hash alone)."""
        definition = "sha256:" + hashlib.sha256(self.written.encode("utf-8")).hexdigest()
        return " ".join([definition, *(named.token() for named in self.files)])

    def where(self) -> str:
        """What it runs or where it connects, for people, as written (``${VAR}``
        references are shown, never their values)."""
        spec = self._as_written()
        if self.url is not None:
            return str(spec.get("url", self.url))
        if "command" in spec:
            return " ".join(map(str, [spec["command"], *spec.get("args", [])]))
        return " ".join(self.argv)

    def references(self) -> dict[str, list[str]]:
        """Each environment variable the definition reads (``${VAR}``), by name, with
        the fields it goes to (``env.TOKEN``, ``args[1]``, ``headers.Authorization``)."""
        found: dict[str, list[str]] = {}
        for where, value in _written_fields(self._as_written()):
            for match in _VARIABLE.finditer(value):
                found.setdefault(match.group(1), []).append(where)
        return found

    def facts(self) -> list[str]:
        """What a person approves beyond :meth:`where`, one line each: the variables
        it reads from the environment (by name), the names it is given, the files
        whose content is checked, those outside the project that are not."""
        lines = []
        if reads := self.references():
            lines.append("reads from your environment: " + ", ".join(
                f"${{{name}}} ({', '.join(fields)})" for name, fields in reads.items()))
        given = [*(f"env {name}" for name in self.env), *(f"header {h}" for h in self.headers)]
        if given:
            lines.append(f"with {', '.join(given)}")
        if checked := [f.path for f in self.files if f.checked]:
            lines.append(f"runs files of this project (their content is checked): "
                         f"{', '.join(checked)}")
        if outside := [f"{f.path} -> {f.target}" if f.target else f.path
                       for f in self.files if f.outside]:
            lines.append(f"names files outside the project (not checked): {', '.join(outside)}")
        return lines

    def changes(self, trusted: Mapping[str, str]) -> list[str]:
        """What differs from the definition and files ``trusted`` approved ([] when
        nothing does or it was never approved)."""
        approved = trusted.get(self.name)
        if approved is None or approved == self.fingerprint:
            return []
        old_definition, old = _fingerprint_parts(approved)
        new_definition, new = _fingerprint_parts(self.fingerprint)
        found = ["its definition"] if old_definition != new_definition else []
        for path in [*new, *(path for path in old if path not in new)]:
            before, now = old.get(path), new.get(path)
            if before == now:
                continue
            if now is None:
                found.append(f"{path} (no longer there)")
            elif now.startswith("outside:"):
                found.append(f"{path} (now leads outside the project: {now[8:]})")
            else:
                found.append(f"{path} ({'new' if before is None else 'its content'})")
        return found or ["its fingerprint"]

    def _as_written(self) -> dict[str, Any]:
        written = json.loads(self.written)
        return written if isinstance(written, dict) else {}

    def trust(self, trusted: Mapping[str, str]) -> Trust:
        """Whether it may start: a user's server always; a project's only when
        ``trusted`` (name → fingerprint, from the approval store) holds its definition."""
        if self.origin == "user":
            return "user config"
        approved = trusted.get(self.name)
        if approved is None:
            return "not approved"
        return "approved" if approved == self.fingerprint else "changed since approved"

    def refusal(self, trust: Trust, changes: list[str] | tuple[str, ...] = ()) -> str:
        """Why this project's server was not started (what changed, when that is
        why), and how to let it start."""
        state = "has changed since it was approved" if trust == "changed since approved" \
            else "is not approved"
        if changes:
            state += f" (changed: {', '.join(changes)})"
        return (f"MCP server {self.name} ({self.source}) is defined by this project and "
                f"{state}, so it was not started: it would run `{self.where()}`. Review it, "
                f"then approve it with `dm_cc mcp trust {self.name}`.")


def _written_fields(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) of every string a definition holds, as written."""
    for key in ("command", "cwd", "url"):
        if isinstance(spec.get(key), str):
            yield key, spec[key]
    args = spec.get("args")
    for index, arg in enumerate(args if isinstance(args, list) else []):
        if isinstance(arg, str):
            yield f"args[{index}]", arg
    for key in ("env", "headers"):
        table = spec.get(key)
        for name, value in (table.items() if isinstance(table, dict) else ()):
            if isinstance(value, str):
                yield f"{key}.{name}", value


def _fingerprint_parts(fingerprint: str) -> tuple[str, dict[str, str]]:
    """A fingerprint's definition hash and its files (path → digest)."""
    definition, *files = fingerprint.split(" ")
    pairs = (token.partition("=") for token in files)
    return definition, {unquote(path): unquote(digest) for path, _, digest in pairs}


def parse_servers(section: Any, origin: Origin, shown: str,
                  lines: dict[LinePath, int], env: Mapping[str, str],
                  root: Path | None = None) -> dict[str, ServerDefinition]:
    """The ``mcp:`` section of one settings file → its servers by name; with the
    project ``root`` (a project's file), each stdio server's named files too.

    A bad entry (an unknown key, a missing variable, a bad name) spoils that server
    only: it is kept as a :attr:`ServerDefinition.broken` definition, whose
    ``broken`` is the SettingsError's text (``file:line: …``), and never started;
    the other servers, and everything else the file sets, still count. A section
    that is not ``servers:`` of a mapping is a SettingsError."""
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
        try:
            if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
                raise fail(loc, f"mcp.servers: bad server name {name!r} (letters, digits, "
                                "'-', and single '_' between them)")
            server = _definition(name, spec, origin, shown, lines, env, fail)
        except SettingsError as exc:
            source = f"{shown}:{line_of(lines, ('mcp', *loc))}"
            found[str(name)] = ServerDefinition(str(name), origin, source, broken=str(exc))
            continue
        if root is not None and server.command is not None:
            server = replace(server, files=named_files(server.argv, server.directory(root),
                                                       root, env.get("PATH")))
        found[name] = server
    return found


def _definition(name: str, spec: Any, origin: Origin, shown: str, lines: dict[LinePath, int],
                env: Mapping[str, str], fail: Any) -> ServerDefinition:
    here = f"mcp.servers.{name}"
    loc: LinePath = ("servers", name)
    if not isinstance(spec, dict):
        raise fail(loc, f"{here}: a mapping with command: (stdio) or url: (streamable HTTP)")
    if unknown := sorted(set(map(str, spec)) - KEYS):
        raise fail((*loc, unknown[0]), f"{here}: unknown key {unknown[0]!r}"
                                       f"{did_you_mean(unknown[0], KEYS)} (known: "
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
