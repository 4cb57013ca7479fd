"""bash: run a command in its own process group; output capped, head and tail kept.

The command gets an empty stdin and no controlling terminal (a new session), so a
password prompt fails instead of hanging. stdout and stderr share one pipe, so the
combined output keeps its order. A timeout or a cancellation kills the whole group.
When the command exits but a background job it started still holds the pipe, the
output is returned after a short grace and the job is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
MAX_OUTPUT_CHARS = 30_000
LINGER_SECONDS = 0.5     # how long to wait for the pipe to close after the command exits


class BashParams(BaseModel):
    command: str = Field(description="The command line, run with `bash -c`.")
    timeout: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT,
                                description=f"Seconds before the command is killed; default "
                                            f"{DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}.")
    description: str | None = Field(default=None, description="What the command does, in five "
                                                              "to ten words, for the user.")


class BashTool(CatalogTool[BashParams]):
    name: ClassVar[str] = "bash"
    description: ClassVar[str] = (
        "Run a shell command with `bash -c` in the working directory. Each call is a fresh "
        "shell (cd and variables do not carry over); stdin is empty and there is no terminal, "
        "so interactive programs fail. Returns stdout and stderr combined, then `exit code N` "
        f"when it is not 0. Output over {MAX_OUTPUT_CHARS:,} characters keeps its start and "
        f"end. Killed after `timeout` seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT}). "
        "Prefer read, list, glob, grep, edit and write over cat, ls, find, grep and sed."
    )
    Params = BashParams


    async def run(self, params: BashParams, ctx: ToolContext) -> ToolOutput:
        return await run_command(params.command, ctx.cwd, params.timeout or DEFAULT_TIMEOUT)


class _Capture:
    """The first and last ``limit // 2`` bytes of a stream, and how long it was."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[:-self.half]

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        if not omitted:
            return (self.head + self.tail).decode("utf-8", errors="replace")
        return (self.head.decode("utf-8", errors="replace")
                + f"\n\n[… {omitted:,} bytes of output omitted …]\n\n"
                + self.tail.decode("utf-8", errors="replace"))


async def _drain(reader: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await reader.read(1 << 16):
        capture.add(chunk)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_command(command: str, cwd: Path, timeout: float) -> ToolOutput:
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd, stderr=write_fd, start_new_session=True)
    except OSError as exc:
        os.close(read_fd)
        return ToolOutput(f"Cannot run bash in {cwd}: {exc.strerror or exc}", is_error=True)
    finally:
        os.close(write_fd)
    reader = asyncio.StreamReader()
    pipe = open(read_fd, "rb", buffering=0)  # noqa: SIM115 - the transport owns and closes it
    capture = _Capture(MAX_OUTPUT_CHARS)
    transport: asyncio.BaseTransport | None = None
    drain: asyncio.Task[None] | None = None
    timed_out = lingering = False
    try:
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe)
        drain = asyncio.create_task(_drain(reader, capture))
        try:
            async with asyncio.timeout(timeout):
                await proc.wait()
                done, _ = await asyncio.wait({drain}, timeout=LINGER_SECONDS)
                lingering = not done
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            await proc.wait()
            await asyncio.wait({drain}, timeout=LINGER_SECONDS)
    except asyncio.CancelledError:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)
        raise
    finally:
        if drain is not None:
            drain.cancel()
        if transport is not None:
            transport.close()
        else:
            pipe.close()
    return _result(capture.text(), proc.returncode, timeout, timed_out, lingering)


def _result(text: str, code: int | None, timeout: float, timed_out: bool,
            lingering: bool) -> ToolOutput:
    lines = [text.rstrip("\n") or "(no output)"]
    if timed_out:
        lines.append(f"(timed out after {timeout:g} s: the command and its process group "
                     "were killed)")
    elif code:
        killed = f" (killed by signal {_signal_name(-code)})" if code < 0 else ""
        lines.append(f"exit code {code}{killed}")
    if lingering:
        lines.append("(background processes still hold the output open; they keep running "
                     "and their later output is not captured)")
    return ToolOutput("\n".join(lines), is_error=timed_out)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
