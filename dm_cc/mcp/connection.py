"""One MCP server's session: start it, list its tools, call them, stop it.

    connection = Connection(definition, root, env, confine)
    await connection.start(timeout=10)      # ServerFailed says why (and what it printed)
    result = await connection.call("get_current_time", {"timezone": "UTC"}, timeout=60)
    await connection.stop()

A task of the MCP thread's event loop holds the transport and the SDK's
ClientSession open (anyio wants a context left by the task that entered it)
until :meth:`Connection.stop`, or until a stdio server exits by itself. A call
that finds the server gone, or whose connection breaks, raises ServerFailed and
leaves the connection stopped; the manager starts it again on the next call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dm_cc.config import ServerDefinition
from dm_cc.sandbox import Plan

if TYPE_CHECKING:  # the SDK is imported when a server starts: a run that starts none never
    import mcp_types as types
    from mcp.client.session import ClientSession

    from dm_cc.mcp.stdio import StdioProcess

Status = Literal["stopped", "starting", "running", "failed"]
# How a stdio server's argv runs in its working directory: confined by the sandbox
# (bwrap …, with the files bwrap must get), or as it is.
Confine = Callable[[list[str], Path], Plan]
STOP_WAIT = 10.0   # seconds a stopping server's session gets to close before it is cancelled


def unconfined(argv: list[str], cwd: Path) -> Plan:
    """How a stdio server runs when nothing confines it."""
    return Plan(list(argv), confined=False)


class ServerFailed(Exception):
    """A server could not be started, or its connection broke."""


class CallTimedOut(Exception):
    """A tool call took longer than its timeout (the server keeps running)."""


class CallRefused(Exception):
    """The server answered a call with a JSON-RPC error (it keeps running)."""


class Connection:
    """One server (see the module docstring). A stdio server gets the few variables
    the SDK passes on (HOME, LOGNAME, PATH, SHELL, TERM, USER) from ``env`` and its
    own ``env:``; it runs in its ``cwd:`` under ``root`` (default ``root``), as
    ``confine`` plans it: inside the sandbox (DESIGN.md §8), or as it is."""

    def __init__(self, definition: ServerDefinition, root: Path, env: Mapping[str, str],
                 confine: Confine = unconfined) -> None:
        self.definition = definition
        self.root = root
        self.env = env
        self.confine = confine
        self.confined = False   # whether the last start ran inside the sandbox
        self.status: Status = "stopped"
        self.error = ""
        self.tools: list[types.Tool] = []
        self.pid: int | None = None
        self.starts = 0
        self._session: ClientSession | None = None
        self._process: StdioProcess | None = None
        self._holder: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None

    @property
    def name(self) -> str:
        return self.definition.name

    # ------------------------------------------------------------------ lifecycle

    async def start(self, timeout: float) -> None:
        """Connect and list the tools, within ``timeout`` seconds; ServerFailed if not."""
        await self.stop()
        self.status, self.error, self.starts = "starting", "", self.starts + 1
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, self._closing))
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            ready.cancel()  # nobody waits for it any more
            await self._fail(f"did not start within {timeout:g} s")
        except asyncio.CancelledError:
            ready.cancel()  # the start was given up (dm_cc is closing): stop() ends it
            raise
        except Exception as exc:  # noqa: BLE001 - every failure to start is reported
            await self._fail(_describe(exc))
        self.status = "running"

    async def stop(self) -> None:
        """Close the session and stop the server (its whole process group)."""
        holder, self._holder = self._holder, None
        if self._closing is not None:
            self._closing.set()
        if holder is not None and not holder.done():
            if self.status == "starting":  # still connecting: nothing to close gracefully
                holder.cancel()
            await asyncio.wait({holder}, timeout=STOP_WAIT)
            if not holder.done():
                holder.cancel()
                await asyncio.wait({holder})
        self._session = None
        if self.status != "failed":
            self.status = "stopped"

    async def _fail(self, why: str) -> None:
        await self.stop()
        self.status, self.error = "failed", why + self._stderr_note()
        raise ServerFailed(self.error)

    async def _hold(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        """Open the transport and session, list the tools, then keep them open until
        ``closing`` is set or a stdio server exits."""
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        process: StdioProcess | None = None
        self._process = None
        streams: tuple[Any, Any]
        try:
            async with AsyncExitStack() as stack:
                if self.definition.transport == "stdio":
                    process = self._process = self._stdio()
                    streams = await stack.enter_async_context(process.streams())
                    self.pid = process.pid
                else:
                    client = await stack.enter_async_context(
                        create_mcp_http_client(headers=dict(self.definition.headers)))
                    streams = await stack.enter_async_context(streamable_http_client(
                        self.definition.url or "", http_client=client))
                session = await stack.enter_async_context(ClientSession(*streams))
                await session.initialize()
                self.tools = await _all_tools(session)
                self._session = session
                ready.set_result(None)
                waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(closing.wait())]
                if process is not None:
                    waits.append(asyncio.ensure_future(process.exited.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for wait in waits:
                        wait.cancel()
                if not closing.is_set():
                    self.status, self.error = "failed", "the server exited" + self._stderr_note()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ServerFailed("stopped"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None

    def _stdio(self) -> StdioProcess:
        from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

        from dm_cc.mcp.stdio import StdioProcess

        cwd = self.definition.directory(self.root)
        inherited = {key: self.env[key] for key in DEFAULT_INHERITED_ENV_VARS
                     if key in self.env and not self.env[key].startswith("()")}
        env = {**inherited, **self.definition.env}
        plan = self.confine(list(self.definition.argv), cwd)
        if plan.refusal is not None:
            for file in plan.pass_files:
                file.close()
            raise ServerFailed(plan.refusal)
        self.confined = plan.confined
        return StdioProcess(plan.argv, env, cwd, pass_files=plan.pass_files)

    def _stderr_note(self) -> str:
        if self._process is None:
            return ""
        tail = self._process.stderr_tail()
        return f"; it printed:\n{tail}" if tail else ""

    # ------------------------------------------------------------------ calls

    async def call(self, tool: str, arguments: dict[str, Any],
                   timeout: float) -> types.CallToolResult:
        """Call ``tool``. CallTimedOut after ``timeout`` seconds; CallRefused when the
        server answers with an error; ServerFailed (the connection is then stopped)
        when the server is gone or the connection broke."""
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        session = self._session
        if session is None or self.status != "running":
            raise ServerFailed(self.error or "the server is not running")
        try:
            with anyio.fail_after(timeout):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise CallTimedOut(f"{tool} did not answer within {timeout:g} s") from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # the server answered with an error
                raise CallRefused(f"{exc.message} (JSON-RPC error {exc.code})") from None
            raise await self._broken(_describe(exc)) from None
        except Exception as exc:  # noqa: BLE001 - the connection is unusable: restart it
            raise await self._broken(_describe(exc)) from None

    async def _broken(self, why: str) -> ServerFailed:
        """The connection broke: stop it (the next call starts it again)."""
        await self.stop()
        self.status, self.error = "failed", why + self._stderr_note()
        return ServerFailed(self.error)


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool the server lists, page after page."""
    import mcp_types as types

    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _describe(exc: BaseException) -> str:
    """One line for an exception, through exception groups (anyio raises those)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, ServerFailed) else f"{type(exc).__name__}: {text}"
