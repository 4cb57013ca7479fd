"""Loop overhead per tool call, excluding the model.

The scripted model answers instantly, so what is timed is dm_cc's own work per
call, in the loop a user gets (``World.open_loop``: the sandbox where bubblewrap
works, the audit log, the stores): derive requests, decide, record the decision,
run the tool (a command confined), and append two messages (the assistant's call
and the tool result) to the JSONL session, each fsynced. The reference in the same
run is the bare minimum for the same calls: requests + decide + run, with no
session, no sandbox, no audit and no loop.

    python benchmarks/bench_loop.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from dm_cc.compose import Options, World, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.tools.base import ToolContext, builtin_tools


def scripted_calls(count: int) -> list:
    """Alternate a bash command and a file read: both allowed by the defaults."""
    replies = []
    for i in range(count):
        replies.append(call("bash", command=f"echo {i}") if i % 2 else call("read", path="a.txt"))
    return replies + [reply("done")]


def isolated_world(root: Path, options: Options | None = None) -> World:
    return open_world(options, cwd=root,
                      env={**os.environ, "HOME": str(root / "home"),
                           "DM_CC_HOME": str(root / "dm"),
                           "DM_CC_MANAGED_DIR": str(root / "managed")})


async def through_loop(root: Path, count: int) -> float:
    world = isolated_world(root, Options(max_turns=count + 1))
    loop = world.open_loop(HeadlessApprover("deny"), model=ScriptedModel(scripted_calls(count)))
    start = time.perf_counter()
    result = await loop.run("go")
    elapsed = time.perf_counter() - start
    assert result.reason == "done", result
    return elapsed / count


async def direct(root: Path, count: int) -> float:
    world = isolated_world(root)
    gate = world.gate(world.agent("build"))
    tools = {tool.name: tool for tool in builtin_tools()}
    ctx = ToolContext(world.where, session_id="bench", agent="build")
    start = time.perf_counter()
    for item in scripted_calls(count)[:-1]:
        tool_call = item.tool_calls[0]
        tool = tools[tool_call.name]
        params = tool.Params.model_validate(tool_call.arguments)
        decision = gate.decide(tool.requests(params, ctx))
        assert decision.action == "allow"
        await tool.run(params, ctx)
    return (time.perf_counter() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    loop_times, direct_times = [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / ".git").mkdir()
            (root / "a.txt").write_text("hello\n")
            os.chdir(root)
            loop_times.append(asyncio.run(through_loop(root, args.calls)))
            direct_times.append(asyncio.run(direct(root, args.calls)))
    ours, bare = statistics.median(loop_times), statistics.median(direct_times)
    print(f"{args.calls} tool calls (half `bash echo`, half `read`), median of {args.rounds}:")
    print(f"  through the loop:         {ours * 1000:7.2f} ms per call")
    print(f"  bare requests+decide+run: {bare * 1000:7.2f} ms per call")
    print(f"  loop overhead:            {(ours - bare) * 1000:7.2f} ms per call "
          "(session appends with fsync, the audit log, the sandbox, model plumbing, events)")


if __name__ == "__main__":
    main()
