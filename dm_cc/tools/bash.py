"""bash: run a command in its own process group; output capped, head and tail kept.

The command gets an empty stdin and no controlling terminal (a new session), so a
password prompt fails instead of hanging. stdout and stderr share one pipe, so the
combined output keeps its order. A timeout or a cancellation kills the whole group.
When the command exits but a background job it started still holds the pipe, the
output is returned after a short grace and the job is left running.

The command runs confined when the loop hands the call a sandbox
(``ToolContext.confine``): inside ``bwrap``, with what the policy allows it to
write, read and reach. When it fails in a way the sandbox causes (a read-only file
system, no network), the result says so and carries its ``sandbox_escape``
requests, one per simple command (as bash rules read it): the loop may run that exact
command line again unconfined when they are settled as allowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, ClassVar, NamedTuple

from pydantic import BaseModel, Field

from dm_cc.permissions import escape_requests
from dm_cc.sandbox import Plan, stopped_by_sandbox
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
        command = ["bash", "-c", params.command]
        plan = ctx.confine(command) if ctx.confine is not None else Plan(command, confined=False)
        if plan.refusal is not None:
            return ToolOutput(plan.refusal, is_error=True)
        ran = await run_plan(plan, ctx.cwd, params.timeout or DEFAULT_TIMEOUT)
        output = replace(ran.output(), landing=plan if plan.transaction else None)
        why = stopped_by_sandbox(ran.text, plan.spec) if ran.code and plan.spec else None
        if why is None:
            return output
        if not plan.escapable:
            return replace(output, output=(
                f"{output.output}\n(the sandbox may have stopped this: {why}. The sandbox is "
                "required here, so it cannot run outside it: do it inside the project or "
                "$TMPDIR, or tell the user what is needed.)"))
        return replace(output, output=f"{output.output}\n(the sandbox may have stopped this: {why})",
                       escape=tuple(escape_requests(params.command,
                                                    f"the sandbox stopped it: {why}")))


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


class Ran(NamedTuple):
    """A finished command: its output, exit code, and how it ended."""

    text: str
    code: int | None
    timeout: float
    timed_out: bool = False
    lingering: bool = False
    started: bool = True

    def output(self) -> ToolOutput:
        if not self.started:
            return ToolOutput(self.text, is_error=True)
        return _result(self.text, self.code, self.timeout, self.timed_out, self.lingering)


async def run_plan(plan: Plan, cwd: Path, timeout: float) -> Ran:
    """Run a sandbox plan's command (``dm_cc sandbox run`` runs commands this way too),
    then undo what no mount could hold (:meth:`Plan.settle`), saying so."""
    ran = await run_command(plan.argv, cwd, timeout, pass_files=plan.pass_files)
    undone = plan.settle()
    return ran if undone is None else ran._replace(text=ran.text.rstrip("\n") + "\n" + undone)


async def run_command(argv: Sequence[str], cwd: Path, timeout: float, *,
                      pass_files: Sequence[BinaryIO] = ()) -> Ran:
    """Run ``argv`` (``bash -c …``, or bwrap around it) in its own process group.
    ``pass_files`` (a sandbox plan's: the seccomp filter ``argv`` names by number)
    are inherited under their numbers and closed here once the command started."""
    pass_fds = [file.fileno() for file in pass_files]
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd, stderr=write_fd, start_new_session=True, pass_fds=pass_fds)
    except OSError as exc:
        os.close(read_fd)
        return Ran(f"Cannot run {argv[0]} in {cwd}: {exc.strerror or exc}", 127, timeout, started=False)
    finally:
        os.close(write_fd)
        for file in pass_files:
            file.close()
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
    return Ran(capture.text(), proc.returncode, timeout, timed_out, lingering)


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
