"""Loop overhead per tool call, excluding the model: what a user's loop costs a call.

The scripted model answers instantly, so what is timed is dm_cc's own work per
call in the loop a user gets (``World.open_loop``, as ``dm_cc run`` and the REPL
open it): derive requests, decide, record the decision in the audit log, run the
tool (a command confined by the sandbox, as a transaction, where bubblewrap works),
and append two messages (the assistant's call and the tool result) to the JSONL
session. The script checks the sandbox confines and every decision was recorded.

Two references, timed in the same run, paired round by round:

* **the same work without the loop**: for each call, requests + decide with the
  same gate, append the same audit record to the same log and make it durable
  (one fsync before the call acts, the head brought up after it, as the loop does
  for a reply of one call), run the tool with the same confinement (a command's
  transaction listed and finished), append the two messages to a JSONL file with
  an fsync each. The loop's own cost (model
  plumbing, events, the settle path) is the loop minus this.
* **bare**: requests + decide + run, unconfined, nothing recorded -- what a tool
  call costs a peer that keeps no audit log and no sandbox.

Each figure is printed as wall time and as this process's CPU time: on a shared
machine the wall time of fsyncs and of the sandbox's processes swings with the
others' load, while the loop's own overhead is CPU work in this process.

    python benchmarks/bench_loop.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from dm_cc.compose import Options, World, open_world
from dm_cc.core import audit
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
                      env={**os.environ, "HOME": str(root.parent / "home"),
                           "DM_CC_HOME": str(root.parent / "dm"),   # outside the project,
                           "DM_CC_MANAGED_DIR": str(root.parent / "managed")})  # as a user's


def audit_records(world: World) -> int:
    path = world.audit.path
    return len(path.read_text().splitlines()) if path.exists() else 0


async def through_loop(root: Path, count: int) -> tuple[float, float]:
    world = isolated_world(root, Options(max_turns=count + 1))
    loop = world.open_loop(HeadlessApprover("deny"), model=ScriptedModel(scripted_calls(count)))
    before = audit_records(world)
    start, cpu = time.perf_counter(), time.process_time()
    result = await loop.run("go")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert result.reason == "done", result
    assert audit_records(world) - before == count, "every decision is in the audit log"
    assert not any(m.is_error for m in loop.session.messages if m.role == "tool")
    world.close()
    return elapsed / count, cpu / count


async def without_loop(root: Path, count: int) -> tuple[float, float]:
    """The loop's inherent work per call, done directly (see the module docstring)."""
    world = isolated_world(root)
    gate = world.gate(world.agent("build"))
    tools = {tool.name: tool for tool in builtin_tools()}
    sandbox = world.sandbox
    ctx = ToolContext(world.where, session_id="bench", agent="build",
                      confine=(lambda argv: sandbox.confine(gate, argv, transaction=True))
                      if sandbox.confining else None)
    actor = audit.Actor(str(world.root), "bench", "bench", "build")
    log = world.audit
    session = root.parent / "dm" / "bench-session.jsonl"
    start, cpu = time.perf_counter(), time.process_time()
    with session.open("a") as out:
        for item in scripted_calls(count)[:-1]:
            tool_call = replace(item.tool_calls[0], id=f"call_{time.perf_counter_ns()}")
            _append(out, {"role": "assistant", "tool_calls": [tool_call.arguments]})
            tool = tools[tool_call.name]
            params = tool.Params.model_validate(tool_call.arguments)
            decision = gate.decide(tool.requests(params, ctx))
            assert decision.action == "allow"
            log.append(audit.record(actor, tool_call, tool.entry.main_text(tool_call.arguments),
                                    decision))
            log.sync(head=False)   # the decision durable before the call acts (write-ahead)
            output = await tool.run(params, replace(ctx, call_id=tool_call.id))
            plan = output.landing
            if plan is not None and plan.transaction is not None:
                plan.transaction.changes(ignore=plan.mount_points().__contains__)
                plan.finish(())
            assert not output.is_error, output.output
            _append(out, {"role": "tool", "content": output.output, "tool_call_id": tool_call.id})
            log.sync()             # the reply's end: the log's head brought up to it
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    world.close()
    return elapsed / count, cpu / count


def _append(out, message: dict) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()
    os.fsync(out.fileno())


async def bare(root: Path, count: int) -> tuple[float, float]:
    world = isolated_world(root)
    gate = world.gate(world.agent("build"))
    tools = {tool.name: tool for tool in builtin_tools()}
    ctx = ToolContext(world.where, session_id="bench", agent="build")
    start, cpu = time.perf_counter(), time.process_time()
    for item in scripted_calls(count)[:-1]:
        tool_call = item.tool_calls[0]
        tool = tools[tool_call.name]
        params = tool.Params.model_validate(tool_call.arguments)
        decision = gate.decide(tool.requests(params, ctx))
        assert decision.action == "allow"
        await tool.run(params, ctx)
    return (time.perf_counter() - start) / count, (time.process_time() - cpu) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"loop": [], "without": [], "bare": []}
    state = ""
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "project"
            (root / ".git").mkdir(parents=True)
            (root / "a.txt").write_text("hello\n")
            os.chdir(root)
            state = isolated_world(root).sandbox.state()
            times["loop"].append(asyncio.run(through_loop(root, args.calls)))
            times["without"].append(asyncio.run(without_loop(root, args.calls)))
            times["bare"].append(asyncio.run(bare(root, args.calls)))
    ours, simple, plain = (statistics.median(t[0] for t in times[k]) * 1000
                           for k in ("loop", "without", "bare"))
    cpu = {k: statistics.median(t[1] for t in times[k]) * 1000 for k in times}
    print(f"{args.calls} tool calls (half `bash echo`, half `read`), median of {args.rounds} "
          f"paired rounds; sandbox: {state}; wall time, and this process's CPU time")
    print(f"  through the loop a user gets:      {ours:7.2f} ms per call, {cpu['loop']:5.2f} ms CPU "
          "(sandbox, audit log, session store)")
    print(f"  the same work without the loop:    {simple:7.2f} ms per call, {cpu['without']:5.2f} ms CPU "
          "(decide, audit record synced, run confined, two fsynced appends)")
    print(f"  bare requests+decide+run:          {plain:7.2f} ms per call, {cpu['bare']:5.2f} ms CPU "
          "(unconfined, nothing kept)")
    print(f"  the loop's own overhead:           {ours - simple:7.2f} ms per call, "
          f"{cpu['loop'] - cpu['without']:5.2f} ms CPU (model plumbing, events, the settle path)")
    print(f"  sandbox + audit + session:         {simple - plain:7.2f} ms per call")


if __name__ == "__main__":
    main()
