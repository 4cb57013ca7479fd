"""From what a tool call names to permission requests, by the KIND of thing named.

A tool never derives its own requests: the tool catalog (``dm_cc/tools/catalog.py``)
says which permission a tool asks, which argument is its main one and what kind of
value that is, and :func:`derive_requests` turns the value into :class:`Request` objects:

    file       a path (or a list of paths): one request for each canonical path,
               plus ``external_directory`` for its directory when outside the project
    directory  a directory (list, glob): the same, outside → the directory itself
    search     a directory whose files' contents are shown (grep): as directory,
               plus a ``read`` of the target, so a denied file named directly stays denied
    shell      a command line: parsed, never string-matched (:mod:`shell`)
    url        an http(s) URL, normalised (:mod:`urls`): every reading and spelling
    name       a name (a subagent); a tool with no main argument asks for ``*``
    json       an MCP tool's arguments, as JSON with sorted keys (matched structurally)
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import urlsplit

from dm_cc.permissions.paths import PathContextDirs, canonical_path, special_roots
from dm_cc.permissions.patterns import canonical_arguments
from dm_cc.permissions.rules import (
    DELETE,
    EXTERNAL_DIRECTORY,
    NETWORK,
    REDIRECT,
    SANDBOX_ESCAPE,
    Language,
    Request,
)
from dm_cc.permissions.shell import ShellAnalysis, always_pattern, analyse, exact_pattern
from dm_cc.permissions.urls import canonical_url, url_names

__all__ = ["KIND_LANGUAGE", "Kind", "canonical_url", "derive_requests", "escape_requests",
           "host_requests", "path_requests", "shell_requests", "url_requests"]

Kind = Literal["file", "directory", "search", "shell", "url", "name", "json"]

#: The pattern language requests of each kind are matched in (every request made
#: from a value of that kind carries it): a tool's permission has its kind's language.
KIND_LANGUAGE: Mapping[Kind, Language] = {
    "file": "path", "directory": "path", "search": "path", "shell": "shell",
    "url": "url", "name": "name", "json": "name",
}

Value = str | Sequence[str] | Mapping[str, Any]


#: The permissions whose requests write the path they name: a protected path's
#: request carries why (``Request.protected``).
WRITES_PATH = frozenset({"edit", DELETE})


def path_requests(permission: str, raw: str, where: PathContextDirs, *,
                  is_directory: bool = False, allowable: bool = True,
                  note: str | None = None) -> list[Request]:
    """A request for the canonical path, plus ``external_directory`` when outside."""
    path = canonical_path(raw, where)
    sensitive = special_roots(path.absolute)
    protected = where.protected.why(path.names) if permission in WRITES_PATH else None
    requests = [Request(permission, path.names[0], aliases=path.names[1:], allowable=allowable,
                        sensitive=sensitive, note=note, language="path",
                        protected=protected.why if protected else None,
                        secret=where.secrets.secret(path.absolute, where.home.as_posix()))]
    directories = [p if is_directory else posixpath.dirname(p) for p in path.outside]
    if directories:
        requests.append(Request(EXTERNAL_DIRECTORY, directories[0],
                                aliases=tuple(dict.fromkeys(directories[1:])),
                                allowable=allowable, sensitive=sensitive, note=note,
                                language="path"))
    return requests


def _command_requests(permission: str, analysis: ShellAnalysis, *, suggest: bool = True,
                      note: str | None = None) -> list[Request]:
    """One request per simple command (and guessed inner command) of ``analysis``.
    ``suggest``: "always" is the suggestion (:func:`always_pattern`: a prefix, or the
    command exactly), else the command exactly as read; ``note`` leads each command's
    own note."""
    return [
        Request(permission, cmd.text, words=cmd.words, allowable=not cmd.dynamic,
                sensitive=cmd.sensitive, note=(cmd.note or None) if note is None
                else ("; ".join(filter(None, (note, cmd.note))) or None),
                speculative=cmd.speculative, other_names=cmd.names,
                always=None if cmd.dynamic or cmd.speculative
                else always_pattern(cmd.words, cmd.sensitive) if suggest
                else exact_pattern(cmd.words), language="shell")
        for cmd in (*analysis.commands, *analysis.speculative)
    ]


def _redirect_requests(analysis: ShellAnalysis) -> list[Request]:
    """A ``redirect`` request for each command run with a redirect, heredoc or
    here-string, named as its command's request is (``redirect git status *`` reads
    like the bash rule). Only that there is one: its files are read and edit
    requests of their own. "Always" suggests the command's bash prefix."""
    return [
        Request(REDIRECT, cmd.text, words=cmd.words, sensitive=cmd.sensitive,
                note="run with a redirection, a heredoc or a here-string",
                other_names=cmd.names,
                always=None if cmd.dynamic else always_pattern(cmd.words, cmd.sensitive),
                language="shell")
        for cmd in analysis.commands if cmd.redirected
    ]


def _whole_line(permission: str, command: str, note: str | None = None) -> Request:
    """A line in which the analysis found nothing to judge, as it is written."""
    return Request(permission, command.strip(), words=tuple(command.split()), note=note,
                   language="shell")


def shell_requests(permission: str, command: str, where: PathContextDirs) -> list[Request]:
    """Every simple command, redirect target and file argument of a shell command."""
    analysis = analyse(command)
    where = where._replace(fs=where.fs.for_one_decision())  # (many paths, few directories)
    if any(c.runs_in is not None for c in analysis.commands):
        # git run in this directory after all (`cd /the/project && git status`): no more
        # than `git status` itself
        here = canonical_path(".", where).absolute
        analysis = analysis._replace(commands=tuple(
            c for c in analysis.commands
            if c.runs_in is None or canonical_path(c.runs_in, where).absolute != here))
    requests = _command_requests(permission, analysis) + _redirect_requests(analysis)
    read = 0  # paths not static read as what they name (each costs a look at the disk)
    for ref in analysis.files:
        note = _FILE_NOTES[ref.access == "edit", bool(ref.dynamic)]
        found = path_requests(ref.access, ref.path, where, allowable=not ref.dynamic, note=note)
        if ref.speculative:  # named by a guessed inner command: only a deny decides it
            found = [replace(r, speculative=True, note="named by a guessed inner command")
                     for r in found]
        requests.extend(found)
        if ref.dynamic and read < MAX_PATH_READINGS:  # `cat ~/.ss?/id_rsa`: what it names
            read += 1
            requests.extend(replace(r, speculative=True, note=f"{ref.path} may name it")
                            for reading in path_readings(ref.path, where)
                            for r in path_requests(ref.access, reading, where,
                                                   allowable=False))
    hosts = list(dict.fromkeys(analysis.hosts))
    for host in hosts[:MAX_HOSTS]:  # curl https://x/: a request to x
        requests += [replace(r, speculative=True, allowable=False,
                             note=f"reached by the shell command ({r.note})" if r.note
                             else "reached by the shell command")
                     for r in _reached(host)]
    if len(hosts) > MAX_HOSTS:  # the rest are not judged: the line asks, saying why
        requests.append(replace(_whole_line(permission, command), allowable=False, note=(
            f"names more than {MAX_HOSTS} hosts: too many to judge one by one")))
    bare = [Request(REDIRECT, command.strip(), words=tuple(command.split()), language="shell",
                    note="a redirection with no command")] if analysis.redirected else []
    return (requests or [_whole_line(permission, command)]) + bare


#: A shell command's file request's note: (written, the path is not static) -> note.
_FILE_NOTES = {(edit, dynamic): f"{'written' if edit else 'read'} by the shell command"
               + ("; the path is not static, so it cannot be allowed by a rule" if dynamic
                  else "")
               for edit in (False, True) for dynamic in (False, True)}

#: Hosts of one line judged as network requests (for the deny rules).
MAX_HOSTS = 64


def _reached(url: str) -> list[Request]:
    """The network requests for a URL or host a network client names (as the sandbox's
    proxy would make them); none when it has no host that can be read."""
    target = url if "://" in url else f"http://{url}"
    try:
        host = urlsplit(target).hostname  # without the user and the port
    except ValueError:
        return []
    found = host_requests(host) if host else []
    return [] if isinstance(found, str) else found


#: At most this many files a glob in a command's path is read as (each a request only a
#: deny decides), and at most this many paths of one line are read so; the rest are not
#: looked at (the paths themselves still ask).
MAX_GLOB_MATCHES = 64
MAX_PATH_READINGS = 16


def path_readings(raw: str, where: PathContextDirs) -> list[str]:
    """Other paths a path that is not static may name, for the deny rules: ``$HOME`` (or
    ``${HOME}``) read as ``~`` and ``$PWD`` as the working directory (bash(1) "Shell
    Variables"); a glob (``?``, ``*``, ``[..]``, bash(1) "Pathname Expansion") as the
    files it matches now, at most MAX_GLOB_MATCHES. A path that still holds an
    expansion after that is not read further."""
    text = re.sub(r"^\$(?:\{HOME\}|HOME\b)", "~", raw)
    text = re.sub(r"^\$(?:\{PWD\}|PWD\b)", ".", text)
    if "$" in text or "`" in text:
        return []
    if not any(c in text for c in "*?["):
        return [text] if text != raw else []
    if text == "~" or text.startswith("~/"):
        text = where.home.as_posix() + text[1:]
    elif text.startswith("~"):
        return []
    pattern = text if text.startswith("/") else (where.cwd / text).as_posix()
    return where.fs.matches(pattern, MAX_GLOB_MATCHES)


def escape_requests(command: str, note: str | None = None) -> list[Request]:
    """Running ``command`` again outside the sandbox: one ``sandbox_escape`` request per
    simple command, read as bash rules read it, so an allow lets the line out only when
    it covers every command, a deny of any one keeps it in, and a command that cannot
    be read is never let out by a rule. (Its redirect targets and file operands were
    judged by the edit and read rules when it first ran.) "Always" remembers each
    command as it was read, not a prefix, which would let any arguments out.
    ``note``: why the sandbox stopped it."""
    return _command_requests(SANDBOX_ESCAPE, analyse(command), suggest=False, note=note) \
        or [_whole_line(SANDBOX_ESCAPE, command, note)]


def _path_requests(permission: str, raws: Sequence[str], where: PathContextDirs, *,
                   directory: bool, reads: bool) -> list[Request]:
    requests = [r for raw in raws
                for r in path_requests(permission, raw, where, is_directory=directory)]
    if reads:  # the target's contents are shown: it is also a read
        requests += [r for raw in raws for r in path_requests("read", raw, where)
                     if r.permission == "read"]
    return requests


def host_requests(host: str) -> list[Request] | str:
    """The network requests for ``host`` as a client named it: the canonical host, and
    its other spellings as requests only a deny decides (the sandbox's proxy judges each
    connection so, and the gate each host a command line names); or why it has no
    canonical form."""
    names = url_names(f"http://{host}/")
    if isinstance(names, str):
        return names
    canonical = urlsplit(names.url).netloc
    requests = [Request(NETWORK, canonical)]
    others = dict.fromkeys(urlsplit(url).netloc for url, _ in names.spellings)
    requests += [Request(NETWORK, other, speculative=True, allowable=False,
                         note=f"another name of {canonical}")
                 for other in others if other != canonical]
    return requests


def url_requests(permission: str, raw: str) -> list[Request]:
    """The canonical URL, with the other paths a server may read from it as further
    names (an allow must cover each); other spellings (of the host, the path with its
    escapes decoded) as requests only a deny decides. A URL clients read differently
    can be asked about, never allowed."""
    names = url_names(raw)
    if isinstance(names, str):
        return [Request(permission, raw, allowable=False,
                        note=f"{names}, so no rule may allow it", language="url")]
    requests = [Request(permission, names.url, aliases=names.readings, language="url")]
    # Not allowable: "always allow" names the URL that was asked for, not these.
    requests += [Request(permission, url, aliases=readings, speculative=True, allowable=False,
                         note=f"another spelling of {names.url}", language="url")
                 for url, readings in names.spellings]
    return requests


def derive_requests(kind: Kind, permission: str, value: Value, where: PathContextDirs) -> list[Request]:
    """The requests a tool call of ``kind`` makes for ``value``, its main argument
    (a list of paths for the path kinds; the arguments object for ``json``)."""
    if kind == "json":
        if not isinstance(value, Mapping):
            raise ValueError("an MCP tool's arguments are a JSON object")
        return [Request(permission, canonical_arguments(value))]
    if isinstance(value, Mapping):
        raise ValueError(f"a {kind} argument is text, not an object")
    if kind in ("file", "directory", "search"):
        raws = [value] if isinstance(value, str) else [str(raw) for raw in value]
        return _path_requests(permission, raws, where, directory=kind != "file",
                              reads=kind == "search")
    if not isinstance(value, str):
        raise ValueError(f"a {kind} argument is one text, not a list")
    if kind == "shell":
        return shell_requests(permission, value, where)
    if kind == "url":
        return url_requests(permission, value)
    return [Request(permission, value, language=KIND_LANGUAGE[kind])]
