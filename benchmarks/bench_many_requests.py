"""One call with many requests: the loop against the gate alone on the same command.

A shell command can name thousands of paths and commands (``rm`` with a thousand
operands, a thousand ``;``-separated commands, CDPATH entries times ``cd`` times
operands), each a request the gate judges. This times one such call:

* **loop, headless** -- ``dm_cc run --on-ask deny`` in process: the loop a user gets
  (``World.open_loop``: the sandbox, the audit log, the session store) with the
  scripted model making the one bash call, then answering "done". Each of these
  commands asks, so the call is denied unrun, as a headless ask is; what is
  timed is the whole turn (two model calls, the call decided, its audit record, the
  session's appends).
* **gate alone** (the reference, same world, same run, paired rounds): derive the
  command's requests and decide them with the loop's own gate -- the work no loop
  can skip.
* **loop, a person asked** -- the same call in a loop whose approver is a person
  (scripted: "no, tell the model"), so the question's "always" suggestions are
  built, each judged on the requests it came from.

Target: the headless loop within 2x the gate on every command, and its cost linear
in the requests (ms per 1,000 requests flat across the sizes). Before issue 26 the
question's suggestions judged every asking request once per suggestion, headless too:
1,001 requests took 3.5 s, 2,002 took 9.3 s.

    python benchmarks/bench_many_requests.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from dm_cc.compose import Options, World, open_world
from dm_cc.core.approval import Approval, Approver, HeadlessApprover, ScriptedApprover
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, reply


def operands(count: int) -> str:
    return " ".join(f"{i:x}" for i in range(count))


# name -> command; each asks under the default policy (so headless denies it unrun)
SHAPES: dict[str, str] = {
    "rm of 1,000 files": "rm " + operands(1_000),
    "1,001 `rm x; …` commands": "; ".join(f"rm x{i}" for i in range(1_001)),
    "rm of 3,281 files (13 KB)": "rm " + operands(3_281),
    "1 KB: CDPATH × cd × cat": "CDPATH=" + ":".join(f"/{i}" for i in range(64))
                               + "; cd x; cat " + " ".join(f"f{i}" for i in range(170)),
}


# the same kind of call with three requests: what a turn costs whatever the call
SMALL = "rm a b"


def isolated_world(root: Path) -> World:
    return open_world(Options(max_turns=3), cwd=root,
                      env={**os.environ, "HOME": str(root.parent / "home"),
                           "DM_CC_HOME": str(root.parent / "dm"),   # outside the project,
                           "DM_CC_MANAGED_DIR": str(root.parent / "managed")})  # as a user's


def open_loop(world: World, command: str, approver: Approver) -> Loop:
    return world.open_loop(approver, fresh=True,
                           model=ScriptedModel([call("bash", command=command), reply("done")]))


async def through_loop(world: World, command: str, approver: Approver) -> float:
    loop = open_loop(world, command, approver)
    start = time.perf_counter()
    result = await loop.run("go")
    elapsed = time.perf_counter() - start
    assert result.reason == "done", result
    tool = [m for m in loop.session.messages if m.role == "tool"][-1]
    assert tool.is_error, "the call asks: headless, it must not run"
    return elapsed


def gate_alone(world: World, command: str) -> tuple[float, int]:
    """Derive and decide ``command`` with the gate the loop uses; (seconds, requests)."""
    loop = open_loop(world, command, HeadlessApprover("deny"))
    bash = loop.calls.tools["bash"]
    ctx = loop.context()
    gate = loop.rights.gate()
    start = time.perf_counter()
    params = bash.Params.model_validate({"command": command})
    decision = gate.decide(bash.requests(params, ctx))
    elapsed = time.perf_counter() - start
    assert decision.action == "ask", decision.action
    return elapsed, len(decision.verdicts)


def person() -> Approver:
    return ScriptedApprover([Approval("reject", "not now")])


def audit_bytes(root: Path) -> int:
    """The size of the last bash call's audit record (its JSON line), in bytes."""
    sizes = [len(line.encode()) for path in sorted((root.parent / "dm").rglob("*.jsonl"))
             if "audit" in str(path) for line in path.read_text().splitlines()
             if json.loads(line).get("tool") == "bash"]
    return sizes[-1] if sizes else 0


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-person", action="store_true",
                        help="leave out the loop with a person asked")
    args = parser.parse_args()
    loops: dict[str, list[float]] = {name: [] for name in SHAPES}
    gates: dict[str, list[float]] = {name: [] for name in SHAPES}
    people: dict[str, list[float]] = {name: [] for name in SHAPES}
    counts: dict[str, int] = {}
    record: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / ".git").mkdir(parents=True)
        os.chdir(root)
        world = isolated_world(root)
        asyncio.run(through_loop(world, SMALL, HeadlessApprover("deny")))  # warm: parser, imports
        fixed: list[float] = []
        for number in range(args.rounds):
            fixed.append(asyncio.run(through_loop(world, SMALL, HeadlessApprover("deny"))))
            for name, command in SHAPES.items():       # paired: each loop next to its gate,
                if number % 2:                         # which goes first every other round
                    loops[name].append(asyncio.run(through_loop(world, command,
                                                                HeadlessApprover("deny"))))
                    record[name] = audit_bytes(root)
                seconds, counts[name] = gate_alone(world, command)
                gates[name].append(seconds)
                if not number % 2:
                    loops[name].append(asyncio.run(through_loop(world, command,
                                                                HeadlessApprover("deny"))))
                    record[name] = audit_bytes(root)
                if not args.no_person:
                    people[name].append(asyncio.run(through_loop(world, command, person())))
        world.close()
    base = median_ms(fixed)
    print(f"one bash call that asks, headless; median of {args.rounds} paired rounds "
          "(target: headless loop <= 2x the gate alone, linear in the requests)")
    print(f"  a turn's fixed cost ({SMALL!r}, 3 requests): {base:.1f} ms (two model calls, the "
          "session's appends and the audit record, each fsynced)")
    header = f"  {'command':<27} {'requests':>8} {'chars':>6} {'gate':>9} {'loop':>9} {'x gate':>7}" \
             f" {'net x':>6} {'loop/1k req':>11} {'audit rec':>9}"
    print(header + ("" if args.no_person else f" {'person asked':>12}"))
    for name, command in SHAPES.items():
        gate, loop = median_ms(gates[name]), median_ms(loops[name])
        mark = " " if loop <= 2 * gate else "!"
        line = (f"  {name:<27} {counts[name]:>8,} {len(command):>6,} {gate:>7.1f}ms "
                f"{loop:>7.1f}ms {loop / gate:>6.2f}{mark} {(loop - base) / gate:>6.2f} "
                f"{loop * 1000 / counts[name]:>9.1f}ms "
                f"{record[name] / 1024:>7.0f}KB")
        if not args.no_person:
            line += f" {median_ms(people[name]):>10.1f}ms"
        print(line)
    print("  (x gate: the headless loop over the gate alone, ! = over 2x; net x: the same "
          "less the turn's fixed cost;\n   loop/1k req: the loop's ms per 1,000 requests, "
          "flat when linear; audit rec: the call's audit record)")


if __name__ == "__main__":
    main()
