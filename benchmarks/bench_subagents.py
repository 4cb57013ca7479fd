"""Parallel subagents: two task calls of one reply run at the same time.

One model reply holds two task calls; each child's model call takes --delay
seconds (a scripted model per task, ``Delayed``). Timed end to end through the
real loop: the parent's two model calls, both children in their child sessions
(each fsynced JSONL), their results back to the parent. The reference, measured
in the same run through the same loop, is one such child alone: run one after
the other, two children would take twice that.

    python benchmarks/bench_subagents.py [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from dm_cc.compose import open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.events import Event, TaskFinished, TaskStarted
from dm_cc.llm.scripted import Delayed, ScriptedModel, calls, reply


def task(prompt: str) -> tuple[str, dict]:
    return ("task", {"description": prompt, "prompt": prompt, "subagent_type": "general"})


async def timed(root: Path, prompts: list[str], delay: float) -> tuple[float, list[float]]:
    """Seconds from the parent's prompt to its answer, when its first reply starts
    a child per prompt (in one reply); and when each child started (offsets)."""
    world = open_world(cwd=root, env={"HOME": str(root / "home"), "DM_CC_HOME": str(root / "dm"),
                                      "DM_CC_MANAGED_DIR": str(root / "managed")})
    model = ScriptedModel([calls(*(task(p) for p in prompts)), reply("all done")],
                          tasks={p: [Delayed(reply(f"{p}: done"), delay)] for p in prompts})
    started: list[float] = []
    finished: list[TaskFinished] = []

    def on_event(event: Event) -> None:
        if isinstance(event, TaskStarted):
            started.append(time.perf_counter())
        elif isinstance(event, TaskFinished):
            finished.append(event)

    loop = world.open_loop(HeadlessApprover("fail"), model=model, on_event=on_event)
    start = time.perf_counter()
    result = await loop.run("go")
    elapsed = time.perf_counter() - start
    assert result.reason == "done" and result.text == "all done", result
    assert [event.status for event in finished] == ["done"] * len(prompts), finished
    assert model.remaining == 0
    return elapsed, [moment - start for moment in started]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=2.0,
                        help="seconds each child's model call takes (default 2.0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        one, _ = asyncio.run(timed(root, ["child one"], args.delay))
        both, starts = asyncio.run(timed(root, ["child one", "child two"], args.delay))
    sequential = 2 * one
    print(f"two general subagents started by one reply, each model call {args.delay:.2f} s:")
    rows = [
        ("one child alone (through the loop)", f"{one:7.3f} s"),
        ("sequential reference (2 x one child)", f"{sequential:7.3f} s"),
        ("both children, one reply", f"{both:7.3f} s  (children started "
                                     f"{abs(starts[1] - starts[0]) * 1000:.1f} ms apart)"),
        ("ratio to sequential", f"{both / sequential:7.3f}  (0.5: fully parallel, 1.0: sequential)"),
        ("cost of the second child", f"{(both - one) * 1000:7.1f} ms"),
    ]
    for label, figure in rows:
        print(f"  {label + ':':<38}{figure}")

if __name__ == "__main__":
    main()
