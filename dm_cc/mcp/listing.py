"""What each MCP server listed the last time it started, kept so that a session can
offer its tools without starting it first (docs/mcp.md, "Starting").

    listed = Listings(directory, root, env)
    tools = listed.get(definition)       # None: never listed, changed, stale or unreadable
    listed.put(definition, tools)        # after a start: what it listed now

A model is told every tool up front, so a server's tools must be known before the
first request. Starting a server only to learn them costs every ``dm_cc run`` its
start-up time, used or not. So the tools a server listed are kept, and a later
session offers them at once; the server starts when one is called (``dm_cc run``)
or in the background (the REPL), and what it lists then replaces what was kept.

An entry is for one definition as it runs: its name, command line, environment,
working directory, URL and headers as expanded (hashed, never stored), the files a
project's server names (their digests), and the size and change time of the
program and of each file its command line names (an upgraded server lists again).
It is used for MAX_AGE; older, the server is started to list again. Anything
unreadable is no entry. The entries live in dm_cc's cache directory, which the
sandbox hides from commands and servers: a tool's read-only hint counts for the
rights of read-only agents, so what is kept must come from the server itself.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import mcp_types as types

from dm_cc.config import ServerDefinition, replace_file

MAX_AGE = 24 * 3600.0    # seconds a listing is used for before the server lists again


class Listings:
    """The kept listings of the servers of one project (see the module docstring)."""

    def __init__(self, directory: Path, root: Path, env: Mapping[str, str]) -> None:
        self.directory = directory
        self.root = root
        self.env = env

    def get(self, definition: ServerDefinition) -> list[types.Tool] | None:
        """What ``definition`` listed when it last started, if that is known and fresh."""
        try:
            kept = json.loads(self._path(definition).read_text(encoding="utf-8"))
            if not 0 <= time.time() - float(kept["listed"]) <= MAX_AGE:
                return None
            return [types.Tool.model_validate(tool) for tool in kept["tools"]]
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, definition: ServerDefinition, tools: Sequence[types.Tool]) -> None:
        """Keep what ``definition`` listed now (nothing is said when it cannot be kept:
        the next session starts the server to list again)."""
        path = self._path(definition)
        record = {"server": definition.name, "listed": time.time(),
                  "tools": [tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                            for tool in tools]}
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            replace_file(path, json.dumps(record, ensure_ascii=False).encode("utf-8"),
                         sync=False)   # derived: listed again when lost
        except OSError:
            pass

    def _path(self, definition: ServerDefinition) -> Path:
        return self.directory / f"{_key(definition, self.root, self.env)}.json"


def _key(definition: ServerDefinition, root: Path, env: Mapping[str, str]) -> str:
    """What the kept listing is for (see the module docstring), as a hash."""
    facts: dict[str, Any] = {
        "name": definition.name, "argv": definition.argv, "env": dict(definition.env),
        "cwd": definition.cwd, "url": definition.url, "headers": dict(definition.headers),
        "files": [list(named) for named in definition.files], "root": str(root)}
    if definition.command is not None:
        facts["stat"] = _stats(definition, root, env)
    text = json.dumps(facts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _stats(definition: ServerDefinition, root: Path, env: Mapping[str, str]) -> list[Any]:
    """Size and change time of the program and of each word of the command line that
    names a file (relative to where the server runs): a stat each."""
    where = definition.directory(root)
    program = definition.argv[0]
    found = shutil.which(program, path=env.get("PATH")) if "/" not in program else None
    words = [found or program, *definition.argv[1:]]
    stats = []
    for word in words:
        try:
            done = (where / word).stat()
        except (OSError, ValueError):
            continue
        stats.append([word, done.st_size, done.st_mtime_ns])
    return stats
