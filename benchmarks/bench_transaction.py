"""What running a command as a transaction costs (issue 21's targets), against
today's confined run in the same process.

(a) Start-up added on a 10,000-file project: ``bash -c true`` run as the bash tool
    runs it, confined as before (``confine(gate, argv)``) and as a transaction
    (``transaction=True``: the overlay mounted in ``unshare -Urm``, then listing
    what changed -- nothing -- and removing the view), interleaved. Target: ≤ 15 ms
    added, nothing proportional to the project (the project is never walked: the
    same figure with 1,000 files is shown).
(b) Applying 1,000 changed files: a command rewrites 1,000 existing files; the
    time to list the changes and rename each onto the project (each previous file
    kept for undo first, a hard link, as the loop does), against the
    reference of renaming 1,000 prepared files with ``os.replace`` alone (the least
    any applying can cost). Target: ≤ 100 ms.
(c) A shell session of 100 commands that change nothing: the process's peak memory
    and the transactions directory's size before and after (target: no growth).

    python benchmarks/bench_transaction.py [--runs N] [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_sandbox import make_project  # noqa: E402

from dm_cc.compose import open_world  # noqa: E402
from dm_cc.sandbox.host import Plan, Sandbox, availability  # noqa: E402
from dm_cc.session import UndoStore  # noqa: E402
from dm_cc.tools.bash import run_plan  # noqa: E402


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def timed(plan: Plan, root: Path) -> float:
    start = time.perf_counter()
    ran = await run_plan(plan, root, 60)
    assert ran.code == 0, ran.text
    if plan.transaction is not None:
        assert plan.transaction.changes(ignore=plan.mount_points().__contains__) == []
        plan.finish()
    return time.perf_counter() - start


def bench_start_up(sandbox: Sandbox, gate, root: Path, runs: int, files: int) -> None:
    command = ["bash", "-c", "true"]

    async def both() -> tuple[list[float], list[float]]:
        before, now = [], []
        for _ in range(runs):
            before.append(await timed(sandbox.confine(gate, command), root))
            now.append(await timed(sandbox.confine(gate, command, transaction=True), root))
        return before, now

    before, now = asyncio.run(both())
    print(f"(a) {files:,} files, bash -c true, median of {runs}: confined "
          f"{median_ms(before):5.1f} ms, as a transaction {median_ms(now):5.1f} ms: added "
          f"{median_ms(now) - median_ms(before):5.1f} ms (target ≤ 15 ms)")


def bench_apply(sandbox: Sandbox, gate, root: Path, count: int) -> None:
    folder = root / "many"
    folder.mkdir()
    for n in range(count):
        (folder / f"f{n}.txt").write_text("old\n")
    plan = sandbox.confine(gate, ["bash", "-c", f"cd many && for i in $(seq 0 {count - 1}); "
                                                "do echo new > f$i.txt; done"],
                           transaction=True)
    asyncio.run(run_plan(plan, root, 60))
    tx = plan.transaction
    assert tx is not None
    undo = UndoStore(sandbox.transactions_dir.parent / "undo")
    start = time.perf_counter()
    changes = tx.changes()
    listed = time.perf_counter() - start
    recorder = undo.recorder("ses_bench", root, "bash: rewrite", turn=0)
    for change in changes:
        tx.apply(change, keep=lambda path: recorder.keep(path, moving=True))
    recorder.close()
    applied = time.perf_counter() - start
    plan.finish()
    assert len(changes) == count and (folder / "f7.txt").read_text() == "new\n"
    # the reference: renames alone, of files prepared beside them
    spare = root / "spare"
    spare.mkdir()
    for n in range(count):
        (spare / f"f{n}.txt").write_text("newer\n")
    start = time.perf_counter()
    for n in range(count):
        os.replace(spare / f"f{n}.txt", folder / f"f{n}.txt")
    reference = time.perf_counter() - start
    print(f"(b) {count:,} changed files: listed in {listed * 1000:5.1f} ms, then applied (each "
          f"kept for undo first) in {(applied - listed) * 1000:5.1f} ms (target ≤ 100 ms); "
          f"reference, os.replace alone: {reference * 1000:5.1f} ms")


def bench_session(sandbox: Sandbox, gate, root: Path, commands: int) -> None:
    def size() -> int:
        found = sandbox.transactions_dir
        return sum(p.stat().st_size for p in found.rglob("*")) if found.exists() else 0

    async def session(n: int) -> None:
        for _ in range(n):
            await timed(sandbox.confine(gate, ["bash", "-c", "ls > /dev/null"],
                                        transaction=True), root)

    asyncio.run(session(10))                      # warm: every cache filled once
    memory, disk = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, size()
    entries = len(os.listdir(sandbox.transactions_dir))
    asyncio.run(session(commands))
    print(f"(c) {commands} commands that change nothing: peak memory {memory / 1024:.1f} → "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB; transactions "
          f"directory {disk} → {size()} bytes, {entries} → "
          f"{len(os.listdir(sandbox.transactions_dir))} entries (target: no growth)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    if not availability().usable:
        print(f"skipped: {availability().reason}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        for files in sorted({1_000, args.files}):
            base = Path(tmp) / str(files)
            root = base / "project"
            make_project(root, files)
            env = {"HOME": str(base / "home"), "DM_CC_HOME": str(base / "dm_cc"),
                   "DM_CC_MANAGED_DIR": str(base / "managed"), "PATH": os.environ["PATH"]}
            world = open_world(cwd=root, env=env)
            gate = world.gate(world.agent("build"))
            sandbox = Sandbox("auto", world.where, env)
            if not sandbox.transactional:
                print(f"skipped: {sandbox.transactions().reason}")
                return
            bench_start_up(sandbox, gate, root, args.runs, files)
        bench_apply(sandbox, gate, root, 1_000)
        bench_session(sandbox, gate, root, 100)


if __name__ == "__main__":
    main()
