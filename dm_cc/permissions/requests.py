"""From a tool call to permission requests: tools describe, the engine decides.

One pure function per tool turns its arguments into :class:`Request` objects.
Paths are canonicalised (:mod:`paths`); shell commands are parsed, never
string-matched (:mod:`shell`); MCP tools become ``mcp__<server>__<tool>`` with
their arguments as JSON with sorted keys.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from dm_cc.permissions.paths import PathContextDirs, canonical_path, special_root
from dm_cc.permissions.rules import MCP_PREFIX, Request
from dm_cc.permissions.shell import always_pattern, analyse

Args = Mapping[str, Any]


# Writing here changes what runs or what is allowed (git hooks and config run
# commands; .dm_cc holds the policy itself): an edit is allowed only by a rule
# that names the directory (`edit .git/** allow`), never by `**` or `*`.
PROTECTED_FOR_EDIT = (".git", ".dm_cc")


def _protected(permission: str, names: tuple[str, ...]) -> set[str]:
    if permission != "edit":
        return set()
    return {part for name in names for part in name.split("/") if part in PROTECTED_FOR_EDIT}


def path_requests(permission: str, raw: str, where: PathContextDirs, *,
                  is_directory: bool = False, allowable: bool = True,
                  note: str | None = None) -> list[Request]:
    """A request for the canonical path, plus ``external_directory`` when outside."""
    path = canonical_path(raw, where)
    sensitive = tuple(sorted({s for p in path.absolute if (s := special_root(p))}
                             | _protected(permission, path.names)))
    requests = [Request(permission, path.names[0], aliases=path.names[1:], allowable=allowable,
                        sensitive=sensitive, note=note)]
    directories = [p if is_directory else posixpath.dirname(p) for p in path.outside]
    if directories:
        requests.append(Request("external_directory", directories[0],
                                aliases=tuple(dict.fromkeys(directories[1:])),
                                allowable=allowable, sensitive=sensitive, note=note))
    return requests


def bash_requests(command: str, where: PathContextDirs) -> list[Request]:
    """Every simple command, redirect target and file argument of a shell command."""
    analysis = analyse(command)
    requests = [
        Request("bash", cmd.text, words=cmd.words, allowable=not cmd.dynamic,
                sensitive=cmd.sensitive, note=cmd.note, speculative=cmd.speculative,
                always=None if cmd.dynamic or cmd.speculative
                else (always_pattern(cmd.words) or None))
        for cmd in (*analysis.commands, *analysis.speculative)
    ]
    for ref in analysis.files:
        note = f"{'written' if ref.access == 'edit' else 'read'} by the shell command"
        if ref.dynamic:
            note += "; the path is not static, so it cannot be allowed by a rule"
        requests.extend(path_requests(ref.access, ref.path, where, allowable=not ref.dynamic,
                                      note=note))
    if not requests:
        requests.append(Request("bash", command.strip(), words=tuple(command.split()),
                                always=None))
    return requests


def _arg(args: Args, *names: str, default: str | None = None) -> str:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    if default is not None:
        return default
    raise ValueError(f"missing argument: {names[0]}")


def _paths(permission: str, *keys: str, directory: bool = False, default: str | None = None,
           reads: bool = False):
    """Requests for a path tool. ``reads``: it shows file contents (grep), so its
    target is also a ``read`` (a denied file named directly stays denied)."""
    def derive(args: Args, where: PathContextDirs) -> list[Request]:
        raws = args.get("paths") if isinstance(args.get("paths"), list) else None
        targets = raws or [_arg(args, *keys, default=default)]
        requests = [r for raw in targets for r in path_requests(permission, str(raw), where,
                                                                is_directory=directory)]
        if reads:
            requests += [r for raw in targets for r in path_requests("read", str(raw), where)
                         if r.permission == "read"]
        return requests
    return derive


def _named(permission: str, *keys: str, default: str | None = None):
    def derive(args: Args, where: PathContextDirs) -> list[Request]:
        return [Request(permission, _arg(args, *keys, default=default))]
    return derive


_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 dot-segment removal, so `/public/../secret` is judged as `/secret`."""
    segments = path.split("/")[1:]
    out: list[str] = []
    for segment in segments:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments and segments[-1] in (".", ".."):
        out.append("")  # it names a directory
    return "/" + "/".join(out)


def canonical_url(raw: str) -> str | None:
    """The URL as it will be fetched: ``scheme://host[:port]/path[?query]`` with scheme
    and host lower-cased, percent-escapes decoded in the host and in dot segments,
    dot segments removed, the default port and any ``user:password@`` dropped.
    None when it is not an http(s) URL with a plain host name or address."""
    from urllib.parse import unquote, urlsplit  # lazily: only webfetch needs it

    text = raw.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = unquote(parts.hostname or "").lower().rstrip(".")
    if scheme not in ("http", "https") or not host or any(c.isspace() for c in text):
        return None
    if ":" in host:  # an IPv6 literal
        if not all(c in "0123456789abcdef:." for c in host):
            return None
        host = f"[{host}]"
    elif not set(host) <= _HOST_CHARS:
        return None
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    path = parts.path or "/"
    path = path.replace("%2e", ".").replace("%2E", ".")
    path = _remove_dot_segments(path)
    return f"{scheme}://{host}{path}" + (f"?{parts.query}" if parts.query else "")


def webfetch_requests(args: Args, where: PathContextDirs) -> list[Request]:
    raw = _arg(args, "url")
    url = canonical_url(raw)
    if url is None:
        return [Request("webfetch", raw, allowable=False,
                        note="not an http(s) URL dm_cc can parse, so no rule may allow it")]
    return [Request("webfetch", url)]


def mcp_requests(tool: str, args: Args) -> list[Request]:
    """``mcp__<server>__<tool>`` with the arguments as sorted-key JSON."""
    return [Request(tool, json.dumps(dict(args), sort_keys=True, ensure_ascii=False))]


Deriver = Callable[[Args, PathContextDirs], list[Request]]


def permission_of(tool: str) -> str:
    """The permission a tool's main request is judged under (write and edit: edit)."""
    return "edit" if tool in ("write", "edit") else tool


DERIVERS: dict[str, Deriver] = {
    "read": _paths("read", "path", "file_path"),
    "write": _paths(permission_of("write"), "path", "file_path"),
    "edit": _paths(permission_of("edit"), "path", "file_path"),
    "list": _paths("list", "path", directory=True, default="."),
    "glob": _paths("glob", "path", directory=True, default="."),
    "grep": _paths("grep", "path", directory=True, default=".", reads=True),
    "bash": lambda args, where: bash_requests(_arg(args, "command", default=""), where),
    "task": _named("task", "subagent_type", "agent"),
    "webfetch": webfetch_requests,
    "todo": _named("todo", "action", default="*"),
    "plan_enter": _named("plan_enter", "reason", default="*"),
    "plan_exit": _named("plan_exit", "reason", default="*"),
}

# The argument `dm_cc policy check TOOL INPUT` puts INPUT into, per tool.
MAIN_ARGUMENT = {
    "read": "path", "write": "path", "edit": "path", "list": "path", "glob": "path",
    "grep": "path", "bash": "command", "task": "subagent_type", "webfetch": "url",
    "todo": "action", "plan_enter": "reason", "plan_exit": "reason",
}


def requests_for(tool: str, args: Args, where: PathContextDirs) -> list[Request]:
    """The requests a tool call makes. Unknown tools raise ``KeyError``."""
    if tool.startswith(MCP_PREFIX):
        return mcp_requests(tool, args)
    return DERIVERS[tool](args, where)


def args_from_input(tool: str, text: str) -> dict[str, Any]:
    """The arguments for ``TOOL INPUT`` on the command line."""
    if tool.startswith(MCP_PREFIX):
        value = json.loads(text) if text.strip() else {}
        if not isinstance(value, dict):
            raise ValueError("an MCP tool's INPUT is a JSON object of its arguments")
        return value
    return {MAIN_ARGUMENT[tool]: text}
