"""Saved approvals at 1,000 and 10,000 (issue 26): reading, adding, listing and a lookup.

Every approval is ``bash 'npm run taskN *'`` for agent build (months of "always"
answers). The reference is the same file loaded and dumped by json, the simple way:

* in process: ``json.load`` of the store file and ``json.dump`` of it to another file,
  against ``ApprovalStore.add`` (read, check, write back durably: fsync, replace) and
  ``ApprovalStore.list``, each on a fresh store object (nothing remembered, as in a
  new process);
* as processes: ``python -c "import json; d=json.load(open(F)); json.dump(d,
  open(F2,'w'))"`` on the very store file, with the same Python, against
  ``dm_cc approvals add bash 'git push *'`` and ``dm_cc approvals list --json``;
* a lookup: a gate holding the saved approvals judging ``git push origin`` (which
  none of them names) as a session does for each call -- the approvals in force
  (``Approvals.rules``) and the judgement, once compiled -- at 1,000 and 10,000; the
  target is the same time at both. The first lookup (reading the store, compiling)
  is shown too.

Rounds are paired (reference and dm_cc in turn) and figures are medians; a busy
machine slows both sides alike. Targets: add and list within 1.5x the reference,
in process and as processes; a lookup independent of the number of approvals.

    python benchmarks/bench_approvals.py [--rounds N] [--process-rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dm_cc.core import Approvals
from dm_cc.permissions import Gate, Layer, Request, Rule
from dm_cc.session import ApprovalStore, SavedApproval

COUNTS = (1_000, 10_000)
REFERENCE = ("import json, sys; d = json.load(open(sys.argv[1])); "
             "json.dump(d, open(sys.argv[2], 'w'))")


def write_store(path: Path, count: int) -> bytes:
    """A store of ``count`` approvals, written as dm_cc writes it; its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [SavedApproval(f"apr_{n:012x}", "bash", f"npm run task{n} *", "build",
                             1_780_000_000.0 + n, None, "approved for bash in session ses_1"
                             ).to_json() for n in range(count)]
    data = (json.dumps({"version": 1, "project": None, "approvals": entries}, indent=2,
                       ensure_ascii=False) + "\n").encode()
    path.write_bytes(data)
    return data


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def paired(reference: Callable[[], object], ours: dict[str, Callable[[], object]],
           rounds: int, reset: Callable[[], None]) -> tuple[float, dict[str, tuple[float, float]]]:
    """Median seconds of the reference, and per action its median seconds and median
    of per-round ratios to the reference of the same round."""
    ref: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in ours}
    for _ in range(rounds):
        reset()
        ref.append(timed(reference))
        for name, action in ours.items():
            reset()
            times[name].append(timed(action))
    return statistics.median(ref), {
        name: (statistics.median(runs), statistics.median(t / r for t, r in zip(runs, ref, strict=True)))
        for name, runs in times.items()}


def in_process(tmp: Path, count: int, rounds: int) -> list[tuple[str, float]]:
    path = tmp / f"inproc-{count}" / "a.json"
    data = write_store(path, count)
    copy = path.with_name("copy.json")

    def reset() -> None:
        path.write_bytes(data)

    def reference() -> None:
        with open(path, encoding="utf-8") as source:
            document = json.load(source)
        with open(copy, "w", encoding="utf-8") as out:
            json.dump(document, out)

    ours = {"add": lambda: ApprovalStore(path).add("bash", "git push *", agent="build"),
            "list": lambda: ApprovalStore(path).list()}
    ref, figures = paired(reference, ours, rounds, reset)
    print(f"  {count:>6,} approvals  json load+dump {ref * 1000:7.1f} ms", end="")
    results = []
    for name, (seconds, ratio) in figures.items():
        print(f" | {name} {seconds * 1000:7.1f} ms ({ratio:.2f}x)", end="")
        results.append((f"in process, {name}, {count:,}", ratio))
    print()
    return results


def lookup(tmp: Path, count: int, rounds: int) -> float:
    """Microseconds per lookup of a command no approval names (median of rounds)."""
    path = tmp / f"lookup-{count}" / "a.json"
    write_store(path, count)
    request = Request("bash", "git push origin", words=("git", "push", "origin"))
    configured = Layer("project", (Rule("bash", "git push *", "ask"),))
    start = time.perf_counter()
    answers = Approvals(ApprovalStore(path))
    gate = Gate([configured, Layer("approvals", answers.rules("build"), approvals=True)])
    assert gate.judge(request).action == "ask"
    first = time.perf_counter() - start
    per: list[float] = []
    repeat = 2_000
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            answers.rules("build")
            gate.judge(request)
        per.append((time.perf_counter() - start) / repeat)
    median = statistics.median(per)
    print(f"  {count:>6,} approvals  lookup of `git push origin` {median * 1e6:6.1f} µs "
          f"(first: reading and compiling the store, {first * 1000:.0f} ms)")
    return median


def processes(tmp: Path, count: int, rounds: int) -> tuple[list[tuple[str, float]],
                                                            dict[str, float]]:
    """Paired ratios, and median seconds of each process (the reference: ``json``)."""
    project = tmp / f"project-{count}"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DM_CC_HOME": str(tmp / "dmhome"), "HOME": str(tmp / "home"),
           "DM_CC_MANAGED_DIR": str(tmp / "managed")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    from dm_cc.config import data_dir

    store = ApprovalStore.for_project(data_dir(env), project)
    data = write_store(store.path, count)
    copy = tmp / "copy.json"

    def run(*argv: str) -> Callable[[], None]:
        return lambda: subprocess.run([sys.executable, *argv], cwd=project, env=env, check=True,
                                      stdout=subprocess.DEVNULL)

    def reset() -> None:
        store.path.write_bytes(data)

    reference = run("-c", REFERENCE, str(store.path), str(copy))
    ours = {"dm_cc approvals add": run("-m", "dm_cc", "approvals", "add", "bash", "git push *"),
            "dm_cc approvals list --json": run("-m", "dm_cc", "approvals", "list", "--json")}
    for action in (reference, *ours.values()):  # warm the OS cache and the .pyc files
        reset()
        action()
    ref, figures = paired(reference, ours, rounds, reset)
    print(f"  {count:>6,} approvals  json load+dump process {ref * 1000:6.1f} ms")
    results = []
    for name, (seconds, ratio) in figures.items():
        print(f"  {'':>6}             {name:<28} {seconds * 1000:6.1f} ms ({ratio:.2f}x)")
        results.append((f"process, {name}, {count:,}", ratio))
    return results, {"json": ref, **{name: seconds for name, (seconds, _) in figures.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--process-rounds", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-approvals-") as name:
        tmp = Path(name)
        print("In process (fresh store object each time; ratio: to json load+dump, paired):")
        ratios = [r for count in COUNTS for r in in_process(tmp, count, args.rounds)]
        print("Lookup (steady state, as per call in a session):")
        small, large = (lookup(tmp, count, args.rounds) for count in COUNTS)
        print("As processes (ratio: to the json load+dump process on the same file, paired):")
        _, empty = processes(tmp, 0, args.process_rounds)
        found, full = processes(tmp, COUNTS[-1], args.process_rounds)
        ratios += found
        shutil.rmtree(tmp, ignore_errors=True)
    grown = {name: full[name] - empty[name] for name in full}
    print(f"\nWhat {COUNTS[-1]:,} approvals add to a process (10,000 minus none): json load+dump "
          f"+{grown.pop('json') * 1000:.0f} ms; "
          + "; ".join(f"{name} +{seconds * 1000:.0f} ms" for name, seconds in grown.items()))
    worst = max(ratios, key=lambda item: item[1])
    print(f"\nworst add/list ratio: {worst[1]:.2f}x ({worst[0]}; target: at most 1.5x)")
    print(f"lookup at {COUNTS[-1]:,} / at {COUNTS[0]:,}: {large / small:.2f}x "
          "(target: independent of the number of approvals, ~1x)")


if __name__ == "__main__":
    main()
