"""The sandbox's start with many hidden and protected paths (issue 26).

(a) ``bash -c true`` confined as the bash tool runs it (a transaction where it can:
    ``Sandbox.confine`` then ``run_plan``), in a project with 0, 1,000 and 10,000
    hidden ``.env`` files and with 300 and 1,000 nested repositories, each against
    the same project with none of them, in paired rounds (interleaved, medians).
    Target: the start independent of how many paths are hidden or held. A last
    row makes the 1,000 repositories' 3,000 directories with no repository among
    them: what the tree's size costs, whatever it holds (each directory is
    ``stat``ed before and after a command, to tell the tree did not change). Each
    row prints the wall time added and the CPU time of dm_cc's process added (the
    median of paired differences: on a shared machine the wall time swings).
(b) The first spec of a 100,000-file tree (1,000 ``.env`` files among them),
    against a plain ``os.walk`` listing of the same tree. Target: ≤ 0.5 s.

    python benchmarks/bench_sandbox_paths.py [--runs N] [--files N]

The trees are made in /dev/shm where there is one (the point is the sandbox's cost,
not the disk's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from dm_cc.compose import Options, open_world
from dm_cc.sandbox.host import Sandbox, availability
from dm_cc.tools.bash import run_plan


def world_for(base: Path):
    root, home = base / "project", base / "home"
    root.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    (root / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "config").write_text("[core]\n")
    env = {"HOME": str(home), "DM_CC_HOME": str(base / "dm_cc"),
           "DM_CC_MANAGED_DIR": str(base / "managed"), "PATH": os.environ["PATH"]}
    world = open_world(Options(), cwd=root, env=env)
    return root, env, world


def hidden_files(root: Path, count: int) -> None:
    for n in range(count):
        place = root / "vendor" / f"p{n // 10}"
        place.mkdir(parents=True, exist_ok=True)
        (place / f".env.{n}").write_text("SECRET")
        (place / f"m{n}.js").touch()        # not all of a directory: each hidden alone


def nested_repos(root: Path, count: int) -> None:
    for n in range(count):
        git = root / "repos" / f"r{n}" / ".git"
        (git / "hooks").mkdir(parents=True)
        (git / "config").write_text("[core]\n")
        (git / "HEAD").write_text("ref: refs/heads/main\n")


def same_directories(root: Path, count: int) -> None:
    """The directories ``nested_repos`` makes, none of them a repository (``git``, not
    ``.git``): the control that tells what the repositories cost from what their
    directories do."""
    for n in range(count):
        git = root / "repos" / f"r{n}" / "git"
        (git / "hooks").mkdir(parents=True)
        (git / "config").write_text("[core]\n")
        (git / "HEAD").write_text("ref: refs/heads/main\n")


def start_ms(sandbox: Sandbox, gate, root: Path) -> tuple[float, float]:
    """One ``bash -c true`` as the bash tool runs it: the plan, the command, the
    transaction's end (nothing changed, nothing to land); (wall ms, CPU ms of this
    process: what dm_cc does, without bubblewrap's and bash's own)."""
    start, cpu = time.perf_counter(), time.process_time()
    plan = sandbox.confine(gate, ["bash", "-c", "true"], transaction=True)
    assert plan.refusal is None, plan.refusal
    ran = asyncio.run(run_plan(plan, root, 60))
    assert ran.code == 0, ran.text
    plan.finish()
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def bench_start(base: Path, runs: int) -> None:
    plain_root, plain_env, plain_world = world_for(base / "plain")
    plain = Sandbox("auto", plain_world.where, plain_env)
    plain_gate = plain_world.gate(plain_world.agent("build"))
    how = "a transaction" if plain.transactional else \
        f"no transactions: {plain.transactions().reason}"
    print(f"(a) bash -c true confined ({how}), median of {runs} paired rounds")
    for label, make in (("0 hidden", lambda r: None),
                        ("1,000 hidden .env", lambda r: hidden_files(r, 1_000)),
                        ("10,000 hidden .env", lambda r: hidden_files(r, 10_000)),
                        ("300 nested repos", lambda r: nested_repos(r, 300)),
                        ("1,000 nested repos", lambda r: nested_repos(r, 1_000)),
                        ("their 3,000 dirs, no repo", lambda r: same_directories(r, 1_000))):
        where = base / label.replace(" ", "_").replace(",", "")
        root, env, world = world_for(where)
        make(root)
        sandbox = Sandbox("auto", world.where, env)
        gate = world.gate(world.agent("build"))
        first_start = time.perf_counter()
        start_ms(sandbox, gate, root)       # the first: derives the spec, builds the mask
        first = (time.perf_counter() - first_start) * 1000
        spec = sandbox.spec(gate, transaction=True)
        mounts = len(sandbox._split(spec)[0].mounts()) if sandbox.transactional else \
            len(spec.mounts())
        start_ms(plain, plain_gate, plain_root)
        none, many = [], []
        for _ in range(runs):
            none.append(start_ms(plain, plain_gate, plain_root))
            many.append(start_ms(sandbox, gate, root))
        boxed, alone = (statistics.median(t[0] for t in runs) for runs in (many, none))
        cpu = statistics.median(m[1] - n[1] for m, n in zip(many, none, strict=True))
        print(f"    {label:>25}: {boxed:6.1f} ms against {alone:6.1f} ms "
              f"with none (added {boxed - alone:+5.1f} ms; CPU {cpu:+5.1f} ms); "
              f"{len(spec.hidden):,} hidden, {len(spec.read_only):,} read-only paths, "
              f"{mounts} mounts; first command {first:7.1f} ms")
        shutil.rmtree(where, ignore_errors=True)


def bench_first_spec(base: Path, files: int) -> None:
    root, env, world = world_for(base / "big")
    made = 0
    n = 0
    while made < files:
        place = root / f"pkg{n // 50}" / f"mod{n % 50}"
        place.mkdir(parents=True, exist_ok=True)
        for k in range(49):
            (place / f"f{k}.py").touch()
        (place / f".env.{n}" if n % 2 == 0 else place / "README").touch()
        made += 50
        n += 1
    gate = world.gate(world.agent("build"))
    walks, specs = [], []
    for _ in range(5):                # paired: a fresh sandbox each time (a first spec)
        start, cpu = time.perf_counter(), time.process_time()
        listed = sum(len(d) + len(f) for _, d, f in os.walk(root))
        walks.append((time.perf_counter() - start, time.process_time() - cpu))
        sandbox = Sandbox("auto", world.where, env)
        start, cpu = time.perf_counter(), time.process_time()
        spec = sandbox.spec(gate)
        specs.append((time.perf_counter() - start, time.process_time() - cpu))

    def ms(samples: list[tuple[float, float]], at: int) -> float:
        return statistics.median(s[at] for s in samples) * 1000

    print(f"(b) first spec of {listed:,} paths ({len(spec.hidden):,} hidden), median of 5: "
          f"{ms(specs, 0):5.0f} ms ({ms(specs, 1):4.0f} ms CPU; target ≤ 500 ms); reference: "
          f"os.walk listing it {ms(walks, 0):4.0f} ms ({ms(walks, 1):4.0f} ms CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args()
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=memory) as tmp:
        base = Path(tmp)
        bench_first_spec(base, args.files)
        if availability().usable:
            bench_start(base, args.runs)
        else:
            print(f"(a) skipped: {availability().reason}")


if __name__ == "__main__":
    main()
