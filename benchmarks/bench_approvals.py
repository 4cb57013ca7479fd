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

``add`` makes the store durable (fsync of the file and its directory); the plain
reference does not. ``json load+dump+fsync`` (the copy and its directory fsynced,
as dm_cc does) is printed beside it, in process and as a process, for what that
costs -- on a machine whose disk is busy it is most of ``add``'s margin; the
target stays against the plain reference.

Rounds are paired (reference and dm_cc in turn) and figures are medians; a busy
machine slows both sides alike. Targets: add and list within 1.5x the reference,
in process and as processes; a lookup independent of the number of approvals.

    python benchmarks/bench_approvals.py [--rounds N] [--process-rounds N]
"""

from __future__ import annotations

import argparse
import functools
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
REPEAT = 2_000  # lookups per timed run
REFERENCE = ("import json, sys; d = json.load(open(sys.argv[1])); "
             "json.dump(d, open(sys.argv[2], 'w'))")
# not the reference: the same made durable as dm_cc makes its store (the file, its directory)
REFERENCE_SYNCED = ("import json, os, sys; d = json.load(open(sys.argv[1])); "
                    "f = open(sys.argv[2], 'w'); json.dump(d, f); f.flush(); os.fsync(f.fileno()); "
                    "f.close(); n = os.open(os.path.dirname(sys.argv[2]), os.O_RDONLY); "
                    "os.fsync(n); os.close(n)")


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

    def reference_synced() -> None:  # not the reference: what durability costs it
        reference()
        with open(copy, "rb+") as out:
            os.fsync(out.fileno())
        directory = os.open(copy.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    ours = {"add": lambda: ApprovalStore(path).add("bash", "git push *", agent="build"),
            "list": lambda: ApprovalStore(path).list(),
            "(json load+dump+fsync)": reference_synced}
    ref, figures = paired(reference, ours, rounds, reset)
    print(f"  {count:>6,} approvals  json load+dump {ref * 1000:7.1f} ms", end="")
    results = []
    for name, (seconds, ratio) in figures.items():
        print(f" | {name} {seconds * 1000:7.1f} ms ({ratio:.2f}x)", end="")
        if not name.startswith("("):
            results.append((f"in process, {name}, {count:,}", ratio))
    print()
    return results


def lookup_gate(tmp: Path, count: int) -> tuple[Callable[[], object], float]:
    """``REPEAT`` lookups of a command no approval names, as a session makes them, over
    ``count`` saved approvals; and the seconds the first one took (reading the store,
    compiling the gate)."""
    path = tmp / f"lookup-{count}" / "a.json"
    write_store(path, count)
    request = Request("bash", "git push origin", words=("git", "push", "origin"))
    configured = Layer("project", (Rule("bash", "git push *", "ask"),))
    start = time.perf_counter()
    answers = Approvals(ApprovalStore(path))
    gate = Gate([configured, Layer("approvals", answers.rules("build"), approvals=True)])
    assert gate.judge(request).action == "ask"
    first = time.perf_counter() - start

    def run() -> None:
        for _ in range(REPEAT):
            answers.rules("build")  # what Rights.gate() keys its compiled gate by
            gate.judge(request)
    return run, first


def lookups(tmp: Path, rounds: int) -> float:
    """Per-lookup times at each count, paired round by round; the median ratio of the
    largest count's to the smallest's."""
    runs = {count: lookup_gate(tmp, count) for count in COUNTS}
    times: dict[int, list[float]] = {count: [] for count in COUNTS}
    for _ in range(rounds):
        for count, (run, _) in runs.items():
            times[count].append(timed(run) / REPEAT)
    for count, (_, first) in runs.items():
        print(f"  {count:>6,} approvals  lookup of `git push origin` "
              f"{statistics.median(times[count]) * 1e6:6.1f} µs "
              f"(the first: reading the store and compiling, {first * 1000:.0f} ms)")
    small, large = times[COUNTS[0]], times[COUNTS[-1]]
    return statistics.median(b / a for a, b in zip(small, large, strict=True))


def path_lookups(rounds: int) -> None:
    """Shown, not a target here: a lookup of ``edit docs/x.md`` among ``edit
    src/fileN.py`` approvals ("always" answers for edits). The engine indexes a
    command's rules by first word, not a path's, so these are scanned: the engine
    item's target (sub-linear growth in the rules of one permission) covers them."""
    request = Request("edit", "docs/x.md", language="path")
    per: dict[int, float] = {}
    for count in COUNTS:
        gate = Gate([Layer("approvals", tuple(Rule("edit", f"src/file{n}.py", "allow")
                                              for n in range(count)), approvals=True)])
        gate.judge(request)
        per[count] = statistics.median(timed(functools.partial(gate.judge, request))
                                       for _ in range(rounds))
    print("  (not a target here) lookup of `edit docs/x.md` among N `edit src/fileN.py`: "
          + ", ".join(f"{count:,}: {seconds * 1e6:.0f} µs" for count, seconds in per.items()))


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
            "dm_cc approvals list --json": run("-m", "dm_cc", "approvals", "list", "--json"),
            "(json load+dump+fsync process)": run("-c", REFERENCE_SYNCED, str(store.path),
                                                  str(copy))}
    for action in (reference, *ours.values()):  # warm the OS cache and the .pyc files
        reset()
        action()
    ref, figures = paired(reference, ours, rounds, reset)
    print(f"  {count:>6,} approvals  json load+dump process {ref * 1000:6.1f} ms")
    results = []
    for name, (seconds, ratio) in figures.items():
        print(f"  {'':>6}             {name:<28} {seconds * 1000:6.1f} ms ({ratio:.2f}x)")
        if not name.startswith("("):
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
        print("Lookup (steady state, as per call in a session; paired rounds):")
        growth = lookups(tmp, args.rounds)
        path_lookups(args.rounds)
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
    print(f"lookup at {COUNTS[-1]:,} / at {COUNTS[0]:,}: {growth:.2f}x, median of paired "
          "rounds (target: independent of the number of approvals, ~1x)")


if __name__ == "__main__":
    main()
