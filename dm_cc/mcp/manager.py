"""Every MCP server of a session, in one thread with its own event loop.

    servers = McpServers(definitions, root, env)
    servers.start()                 # all at once, each within START_TIMEOUT; never raises
    servers.statuses()              # name, state, error, pid, tools
    tools = servers.tools()         # each server tool as a dm_cc Tool
    await servers.call("time", "get_current_time", {"timezone": "UTC"})  # from any loop
    servers.close()                 # every server stopped, its process group killed

Why a thread: the session's loop is opened synchronously (``World.open_loop``;
the REPL does it in a loading thread) and runs under whichever asyncio loop its
front end has, while an SDK session must live and die in one task of one loop.
So the servers get a loop of their own, kept for the life of the manager, and
calls cross over (``run_coroutine_threadsafe``); a cancelled call is cancelled
over there too.

Robustness: servers start in parallel; one that fails (cannot be started, does
not answer within the timeout, lists clashing tool names) is reported in its
status and the others work. A call that finds its server dead starts it again
first (the server's name and tools stay as they were); a call that breaks the
connection is a tool error and the next call restarts it. :meth:`close` runs at
interpreter exit too, so no server outlives dm_cc.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from dm_cc.config import ServerDefinition
from dm_cc.mcp.connection import (
    CallRefused,
    CallTimedOut,
    Confine,
    Connection,
    ServerFailed,
    unconfined,
)
from dm_cc.mcp.names import NameCollision, tool_names

if TYPE_CHECKING:
    import mcp_types as types

    from dm_cc.mcp.tools import McpTool

START_TIMEOUT = 10.0    # seconds a server gets to start and list its tools
CALL_TIMEOUT = 120.0    # seconds a tool call may take
CLOSE_TIMEOUT = 15.0    # seconds closing every server may take

T = TypeVar("T")


class ServerStatus(NamedTuple):
    """What ``dm_cc mcp list`` and the notices say about one server."""

    definition: ServerDefinition
    state: str                      # running | failed | stopped | not started
    error: str = ""
    pid: int | None = None
    tools: tuple[types.Tool, ...] = ()
    names: Mapping[str, str] = {}   # dm_cc name → the server's tool name
    left_out: tuple[str, ...] = ()  # its tools whose dm_cc name would be too long
    confined: bool = False          # a stdio server that runs inside the sandbox


class McpServers:
    """The servers of one session (see the module docstring)."""

    def __init__(self, definitions: Sequence[ServerDefinition], root: Path,
                 env: Mapping[str, str] = os.environ, *, confine: Confine = unconfined,
                 start_timeout: float = START_TIMEOUT, call_timeout: float = CALL_TIMEOUT) -> None:
        self.connections = {d.name: Connection(d, root, env, confine) for d in definitions}
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self._names: dict[str, tuple[dict[str, str], list[str]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dm_cc-mcp",
                                        daemon=True)
        self._thread.start()
        self._closed = False
        atexit.register(self.close)

    # ------------------------------------------------------------------ from any thread

    def start(self) -> list[ServerStatus]:
        """Start every server at once; the status of each (failures included)."""
        self._run(self._each(self._start), self.start_timeout + CLOSE_TIMEOUT)
        return self.statuses()

    def statuses(self) -> list[ServerStatus]:
        return [self._status(c) for c in self.connections.values()]

    def tools(self) -> list[McpTool]:
        """Every tool of every running server, as dm_cc tools."""
        from dm_cc.mcp.tools import McpTool

        return [McpTool(self.call, status.definition.name, name, tool)
                for status in self.statuses() if status.state == "running"
                for name, tool in _by_name(status)]

    async def call(self, server: str, tool: str, arguments: dict[str, Any]
                   ) -> types.CallToolResult:
        """Call ``tool`` of ``server`` from any event loop (restarting the server
        first if it died). ServerFailed, CallTimedOut, CallRefused."""
        future = asyncio.run_coroutine_threadsafe(self._call(server, tool, arguments), self._loop)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop every server and the thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            self._run(self._each(Connection.stop), CLOSE_TIMEOUT)
        except TimeoutError:  # each stop is bounded; this only guards the whole
            pass
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_TIMEOUT)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> McpServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ in the MCP thread

    def _run(self, work: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``work`` in the MCP thread; wait for it at most ``timeout`` seconds."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout)

    async def _each(self, action: Callable[[Connection], Awaitable[None]]) -> None:
        """``action`` on every server at once (a failure is in its status)."""
        await asyncio.gather(*(action(c) for c in self.connections.values()),
                             return_exceptions=True)

    async def _start(self, connection: Connection) -> None:
        await connection.start(self.start_timeout)
        try:
            self._names[connection.name] = tool_names(connection.name,
                                                      (t.name for t in connection.tools))
        except NameCollision as exc:
            await connection.stop()
            connection.status, connection.error = "failed", str(exc)
            raise ServerFailed(str(exc)) from None

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]
                    ) -> types.CallToolResult:
        connection = self.connections[server]
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:  # one restart at a time
            if connection.status != "running":
                await self._start(connection)
        try:
            return await connection.call(tool, arguments, self.call_timeout)
        except (CallTimedOut, CallRefused):
            raise
        except ServerFailed as exc:
            raise ServerFailed(f"{exc}. It will be started again on the next call.") from None

    def _status(self, connection: Connection) -> ServerStatus:
        state = "not started" if connection.starts == 0 else connection.status
        names, left_out = self._names.get(connection.name, ({}, []))
        return ServerStatus(connection.definition, state, connection.error,
                            connection.pid if state == "running" else None,
                            tuple(connection.tools) if state == "running" else (), names,
                            tuple(left_out), connection.confined)


def _by_name(status: ServerStatus) -> list[tuple[str, types.Tool]]:
    tools = {tool.name: tool for tool in status.tools}
    return [(name, tools[original]) for name, original in status.names.items()
            if original in tools]
