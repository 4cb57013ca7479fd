"""Loading a large policy: dm_cc against ``yaml.safe_load`` of the same file.

Target (issue 26): a 10,000-rule policy, each rule with a reason, loads in at most
1.5x the time ``yaml.safe_load`` takes to read it, in process and as a process;
a 15,000-rule one loads at all (it was refused as an alias bomb).

The policies are generated into a temporary project (four lines a rule: bash,
read, edit and webfetch rules in turn, every one with a reason). Two references,
both measured in the same run:

* ``yaml.safe_load``: PyYAML's pure-Python loader, as the issue names it;
* ``yaml.load(..., Loader=yaml.CSafeLoader)``: the same with libyaml, what a peer
  who cares about speed writes (dm_cc reads with libyaml too, when PyYAML has it).

In process, dm_cc's figure is ``load_policy_file`` (YAML with the line of every
value, schema validation, rules with their ``file:line``, path patterns compiled);
as processes, ``dm_cc policy check bash 'git status'`` from the project (start-up,
every policy layer, one decision) against ``python -c "import yaml; <load F>"``.
The runs are paired (each round runs every reference and dm_cc once, in turn) and
each figure is the median of the per-round ratios, so a machine that slows down
during the run moves both sides of a ratio alike.

    python benchmarks/bench_policy_load.py [--rounds N] [--sizes 10000,15000]
                                           [--process-sizes 10000]

(By default the processes run for 10,000 rules only, where the target is: the
pure-Python reference takes seconds a round, and the run stays near a minute.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from dm_cc.policy.loader import load_policy_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.large_policy import generated_policy  # noqa: E402

TARGET = 1.5
RELATIVE = ".dm_cc/policy.yaml"      # F: the project's policy, from the project


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def process(argv: list[str], cwd: Path, env: dict[str, str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def paired(runs: dict[str, Callable[[], object]], rounds: int, *, warm: bool = False
           ) -> dict[str, list[float]]:
    """Each round runs every entry once, in turn; the seconds of each, per round.
    ``warm``: run each once first (a process: the OS cache and the .pyc files)."""
    for run in runs.values() if warm else ():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(timed(run))
    return times


def report(title: str, times: dict[str, list[float]], subject: str,
           references: list[str]) -> list[tuple[str, float]]:
    """Print the medians and each reference's ratio; return (reference, ratio)."""
    print(f"\n{title}")
    for name, runs in times.items():
        print(f"  {name:<58} {statistics.median(runs) * 1000:8.1f} ms")
    ratios = []
    for reference in references:
        ratio = statistics.median(a / b for a, b in zip(times[subject], times[reference],
                                                        strict=True))
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(f"  dm_cc / {reference}: {ratio:.2f}x ({verdict} the {TARGET}x target)")
        ratios.append((reference, ratio))
    return ratios


def bench_size(count: int, rounds: int, tmp: Path, processes: bool) -> None:
    project = tmp / f"project-{count}"
    (project / ".dm_cc").mkdir(parents=True)
    (project / ".git").mkdir()
    policy = project / RELATIVE
    policy.write_text(generated_policy(count, "generated rule {i} for the team's task {i}"))
    size = policy.stat().st_size
    loaded = load_policy_file(policy)
    assert len(loaded.rules) == count, len(loaded.rules)
    print(f"\n== {count:,} rules with reasons ({size / 1e6:.1f} MB): loads, "
          f"{len(loaded.rules):,} rules")

    pure, libyaml = "yaml.safe_load (pure Python)", "yaml.load CSafeLoader (libyaml)"
    ours = "dm_cc load_policy_file"

    def read(loader: type) -> Callable[[], object]:
        return lambda: yaml.load(policy.read_text(encoding="utf-8"), Loader=loader)

    in_process = paired({pure: read(yaml.SafeLoader), libyaml: read(yaml.CSafeLoader),
                         ours: lambda: load_policy_file(policy)}, rounds)
    report(f"in process ({rounds} paired rounds)", in_process, ours, [pure, libyaml])
    if not processes:
        return

    env = {**os.environ, "DM_CC_HOME": str(tmp / "home"), "DM_CC_MANAGED_DIR": str(tmp / "managed")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)        # as installed: bytecode cached
    python = sys.executable
    check = "dm_cc policy check bash 'git status'"
    as_processes = paired({
        "python: import yaml; yaml.safe_load(F)": process(
            [python, "-c", f"import yaml; yaml.safe_load(open({RELATIVE!r}))"], project, env),
        "python: import yaml; yaml.load(F, CSafeLoader)": process(
            [python, "-c", f"import yaml; yaml.load(open({RELATIVE!r}), Loader=yaml.CSafeLoader)"],
            project, env),
        check: process([python, "-m", "dm_cc", "policy", "check", "bash", "git status"],
                       project, env),
    }, rounds, warm=True)
    report(f"as processes ({rounds} paired rounds)", as_processes, check,
           ["python: import yaml; yaml.safe_load(F)",
            "python: import yaml; yaml.load(F, CSafeLoader)"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3,
                        help="paired rounds per size (default 3: the pure-Python "
                             "reference takes seconds a round)")
    parser.add_argument("--sizes", default="10000,15000", help="rule counts, in process")
    parser.add_argument("--process-sizes", default="10000", help="rule counts, as processes")
    args = parser.parse_args()
    as_processes = {int(size) for size in args.process_sizes.split(",") if size}
    with tempfile.TemporaryDirectory() as tmp:
        for count in sorted({int(size) for size in args.sizes.split(",")} | as_processes):
            bench_size(count, args.rounds, Path(tmp), count in as_processes)


if __name__ == "__main__":
    main()
