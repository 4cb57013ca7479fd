"""Every MCP server of a session, in one thread with its own event loop.

    servers = McpServers(definitions, root, env, listings=Listings(...))
    servers.start_background()      # begin starting them; returns at once, never raises
    await servers.listed()          # from any loop: the tools of those starting are known
    servers.start()                 # start every one now and wait (dm_cc mcp list)
    servers.statuses()              # name, state, error, pid, tools
    tools = servers.tools()         # each server tool on offer, as a dm_cc Tool
    await servers.call("time", "get_current_time", {"timezone": "UTC"})  # from any loop
    servers.close()                 # every server stopped, its process group killed

Why a thread: the session's loop is opened synchronously (``World.open_loop``;
the REPL does it in a loading thread) and runs under whichever asyncio loop its
front end has, while an SDK session must live and die in one task of one loop.
So the servers get a loop of their own, kept for the life of the manager, and
calls cross over (``run_coroutine_threadsafe``); a cancelled call is cancelled
over there too.

Nothing waits for a server to start unless it must. A server's tools are on offer
once known: listed by it in this session, or, before it starts, as it listed them
last time (:mod:`dm_cc.mcp.listing`). Only a server whose tools are not known is
waited for, before a model request (:meth:`listed`); the others start at their
first call, or in the background. :attr:`version` grows whenever what is on offer
changes, so a session knows when to take the tools again.

Robustness: servers start in parallel; one that fails (cannot be started, does
not answer within the timeout, lists clashing tool names) is reported in its
status (and told to ``on_started``) and the others work; its tools are no longer offered
unless it ran in this session. A call that finds its server not started or dead
starts it first (one start at a time); a call that breaks the connection is a tool
error and the next call restarts it. :meth:`close` gives up starts under way and
runs at interpreter exit too, so no server outlives dm_cc.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
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
from dm_cc.mcp.listing import Listings
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
    state: str                      # running | starting | failed | stopped | not started
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
                 start_timeout: float = START_TIMEOUT, call_timeout: float = CALL_TIMEOUT,
                 listings: Listings | None = None,
                 on_started: Callable[[ServerStatus], None] = lambda status: None) -> None:
        self.connections = {d.name: Connection(d, root, env, confine) for d in definitions}
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.version = 0            # grows whenever the tools on offer change
        self._listings = listings
        self._on_started = on_started
        self._known: dict[str, list[types.Tool]] = {}   # tools as last listed
        self._names: dict[str, tuple[dict[str, str], list[str]]] = {}
        self._ran: set[str] = set()                      # servers that ran in this session
        for definition in definitions:
            kept = listings.get(definition) if listings is not None else None
            if kept is not None:
                with contextlib.suppress(NameCollision):   # then it lists again
                    self._know(definition.name, kept)
        self._starts: dict[str, concurrent.futures.Future[None]] = {}
        self._starting: set[asyncio.Task[None]] = set()  # in the MCP thread
        self._locks: dict[str, asyncio.Lock] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dm_cc-mcp",
                                        daemon=True)
        self._thread.start()
        self._closed = False
        self._closing = threading.Lock()
        atexit.register(self.close)

    # ------------------------------------------------------------------ from any thread

    def start_background(self, *, unknown_only: bool = False) -> None:
        """Begin starting every server (``unknown_only``: those whose tools are not
        known from an earlier listing; the others start at their first call). Returns
        at once; a server begun already is not begun again."""
        for name, connection in self.connections.items():
            if name in self._starts or (unknown_only and name in self._known):
                continue
            self._starts[name] = asyncio.run_coroutine_threadsafe(
                self._start_once(connection), self._loop)

    def start(self) -> list[ServerStatus]:
        """Start every server now and wait for them; the status of each (failures
        included)."""
        self.start_background()
        concurrent.futures.wait(list(self._starts.values()),
                                timeout=self.start_timeout + CLOSE_TIMEOUT)
        return self.statuses()

    def unlisted(self) -> list[str]:
        """The servers starting now whose tools are not known yet: what
        :meth:`listed` waits for."""
        return [name for name, future in self._starts.items()
                if not future.done() and name not in self._known]

    async def listed(self) -> None:
        """From any loop: wait until every server starting now whose tools are not
        known has listed them or failed (each start is bounded by its timeout)."""
        waiting = [asyncio.wrap_future(self._starts[name]) for name in self.unlisted()]
        if waiting:
            await asyncio.wait(waiting)

    async def started(self) -> None:
        """From any loop: wait until no server is starting (``/mcp``)."""
        waiting = [asyncio.wrap_future(f) for f in self._starts.values() if not f.done()]
        if waiting:
            await asyncio.wait(waiting)

    def statuses(self) -> list[ServerStatus]:
        return [self._status(c) for c in self.connections.values()]

    def tools(self) -> list[McpTool]:
        """Every tool on offer (see the module docstring), as dm_cc tools."""
        from dm_cc.mcp.tools import McpTool

        return [McpTool(self.call, status.definition.name, name, tool)
                for status in self.statuses() if status.tools
                for name, tool in _by_name(status)]

    async def call(self, server: str, tool: str, arguments: dict[str, Any]
                   ) -> types.CallToolResult:
        """Call ``tool`` of ``server`` from any event loop (starting the server first
        if it is not running). ServerFailed, CallTimedOut, CallRefused."""
        future = asyncio.run_coroutine_threadsafe(self._call(server, tool, arguments), self._loop)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop every server and the thread, giving up starts under way (idempotent)."""
        with self._closing:   # at exit, and from the thread that loaded it
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        try:
            self._run(self._stop_all(), CLOSE_TIMEOUT)
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

    async def _stop_all(self) -> None:
        """Give up the starts under way, then stop every server."""
        for task in self._starting:
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        await self._each(Connection.stop)

    async def _start_once(self, connection: Connection) -> None:
        """Start ``connection`` unless it runs (a call may have started it), then tell
        ``on_started`` how it went (a failure is in its status)."""
        task = asyncio.current_task()
        assert task is not None
        self._starting.add(task)
        try:
            async with self._lock(connection.name):
                if connection.status == "running":
                    return
                with contextlib.suppress(ServerFailed):   # in its status
                    await self._start(connection)
            if not self._closed:
                self._on_started(self._status(connection))
        finally:
            self._starting.discard(task)

    def _lock(self, server: str) -> asyncio.Lock:
        return self._locks.setdefault(server, asyncio.Lock())

    async def _start(self, connection: Connection) -> None:
        try:
            await connection.start(self.start_timeout)
            try:
                self._know(connection.name, connection.tools)
            except NameCollision as exc:
                await connection.stop()
                connection.status, connection.error = "failed", str(exc)
                raise ServerFailed(str(exc)) from None
        except ServerFailed:
            self.version += 1     # its tools are no longer offered, unless it ran
            raise
        self._ran.add(connection.name)
        self.version += 1
        if self._listings is not None:
            self._listings.put(connection.definition, connection.tools)

    def _know(self, server: str, tools: Sequence[types.Tool]) -> None:
        """``tools`` are what ``server`` lists (NameCollision when two clash)."""
        self._names[server] = tool_names(server, (t.name for t in tools))
        self._known[server] = list(tools)

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]
                    ) -> types.CallToolResult:
        connection = self.connections[server]
        async with self._lock(server):  # one start at a time
            if connection.status != "running":
                await self._start(connection)
        try:
            return await connection.call(tool, arguments, self.call_timeout)
        except (CallTimedOut, CallRefused):
            raise
        except ServerFailed as exc:
            raise ServerFailed(f"{exc}. It will be started again on the next call.") from None

    def _status(self, connection: Connection) -> ServerStatus:
        """What is said about ``connection``: a server never started yet is ``not
        started``; its tools are those on offer (see the module docstring)."""
        name = connection.name
        state = "not started" if connection.starts == 0 else connection.status
        offered = state in ("running", "not started", "starting") or name in self._ran
        names, left_out = self._names.get(name, ({}, []))
        return ServerStatus(connection.definition, state, connection.error,
                            connection.pid if state == "running" else None,
                            tuple(self._known.get(name, ())) if offered else (),
                            names if offered else {}, tuple(left_out), connection.confined)


def _by_name(status: ServerStatus) -> list[tuple[str, types.Tool]]:
    tools = {tool.name: tool for tool in status.tools}
    return [(name, tools[original]) for name, original in status.names.items()
            if original in tools]
