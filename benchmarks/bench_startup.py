"""Start-up time of `dm_cc policy check` against importing its four libraries.

Target: `dm_cc policy check` takes no more than 1.3x the time of
`python -c "import pydantic, yaml, wcmatch.glob, platformdirs"` (the four
libraries it is built on; wcmatch.glob is what a path glob needs). Both are timed as
fresh processes in the same run (median of N), from a temporary project with a
one-file policy, with DM_CC_HOME and DM_CC_MANAGED_DIR pointing at empty dirs.

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


def median_seconds(command: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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
        results = {name: median_seconds(cmd, project, env, args.runs) for name, cmd in checks.items()}
    base = results["import pydantic+yaml+wcmatch.glob+platformdirs"]
    for name, seconds in results.items():
        print(f"  {name:<45} {seconds * 1000:7.1f} ms  ({seconds / base:.2f}x baseline)")
    worst = max(results["dm_cc policy check bash 'git status'"],
                results["dm_cc policy check bash (compound)"])
    print(f"\npolicy check / baseline: {worst / base:.2f}x (target: at most 1.3x), "
          f"median of {args.runs} runs")


if __name__ == "__main__":
    main()
