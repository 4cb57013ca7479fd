from __future__ import annotations

import asyncio
import dataclasses
import os
import time

import pytest
from pydantic import ValidationError

from dm_cc.tools.bash import MAX_OUTPUT_CHARS, BashTool

from .helpers import call, derive, with_cwd

TOOL = BashTool()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purposes
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[1][0] != "Z"


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_stdout_and_stderr_are_combined_in_order(ctx):
    out = call(TOOL, ctx, command="echo one; echo two >&2; echo three")
    assert out.output == "one\ntwo\nthree" and not out.is_error


def test_a_non_zero_exit_is_reported_not_an_error(ctx):
    out = call(TOOL, ctx, command="echo failing; exit 3")
    assert out.output == "failing\nexit code 3" and not out.is_error


def test_no_output(ctx):
    assert call(TOOL, ctx, command="true").output == "(no output)"
    assert call(TOOL, ctx, command="false").output == "(no output)\nexit code 1"


def test_runs_in_cwd_with_empty_stdin(ctx, project):
    (project / "sub").mkdir()
    sub = with_cwd(ctx, project / "sub")
    assert call(TOOL, sub, command="pwd").output == str(project / "sub")
    assert call(TOOL, ctx, command="cat; echo done").output == "done"


def test_a_missing_cwd_is_an_error(ctx, project):
    gone = with_cwd(ctx, project / "gone")
    out = call(TOOL, gone, command="true")
    assert out.is_error and "Cannot run bash" in out.output


def test_long_output_keeps_head_and_tail(ctx):
    out = call(TOOL, ctx, command="seq 1 100000").output
    assert out.startswith("1\n2\n3\n") and out.endswith("99999\n100000")
    assert "bytes of output omitted" in out
    assert len(out) < MAX_OUTPUT_CHARS + 100


def test_timeout_kills_the_whole_process_group(ctx, project):
    started = time.monotonic()
    out = call(TOOL, ctx, timeout=1,
               command="sleep 30 & echo $! > child.pid; echo before; sleep 30")
    assert time.monotonic() - started < 5
    assert out.is_error
    assert out.output.startswith("before\n(timed out after 1 s")
    assert wait_dead(int((project / "child.pid").read_text()))


def test_cancellation_kills_the_group_and_propagates(ctx, project):
    async def scenario():
        task = asyncio.create_task(TOOL.run(TOOL.Params(
            command="sleep 30 & echo $! > child.pid; sleep 30"), ctx))
        for _ in range(200):
            if (project / "child.pid").exists() and (project / "child.pid").read_text():
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert wait_dead(int((project / "child.pid").read_text()))


def test_a_background_job_does_not_hold_the_call(ctx, project):
    started = time.monotonic()
    out = call(TOOL, ctx, command="sleep 30 & echo $! > bg.pid; echo started")
    assert time.monotonic() - started < 5
    assert out.output.startswith("started\n(background processes")
    pid = int((project / "bg.pid").read_text())
    assert alive(pid)
    os.kill(pid, 9)


def test_timeout_bounds():
    with pytest.raises(ValidationError):
        BashTool.Params(command="x", timeout=601)
    with pytest.raises(ValidationError):
        BashTool.Params(command="x", timeout=0)
    assert BashTool.Params(command="x", timeout=600).timeout == 600


def test_requests_come_from_the_parsed_command(ctx):
    requests = derive(TOOL, ctx, command="git status && rm -rf build", description="x")
    assert requests[:2] == [("bash", "git status"), ("bash", "rm -rf build")]
    assert ("edit", "build") in requests          # rm's operand, found by the shell parser
    assert ("edit", "out.txt") in derive(TOOL, ctx, command="echo hi > out.txt")


def test_output_is_shown_as_it_comes_and_a_failing_display_loses_nothing(ctx):
    seen: list[str] = []

    def show(text: str) -> None:
        seen.append(text)
        raise RuntimeError("a display's bug")

    out = call(TOOL, dataclasses.replace(ctx, on_output=show),
               command="printf 'caf\\xc3'; sleep 0.2; printf '\\xa9\\n'; seq 1 50000 | tail -1")
    assert seen == ["caf"]                      # once, then no more: the reading went on
    assert out.output == "café\n50000"


def test_a_cancelled_command_hands_over_what_it_printed(ctx):
    kept = []

    async def scenario():
        task = asyncio.create_task(TOOL.run(TOOL.Params(command="echo partial; sleep 30"),
                                            dataclasses.replace(ctx, on_cancel=kept.append)))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    (out,) = kept
    assert out.is_error and out.output.startswith("partial\n(cancelled by the user after 0.")
