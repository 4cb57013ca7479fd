"""bash: run a command in its own process group; output capped, head and tail kept.

The command gets an empty stdin and no controlling terminal (a new session), so a
password prompt fails instead of hanging. stdout and stderr share one pipe, so the
combined output keeps its order; what it prints is shown as it comes
(``ToolContext.on_output``: the REPL keeps its last lines under the spinner). A
timeout or a cancellation kills the whole group, and what it printed until then is
kept, with a line saying it was cut: a timeout's in the result, a cancellation's
handed to ``ToolContext.on_cancel`` (the loop records it instead of "Cancelled").
When the command exits but a background job it started still holds the pipe, the
output is returned after a short grace and the job is left running.

The command runs confined when the loop hands the call a sandbox
(``ToolContext.confine``): inside ``bwrap``, with what the policy allows it to
write, read and reach. When the sandbox kept something of it from happening
(:meth:`Plan.stopped`: what it wrote outside the project, a host the proxy
refused) or it failed in a way the sandbox causes (a read-only file system, no
network), the result says so and carries its ``sandbox_escape`` requests, one per
simple command (as bash rules read it): the loop may run that exact command line
again unconfined when they are settled as allowed.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, ClassVar, NamedTuple

from pydantic import BaseModel, Field

from dm_cc.permissions import escape_requests
from dm_cc.sandbox import Plan
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
            if plan.refusal_escapable and plan.escapable:   # the sandbox cannot hold it here
                return ToolOutput(plan.refusal, is_error=True, escape=tuple(escape_requests(
                    params.command, f"the sandbox cannot hold it: {plan.refusal}")))
            return ToolOutput(plan.refusal, is_error=True)
        ran = await run_plan(plan, ctx.cwd, params.timeout or DEFAULT_TIMEOUT,
                             on_output=ctx.on_output, on_cancel=ctx.on_cancel)
        output = replace(ran.output(), landing=plan if plan.transaction else None)
        stopped = plan.stopped(ran.text, ran.code) if ran.started else None
        if stopped is None:
            return output
        said = f"the sandbox {'stopped' if stopped.seen else 'may have stopped'} this: {stopped.why}"
        if not plan.escapable:
            return replace(output, output=(
                f"{output.output}\n({said}. The sandbox is required here, so it cannot run "
                "outside it: do it inside the project or $TMPDIR, or tell the user what is "
                "needed.)"))
        return replace(output, output=f"{output.output}\n({said})",
                       escape=tuple(escape_requests(params.command,
                                                    f"the sandbox stopped it: {stopped.why}")))


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


async def _drain(reader: asyncio.StreamReader, capture: _Capture,
                 on_output: Callable[[str], None] | None) -> None:
    """Read the pipe to its end; what shows the output failing must not stop the
    reading (the command would block on a full pipe)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await reader.read(1 << 16):
        capture.add(chunk)
        if on_output is not None:
            try:
                on_output(decoder.decode(chunk))
            except Exception:  # noqa: BLE001 - a display's bug; the output is still kept
                on_output = None


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class Ran(NamedTuple):
    """A finished command: its output, exit code, and how it ended (``seconds``: how
    long it ran)."""

    text: str
    code: int | None
    timeout: float
    timed_out: bool = False
    lingering: bool = False
    started: bool = True
    cancelled: bool = False
    seconds: float = 0.0

    def output(self) -> ToolOutput:
        if not self.started:
            return ToolOutput(self.text, is_error=True)
        return _result(self)


async def run_plan(plan: Plan, cwd: Path, timeout: float, *,
                   on_output: Callable[[str], None] | None = None,
                   on_cancel: Callable[[ToolOutput], None] | None = None) -> Ran:
    """Run a sandbox plan's command (``dm_cc sandbox run`` runs commands this way too),
    then undo what no mount could hold (:meth:`Plan.settle`), saying so. Cancelled,
    what it printed goes to ``on_cancel``, with what became of its changes
    (:meth:`Plan.abandon`), before the cancellation goes on."""
    cut: list[Ran] = []
    try:
        ran = await run_command(plan.argv, cwd, timeout, pass_files=plan.pass_files,
                                on_output=on_output, on_cancel=cut.append)
    except asyncio.CancelledError:
        said = plan.abandon()
        if on_cancel is not None and cut:
            output = cut[0].output()
            on_cancel(replace(output, output="\n".join(filter(None, (output.output, said)))))
        raise
    undone = plan.settle()
    return ran if undone is None else ran._replace(text=ran.text.rstrip("\n") + "\n" + undone)


async def run_command(argv: Sequence[str], cwd: Path, timeout: float, *,
                      pass_files: Sequence[BinaryIO] = (),
                      on_output: Callable[[str], None] | None = None,
                      on_cancel: Callable[[Ran], None] | None = None) -> Ran:
    """Run ``argv`` (``bash -c …``, or bwrap around it) in its own process group.
    ``pass_files`` (a sandbox plan's: the seccomp filter ``argv`` names by number)
    are inherited under their numbers and closed here once the command started.
    ``on_output`` is given the output as it comes (decoded); cancelled, the command
    is killed and ``on_cancel`` given what it printed until then."""
    pass_fds = [file.fileno() for file in pass_files]
    read_fd, write_fd = os.pipe()
    began = time.monotonic()
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
        drain = asyncio.create_task(_drain(reader, capture, on_output))
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
        await _ended(proc, drain)
        if on_cancel is not None:
            on_cancel(Ran(capture.text(), proc.returncode, timeout, cancelled=True,
                          seconds=time.monotonic() - began))
        raise
    finally:
        if drain is not None:
            drain.cancel()
        if transport is not None:
            transport.close()
        else:
            pipe.close()
    return Ran(capture.text(), proc.returncode, timeout, timed_out, lingering,
               seconds=time.monotonic() - began)


async def _ended(proc: asyncio.subprocess.Process, drain: asyncio.Task[None] | None) -> None:
    """After a cancelled command's group was killed: wait for it to end, and for what
    was still in the pipe; a second cancellation (Ctrl-C again) stops the wait, not
    the cancellation under way."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(proc.wait(), 5)
        if drain is not None:
            await asyncio.wait({drain}, timeout=LINGER_SECONDS)


def _result(ran: Ran) -> ToolOutput:
    lines = [ran.text.rstrip("\n") or "(no output)"]
    if ran.cancelled:
        lines.append(f"(cancelled by the user after {ran.seconds:.1f} s: the command and its "
                     f"process group were killed; the output above is what it printed until then)")
    elif ran.timed_out:
        lines.append(f"(timed out after {ran.timeout:g} s: the command and its process group "
                     "were killed; the output above is what it printed until then)")
    elif ran.code:
        killed = f" (killed by signal {_signal_name(-ran.code)})" if ran.code < 0 else ""
        lines.append(f"exit code {ran.code}{killed}")
    if ran.lingering:
        lines.append("(background processes still hold the output open; they keep running "
                     "and their later output is not captured)")
    return ToolOutput("\n".join(lines), is_error=ran.timed_out or ran.cancelled)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
