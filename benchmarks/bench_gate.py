"""Gate overhead per shell command: parse (tree-sitter) + derive requests + decide.

Target: a 1 KB command decides in under 2 ms; 100 KB never hangs. The naive
reference in the same run matches the raw string against the same rules (what
dm_cc must never do: it is what `git status && rm -rf /` slips through), to show
what parsing costs on top.

    python benchmarks/bench_gate.py [--runs N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from dm_cc.compose import open_world
from dm_cc.permissions import Ruleset
from dm_cc.permissions.patterns import Wildcard
from dm_cc.tools.catalog import input_requests

PIECES = [
    "git status", "git diff --stat HEAD~1", "ls -la src/", "cat README.md | grep -n TODO",
    "npm run build -- --watch=false", "python -m pytest -q tests/test_loop.py",
    "echo \"$(date) done\" >> build.log", "find . -name '*.py' -newer setup.cfg",
    "FOO=bar make -j4 all", "timeout 30 cargo test --release", "sed -n '1,20p' src/app.py",
    "rg --files | head -50", "docker compose up -d db", "for f in *.txt; do wc -l \"$f\"; done",
]


def command_of_size(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    while sum(len(p) + 4 for p in parts) < size:
        parts.append(rng.choice(PIECES))
    return " && ".join(parts)[:size].rsplit(" && ", 1)[0]


def median_ms(function, inputs, runs: int) -> float:
    times = []
    for _ in range(runs):
        for item in inputs:
            start = time.perf_counter()
            function(item)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        world = open_world(cwd=root, env={"HOME": str(root / "home"),
                                          "DM_CC_HOME": str(root / "dm_cc"),
                                          "DM_CC_MANAGED_DIR": str(root / "managed")})
        gate = world.gate(world.agent("build"))
        where = world.where
        rules = [rule for layer in gate.layers for rule in layer.rules if rule.permission == "bash"]
        naive_rules = [(Wildcard(r.pattern), r) for r in rules]

        def gate_decide(command: str) -> str:
            return gate.decide(input_requests("bash", command, where)).action

        def naive(command: str) -> str:
            action = "ask"
            for matcher, rule in naive_rules:
                if matcher.match(command):
                    action = rule.action
            return action

        rng = random.Random(7)
        for size in (100, 1_000, 10_000):
            inputs = [command_of_size(rng, size) for _ in range(20)]
            ours = median_ms(gate_decide, inputs, args.runs)
            reference = median_ms(naive, inputs, args.runs)
            print(f"{size:>7} chars: gate {ours:8.3f} ms/command, "
                  f"naive raw-string match {reference:7.3f} ms ({len(rules)} bash rules, "
                  f"{len(Ruleset(rules))} compiled)")
        cdpath = "CDPATH=" + ":".join(f"/{i}" for i in range(200))
        multiplied = " ; ".join([cdpath] * 40) + "; cd x; cat " + " ".join(
            f"f{i}" for i in range(60))     # 480,000 places named, uncapped
        for label, command in (("100 KB compound", command_of_size(rng, 100_000)),
                               ("100 KB one word", "a" * 100_000),
                               ("100 KB nested $(", "$(" * 20_000 + "x" + ")" * 20_000),
                               (f"{len(multiplied) // 1000} KB CDPATH × cd", multiplied)):
            start = time.perf_counter()
            action = gate_decide(command)
            print(f"{label:>17}: {action} in {(time.perf_counter() - start) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
