"""What the network proxy adds to a confined command's start-up.

Three ways to run ``bash -c true`` from a throwaway project, timed in paired rounds
(each round runs all three once, in turn): unconfined; confined with the network
off; confined with a rule allowing one host, so the command starts behind the
in-sandbox forwarder (a bare Python, ``-I -S``) with a channel of its own to the
session's proxy. Each confined run is planned afresh (``Sandbox.confine``: the
seccomp filter's file, and the channel, serve one command), and the planning is
timed with it, as the bash tool pays it too. Reported: the median per-round
difference of each confined run from the unconfined one, and of proxy from off.
The issue's target for an ordinary confined command is at most 30 ms added; the
proxy mode is measured, not held to it.

    python benchmarks/bench_sandbox_proxy.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dm_cc.config.dirs import PROTECTED_FOR_EDIT, HostFilesystem
from dm_cc.permissions import Gate, Layer, PathContext, Rule
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.sandbox.host import Plan, Sandbox, availability


def seconds(plan: Callable[[], Plan], cwd: Path) -> float:
    """How long planning and running one command takes, its files passed as the
    bash tool's runner passes them."""
    start = time.perf_counter()
    ready = plan()
    try:
        subprocess.run(ready.argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL,
                       pass_fds=[file.fileno() for file in ready.pass_files])
    finally:
        for file in ready.pass_files:
            file.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    if not availability().usable:
        sys.exit(f"bubblewrap cannot confine commands here: {availability().reason}")
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp, "project"), Path(tmp, "home")
        (root / ".git").mkdir(parents=True)
        home.mkdir()
        where = PathContextDirs(root, root, home, HostFilesystem(), PROTECTED_FOR_EDIT)
        context = PathContext(root.as_posix(), home.as_posix())
        sandbox = Sandbox("auto", where, {"HOME": str(home), "PATH": "/usr/bin:/bin"})
        command = ["bash", "-c", "true"]
        off = Gate([Layer("bench", ())], context)
        proxy = Gate([Layer("bench", (Rule("network", "pypi.org", "allow"),))], context)

        def confined(gate: Gate) -> Callable[[], Plan]:
            return lambda: sandbox.confine(gate, command)

        runs: dict[str, Callable[[], Plan]] = {
            "unconfined": lambda: Plan(list(command), confined=False),
            "network off": confined(off),
            "network proxy": confined(proxy),
        }
        for plan in runs.values():  # warm the caches, start the proxy
            seconds(plan, root)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, plan in runs.items():
                times[name].append(seconds(plan, root))
        sandbox.close()

    def added(name: str, base: str) -> float:
        return 1000 * statistics.median(a - b for a, b in zip(times[name], times[base],
                                                             strict=True))

    print(f"unconfined: median {1000 * statistics.median(times['unconfined']):.1f} ms "
          f"over {args.runs} rounds")
    print(f"network off:   +{added('network off', 'unconfined'):.1f} ms")
    print(f"network proxy: +{added('network proxy', 'unconfined'):.1f} ms "
          f"(+{added('network proxy', 'network off'):.1f} ms over off)")


if __name__ == "__main__":
    main()
