"""What the sandbox costs (DESIGN.md §8, issue 11's targets).

(a) The start-up a confined command adds: the median of ``bash -c true`` run
    through the bash tool's own path (``run_command``) confined by ``bwrap``
    against the same command unconfined, in the same run. Target: ≤ 30 ms added.
(b) The spec for a project of 10,000 files (a deep-ish tree, a few ``.env``
    files, a policy with a few deny rules): the first time (listing and judging,
    target ≤ 100 ms), and again with nothing changed (only each directory stat'ed,
    the spec kept), against the reference of stat'ing every directory alone.

    python benchmarks/bench_sandbox.py [--runs N] [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dm_cc.compose import Options, open_world
from dm_cc.sandbox.host import Plan, Sandbox, availability
from dm_cc.sandbox.spec import Mount, bwrap_argv
from dm_cc.tools.bash import run_plan

POLICY = """rules:
  - {permission: read, pattern: 'secrets/**', action: deny}
  - {permission: read, pattern: '*.pem', action: deny}
  - {permission: read, pattern: '~/.ssh/**', action: deny}
  - {permission: edit, pattern: '*.lock', action: deny}
  - {permission: edit, pattern: 'migrations/**', action: ask}
"""


def make_project(root: Path, files: int) -> None:
    """``files`` files over package/module/sub directories four levels deep, with
    a few ``.env`` files, keys, lock files, migrations and secrets among them."""
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    made = 0
    package = 0
    while made < files:
        base = root / f"pkg{package // 10}" / f"mod{package % 10}"
        for sub in range(5):
            directory = base / f"sub{sub}"
            directory.mkdir(parents=True, exist_ok=True)
            for n in range(20):
                (directory / f"file{n}.py").touch()
            made += 20
        if package % 20 == 0:          # a few of each, as in a real project
            for name in (".env", "key.pem", "poetry.lock"):
                (base / name).touch()
                made += 1
        package += 1
    for name in ("secrets/a", "secrets/b/c", "migrations/0001.sql", ".env", ".env.local"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_start_up(sandbox: Sandbox, gate, root: Path, runs: int) -> None:
    command = ["bash", "-c", "true"]

    async def timed(make: Callable[[], Plan]) -> float:
        """One run as the bash tool makes it: the plan (a fresh seccomp fd each
        time), then the command."""
        start = time.perf_counter()
        ran = await run_plan(make(), root, 30)
        assert ran.code == 0, ran.text
        return time.perf_counter() - start

    def unconfined() -> Plan:
        return Plan(command, confined=False)

    def confined() -> Plan:
        return sandbox.confine(gate, command)

    async def both() -> tuple[list[float], list[float]]:
        plain, boxed = [], []
        for _ in range(runs):  # interleaved, so both see the same machine load
            plain.append(await timed(unconfined))
            boxed.append(await timed(confined))
        return plain, boxed

    plain, boxed = asyncio.run(both())
    added = median_ms(boxed) - median_ms(plain)
    spec = sandbox.spec(gate)
    mounts = len(spec.mounts())
    print(f"(a) bash -c true, median of {runs}: unconfined {median_ms(plain):6.1f} ms, "
          f"confined {median_ms(boxed):6.1f} ms ({mounts} mounts): "
          f"added {added:5.1f} ms (target ≤ 30 ms)")
    # bwrap reads its mount table again for each bind mount: the cost grows faster
    # than the number of mounts, so a spec with hundreds of them is shown too.
    files = sorted(str(p) for p in root.glob("pkg*/mod*/sub0/file*.py"))
    empty = str(sandbox.private_dir() / "empty")
    for extra in (100, 300):
        more = replace(spec, hidden=spec.hidden + tuple(Mount(f, "bench", False)
                                                        for f in files[:extra]))
        plan = functools.partial(Plan, bwrap_argv(more, command, empty_file=empty), True)
        many = asyncio.run(_times(timed, plan, max(runs // 5, 5)))
        print(f"    with {mounts + extra} mounts: confined {median_ms(many):6.1f} ms")


async def _times(timed, make: Callable[[], Plan], runs: int) -> list[float]:
    return [await timed(make) for _ in range(runs)]


def bench_spec(sandbox: Sandbox, gate, root: Path, files: int, runs: int) -> None:
    start = time.perf_counter()
    spec = sandbox.spec(gate)
    first = time.perf_counter() - start
    again = []
    for _ in range(runs):
        start = time.perf_counter()
        assert sandbox.spec(gate) is spec
        again.append(time.perf_counter() - start)
    directories = [d for d, _, _ in os.walk(root)]
    stats = []
    for _ in range(runs):
        start = time.perf_counter()
        for directory in directories:
            os.stat(directory)
        stats.append(time.perf_counter() - start)
    print(f"(b) spec for {files:,} files in {len(directories):,} directories: first "
          f"{first * 1000:6.1f} ms (target ≤ 100 ms; {len(spec.hidden)} hidden, "
          f"{len(spec.read_only)} read-only mounts)")
    print(f"    unchanged, median of {runs}: {median_ms(again):6.2f} ms; reference: stat of "
          f"every directory alone {median_ms(stats):6.2f} ms")
    (root / "pkg0" / "mod0" / "sub0" / "new.py").touch()
    start = time.perf_counter()
    sandbox.spec(gate)
    print(f"    one file added: {(time.perf_counter() - start) * 1000:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root, home = base / "project", base / "home"
        make_project(root, args.files)
        (home / ".ssh").mkdir(parents=True)
        (home / ".ssh" / "id_ed25519").touch()
        (base / "policy.yaml").write_text(POLICY)
        env = {"HOME": str(home), "DM_CC_HOME": str(base / "dm_cc"),
               "DM_CC_MANAGED_DIR": str(base / "managed"), "PATH": os.environ["PATH"]}
        world = open_world(Options(policies=(str(base / "policy.yaml"),)), cwd=root, env=env)
        gate = world.gate(world.agent("build"))
        bench_spec(Sandbox("auto", world.where, env), gate, root, args.files, args.runs)
        if availability().usable:
            bench_start_up(Sandbox("auto", world.where, env), gate, root, args.runs)
        else:
            print(f"(a) skipped: {availability().reason}")


if __name__ == "__main__":
    main()
