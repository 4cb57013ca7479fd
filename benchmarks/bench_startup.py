"""Start-up time of `dm_cc policy check` against importing its four libraries.

Target: `dm_cc policy check` takes no more than 1.3x the time of
`python -c "import pydantic, yaml, wcmatch.glob, platformdirs"` (the four
libraries it is built on; wcmatch.glob is what a path glob needs). Both are timed as
fresh processes in the same run, from a temporary project with a one-file policy,
with DM_CC_HOME and DM_CC_MANAGED_DIR pointing at empty dirs. The runs are paired
(each round runs the baseline and every command once, in turn) and the figure is
the median of the per-round ratios, so a machine that slows down or speeds up
during the run moves both sides of a ratio alike.

    python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = "import pydantic, yaml, wcmatch.glob, platformdirs"


def seconds(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp, "project")
        (project / ".dm_cc").mkdir(parents=True)
        (project / ".dm_cc" / "policy.yaml").write_text(
            "rules:\n  - {permission: bash, pattern: 'git *', action: allow}\n")
        env = {**os.environ, "DM_CC_HOME": str(Path(tmp, "home")),
               "DM_CC_MANAGED_DIR": str(Path(tmp, "managed"))}
        # As installed: bytecode is cached (the warm-up runs below write it).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        checks = {
            "import pydantic+yaml+wcmatch.glob+platformdirs": [sys.executable, "-c", BASELINE],
            "dm_cc policy check bash 'git status'": [
                sys.executable, "-m", "dm_cc", "policy", "check", "bash", "git status"],
            "dm_cc policy check bash (compound)": [
                sys.executable, "-m", "dm_cc", "policy", "check", "bash",
                "git status && cat README.md | grep x > out.txt"],
            "python -c pass (interpreter alone)": [sys.executable, "-c", "pass"],
        }
        # Warm the OS cache and .pyc files first.
        for command in checks.values():
            subprocess.run(command, cwd=project, env=env, check=True, stdout=subprocess.DEVNULL)
        times: dict[str, list[float]] = {name: [] for name in checks}
        for _ in range(args.runs):  # paired: every command once per round
            for name, command in checks.items():
                times[name].append(seconds(command, project, env))
    base_name = "import pydantic+yaml+wcmatch.glob+platformdirs"
    ratios = {name: statistics.median(t / b for t, b in zip(runs, times[base_name], strict=True))
              for name, runs in times.items()}
    for name, runs in times.items():
        print(f"  {name:<45} {statistics.median(runs) * 1000:7.1f} ms  "
              f"({ratios[name]:.2f}x baseline, median of paired ratios)")
    worst = max(ratios["dm_cc policy check bash 'git status'"],
                ratios["dm_cc policy check bash (compound)"])
    print(f"\npolicy check / baseline: {worst:.2f}x (target: at most 1.3x), "
          f"median of {args.runs} paired runs")


if __name__ == "__main__":
    main()
