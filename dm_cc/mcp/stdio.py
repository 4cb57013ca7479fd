"""A stdio MCP server's process, as a transport for the SDK's ClientSession.

    server = StdioProcess(argv, env, cwd)
    async with server.streams() as (read, write):   # JSON-RPC, one message per line
        ...
    server.pid, server.exited, server.stderr_tail()

Why not the SDK's ``stdio_client``: dm_cc must know the server's pid (``dm_cc mcp
list``, the no-orphans guarantee), keep what it wrote on stderr (a server that
fails to start says why there, and the terminal must not show it), notice that
it died between calls, and refuse an endless line. So this module starts the
process itself, in its own session and process group, and on the way out closes
its stdin, waits a little, then signals the whole group (TERM, then KILL), and
always sends a last KILL to the group: a server that exited on time may have
left children behind, and they must not outlive dm_cc.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

MAX_LINE = 8 * 1024 * 1024   # bytes of one JSON-RPC message; more and the server is cut off
STDERR_LINES = 20            # lines of the server's stderr kept for error messages
EXIT_GRACE = 1.0             # seconds a server gets to exit after its stdin closes
TERM_GRACE = 1.0             # seconds after SIGTERM before SIGKILL


class StdioProcess:
    """One run of a stdio server (see the module docstring)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, *,
                 pass_files: Sequence[BinaryIO] = ()) -> None:
        self.argv = list(argv)
        self.pass_files = tuple(pass_files)   # bwrap's (its seccomp filter): closed once started
        self.env = dict(env)
        self.cwd = cwd
        self.pid: int | None = None
        self.exited = anyio.Event()     # its stdout closed: it exited, or closed it
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)

    def stderr_tail(self) -> str:
        """The last lines it wrote on stderr."""
        return "\n".join(self._stderr)

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any],
                                                   MemoryObjectSendStream[SessionMessage]]]:
        """Start the process; yield the (read, write) streams a ClientSession takes.
        OSError when it cannot be started."""
        try:
            process = await anyio.open_process(
                self.argv, env=self.env, cwd=self.cwd, start_new_session=True,
                pass_fds=[file.fileno() for file in self.pass_files])
        finally:
            for file in self.pass_files:
                file.close()
        self.pid = process.pid
        incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def read() -> None:
            assert process.stdout is not None
            buffer = b""
            async with incoming_send:
                with suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                              anyio.BrokenResourceError, OSError):
                    async for chunk in process.stdout:
                        *lines, buffer = (buffer + chunk).split(b"\n")
                        for line in lines:
                            if line.strip():
                                await incoming_send.send(_message(line))
                        if len(buffer) > MAX_LINE:
                            await incoming_send.send(ValueError(
                                f"the server sent a message over {MAX_LINE:,} bytes"))
                            break
            self.exited.set()

        async def write() -> None:
            assert process.stdin is not None
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async with outgoing_receive:
                    async for message in outgoing_receive:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await process.stdin.send(data.encode("utf-8") + b"\n")

        async def keep_stderr() -> None:
            assert process.stderr is not None
            buffer = b""
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                          anyio.BrokenResourceError, OSError):
                async for chunk in process.stderr:
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    self._stderr.extend(line.decode("utf-8", "replace").rstrip()
                                        for line in lines if line.strip())
                    buffer = buffer[-4096:]

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            tasks.start_soon(keep_stderr)
            try:
                yield incoming, outgoing
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process)
                    for stream in (incoming, outgoing, incoming_send, outgoing_receive):
                        await stream.aclose()
                tasks.cancel_scope.cancel()


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _stop(process: Process) -> None:
    """Close its stdin, give it EXIT_GRACE to exit, then signal its whole group:
    TERM, TERM_GRACE later KILL, and a last KILL for what it left behind."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not await _exits(process, EXIT_GRACE):
        _signal_group(process.pid, signal.SIGTERM)
        await _exits(process, TERM_GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    await _exits(process, TERM_GRACE)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.aclose()


async def _exits(process: Process, seconds: float) -> bool:
    """Whether the process exited within ``seconds`` (polled: ``wait()`` would also
    wait for pipes a child may hold open)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return process.returncode is not None


def _signal_group(pgid: int, signum: int) -> None:
    """Signal every process of the group the server leads (its pid is the group's id)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
