"""What the Unix-socket seccomp filter adds to a confined command's start-up.

Runs ``true`` the way the bash tool does (``Sandbox.confine`` then ``run_command``,
network off) in three ways per round, in turn: unconfined, confined without the
filter (the same bwrap command line less ``--seccomp N``), and confined with it
(a fresh sealed memfd per command, as in use); both confined times include
``confine`` itself. The figures are medians of the
per-round times, and of the per-round differences, so a machine that slows down
during the run moves both sides alike.

Target: the filter adds at most 2 ms (the whole sandbox's budget is 30 ms).

    python benchmarks/bench_seccomp.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from dm_cc.config.dirs import PROTECTED_FOR_EDIT, HostFilesystem
from dm_cc.permissions import Gate, PathContext
from dm_cc.permissions.gate import Layer
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.sandbox.host import Sandbox
from dm_cc.tools.bash import run_command

COMMAND = ["true"]


def without_filter(argv: list[str]) -> list[str]:
    at = argv.index("--seccomp")
    return argv[:at] + argv[at + 2:]


async def rounds(sandbox: Sandbox, gate: Gate, cwd: Path, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"unconfined": [], "bwrap": [], "bwrap+seccomp": []}
    for _ in range(runs):
        start = time.perf_counter()
        await run_command(COMMAND, cwd, 30)
        times["unconfined"].append(time.perf_counter() - start)

        start = time.perf_counter()
        plan = sandbox.confine(gate, COMMAND)
        for file in plan.pass_files:
            file.close()
        ran = await run_command(without_filter(plan.argv), cwd, 30)
        times["bwrap"].append(time.perf_counter() - start)
        assert ran.code == 0, ran.text

        start = time.perf_counter()
        plan = sandbox.confine(gate, COMMAND)
        ran = await run_command(plan.argv, cwd, 30, pass_files=plan.pass_files)
        times["bwrap+seccomp"].append(time.perf_counter() - start)
        assert ran.code == 0, ran.text
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "p", Path(tmp) / "h"
        project.mkdir()
        home.mkdir()
        where = PathContextDirs(project, project, home, HostFilesystem(), PROTECTED_FOR_EDIT)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "DM_CC_HOME": str(home / "dm_cc")}
        sandbox = Sandbox("required", where, env)
        if not sandbox.availability.usable:
            raise SystemExit(f"bubblewrap is not usable here: {sandbox.availability.reason}")
        gate = Gate([Layer("bench", ())], PathContext(project.as_posix(), home.as_posix()))
        if "--seccomp" not in sandbox.confine(gate, COMMAND).argv:
            raise SystemExit("no seccomp filter on this architecture")
        times = asyncio.run(rounds(sandbox, gate, project, args.runs))
    ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
    added = statistics.median(
        (a - b) * 1000 for a, b in zip(times["bwrap+seccomp"], times["bwrap"], strict=True))
    print(f"{args.runs} runs of `true`, medians:")
    for name, value in ms.items():
        print(f"  {name:14} {value:7.2f} ms")
    print(f"  bwrap adds     {ms['bwrap'] - ms['unconfined']:7.2f} ms over unconfined")
    print(f"  the filter adds {added:6.2f} ms (median of per-round differences; target <= 2 ms)")


if __name__ == "__main__":
    main()
