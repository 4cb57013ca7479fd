"""What running a command as a transaction costs (issue 21's targets), against
today's confined run in the same process.

(a) Start-up added on a 10,000-file project: ``bash -c true`` planned and run as the
    bash tool runs it, confined as before (``confine(gate, argv)``) and as a
    transaction (``transaction=True``: its view made, the overlay mounted in
    ``unshare -Urm``, then listing what changed -- nothing -- and handing the view
    over for removal, which a thread does after the result is back), interleaved. Target: ≤ 15 ms
    added, nothing proportional to the project (the project is never walked: the
    same figure with 1,000 files is shown). Interleaved with them, the transaction
    of the project's view alone, without the scratch areas outside the project
    (the home directory, /tmp: docs/sandbox.md, "Writes outside the project", added
    after the target was set): what each part adds. The home directory exists, as
    a user's does.
(b) Applying 1,000 changed files: a command rewrites 1,000 existing files; the
    time to list the changes and rename each onto the project (each previous file
    kept for undo first, a hard link, as the loop does), against the
    reference of the same calls bare: ``os.link`` of each file, then ``os.replace``
    of a prepared file onto it (the least such applying can cost; a rename that
    frees the replaced file costs more). Median of ``--rounds``. Target: ≤ 100 ms.
(c) A shell session of 100 commands that change nothing: the process's peak memory
    and the transactions directory's size before and after (target: no growth).

    python benchmarks/bench_transaction.py [--runs N] [--files N] [--rounds N]
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_sandbox import make_project  # noqa: E402

from dm_cc.compose import open_world  # noqa: E402
from dm_cc.sandbox import host  # noqa: E402
from dm_cc.sandbox.host import Plan, Sandbox, availability  # noqa: E402
from dm_cc.sandbox.outside import scratch_areas  # noqa: E402
from dm_cc.sandbox.transaction import wait_removed  # noqa: E402
from dm_cc.session import UndoStore  # noqa: E402
from dm_cc.tools.bash import run_plan  # noqa: E402


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def timed(make: Callable[[], Plan], root: Path) -> float:
    """The seconds from planning the command (a transaction's view made) until its
    result is back: run, its changes listed (none) and its view handed over for removal
    (:func:`~dm_cc.sandbox.transaction.wait_removed`: after the result is back)."""
    start = time.perf_counter()
    plan = make()
    ran = await run_plan(plan, root, 60)
    assert ran.code == 0, ran.text
    if plan.transaction is not None:
        assert plan.transaction.changes(ignore=plan.mount_points().__contains__) == []
        plan.finish()
    return time.perf_counter() - start


def bench_start_up(sandbox: Sandbox, gate, root: Path, runs: int, files: int) -> None:
    command = ["bash", "-c", "true"]
    areas = scratch_areas(sandbox.spec(gate), sandbox.where, sandbox.transactions_dir)

    def view_alone() -> Plan:
        """The transaction of the project alone: no scratch area outside it."""
        original = host.scratch_areas
        host.scratch_areas = lambda *args, **kwargs: ()
        try:
            return sandbox.confine(gate, command, transaction=True)
        finally:
            host.scratch_areas = original

    async def all_three() -> tuple[list[float], list[float], list[float]]:
        before, alone, now = [], [], []
        for _ in range(runs):
            before.append(await timed(lambda: sandbox.confine(gate, command), root))
            alone.append(await timed(view_alone, root))
            now.append(await timed(lambda: sandbox.confine(gate, command, transaction=True),
                                   root))
        return before, alone, now

    before, alone, now = asyncio.run(all_three())
    print(f"(a) {files:,} files, bash -c true, median of {runs}: confined "
          f"{median_ms(before):5.1f} ms, as a transaction {median_ms(now):5.1f} ms: added "
          f"{median_ms(now) - median_ms(before):5.1f} ms (target ≤ 15 ms); of it the "
          f"project's view alone {median_ms(alone) - median_ms(before):5.1f} ms, the "
          f"{len(areas)} scratch area(s) outside the project ({', '.join(areas)}) the rest")


def apply_once(sandbox: Sandbox, gate, root: Path, count: int, n: int) -> tuple[float, ...]:
    """One round: a command rewrites ``count`` files; the seconds to list its changes,
    to apply them (each kept for undo first), and the reference: as many prepared
    files renamed onto the same paths with ``os.replace``, each kept by ``os.link``
    first."""
    folder = root / f"many{n}"
    folder.mkdir()
    for i in range(count):
        (folder / f"f{i}.txt").write_text("old\n")
    plan = sandbox.confine(gate, ["bash", "-c", f"cd many{n} && for i in $(seq 0 {count - 1}); "
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
    for change in changes:       # as the loop applies (dm_cc/core/effects.py, _Undo)
        tx.apply(change, keep=lambda path: recorder.keep(path, moving=True, at=tx.parent(path)),
                 landed=lambda path, at, known: recorder.landed(path, at, known=known))
    recorder.close()
    applied = time.perf_counter() - start - listed
    plan.finish()
    assert len(changes) == count and (folder / "f7.txt").read_text() == "new\n"
    # the reference: the same work bare -- each file kept by a hard link, then a
    # prepared file renamed onto it (so the replaced file is not freed here either)
    spare, kept = root / f"spare{n}", root / f"kept{n}"
    spare.mkdir()
    kept.mkdir()
    for i in range(count):
        (spare / f"f{i}.txt").write_text("newer\n")
    os.sync()                     # neither side pays for the other's writes
    start = time.perf_counter()
    for i in range(count):
        os.link(folder / f"f{i}.txt", kept / f"f{i}.txt")
        os.replace(spare / f"f{i}.txt", folder / f"f{i}.txt")
    reference = time.perf_counter() - start
    return listed, applied, reference


def bench_apply(sandbox: Sandbox, gate, root: Path, count: int, rounds: int) -> None:
    found = [apply_once(sandbox, gate, root, count, n) for n in range(rounds)]
    listed, applied, reference = ([r[i] for r in found] for i in range(3))
    ratio = statistics.median(a / r for a, r in zip(applied, reference, strict=True))
    print(f"(b) {count:,} changed files, median of {rounds} rounds: listed in "
          f"{median_ms(listed):5.1f} ms, then applied (each kept for undo first) in "
          f"{median_ms(applied):5.1f} ms (target ≤ 100 ms); reference, os.link + os.replace "
          f"alone: {median_ms(reference):5.1f} ms; applied / reference, paired: {ratio:.2f}")


def bench_session(sandbox: Sandbox, gate, root: Path, commands: int) -> None:
    def size() -> int:
        found = sandbox.transactions_dir
        return sum(p.stat().st_size for p in found.rglob("*")) if found.exists() else 0

    async def session(n: int) -> None:
        for _ in range(n):
            await timed(lambda: sandbox.confine(gate, ["bash", "-c", "ls > /dev/null"],
                                                transaction=True), root)

    asyncio.run(session(10))                      # warm: every cache filled once
    wait_removed(30)                              # the views removed after the results
    memory, disk = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, size()
    entries = len(os.listdir(sandbox.transactions_dir))
    asyncio.run(session(commands))
    wait_removed(30)
    print(f"(c) {commands} commands that change nothing: peak memory {memory / 1024:.1f} → "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB; transactions "
          f"directory {disk} → {size()} bytes, {entries} → "
          f"{len(os.listdir(sandbox.transactions_dir))} entries (target: no growth)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of (b)")
    args = parser.parse_args()
    if not availability().usable:
        print(f"skipped: {availability().reason}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        for files in sorted({1_000, args.files}):
            base = Path(tmp) / str(files)
            root = base / "project"
            make_project(root, files)
            (base / "home").mkdir()       # as a user's: a scratch area of its own
            env = {"HOME": str(base / "home"), "DM_CC_HOME": str(base / "dm_cc"),
                   "DM_CC_MANAGED_DIR": str(base / "managed"), "PATH": os.environ["PATH"]}
            world = open_world(cwd=root, env=env)
            gate = world.gate(world.agent("build"))
            sandbox = Sandbox("auto", world.where, env)
            if not sandbox.transactional:
                print(f"skipped: {sandbox.transactions().reason}")
                return
            bench_start_up(sandbox, gate, root, args.runs, files)
        bench_apply(sandbox, gate, root, 1_000, args.rounds)
        bench_session(sandbox, gate, root, 100)


if __name__ == "__main__":
    main()
