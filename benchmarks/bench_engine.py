"""Decisions per second for a 500-rule policy: dm_cc's engine vs a naive reference.

The naive reference is what one writes first: scan every rule from the start,
turn each pattern into a regex on every call, keep the last match. dm_cc is
measured twice through its public API: ``evaluate(permission, pattern, ruleset)``
with a compiled ``Ruleset``, and ``evaluate(permission, pattern, rules)`` with the
plain list of ``Rule`` a newcomer would pass (compiled once per content, then
found again). All run on unique inputs in the same process (no decision cache
can help: every input is seen once).

Targets: the plain list at least 10x the naive reference (aim 30x).

    python benchmarks/bench_engine.py [--decisions N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time

from dm_cc.permissions import PathContext, Rule, Ruleset, evaluate
from dm_cc.tools.catalog import known_permissions, language_of

TOOLS = ["git", "npm", "cargo", "docker", "kubectl", "make", "python", "pip", "go", "rm",
         "curl", "ssh", "terraform", "gh", "yarn", "pnpm", "uv", "poetry", "helm", "aws"]
SUBS = ["status", "push", "pull", "run", "build", "test", "install", "deploy", "get", "apply",
        "exec", "logs", "delete", "list", "show", "commit", "fetch", "clean", "init", "login"]
DIRS = ["src", "tests", "docs", "lib", "app", "config", "scripts", "build", "vendor", "web"]
HOME = "/home/user"


def make_rules(rng: random.Random, count: int = 500) -> list[Rule]:
    rules = [Rule("*", "*", "ask", source="bench:0")]
    while len(rules) < count:
        kind = rng.random()
        action = rng.choice(["allow", "deny", "ask"])
        source = f"bench:{len(rules)}"
        if kind < 0.6:
            words = [rng.choice(TOOLS), rng.choice(SUBS)]
            pattern = " ".join(words[: rng.choice([1, 2, 2])]) + rng.choice([" *", " --force *", ""])
            rules.append(Rule("bash", pattern, action, source=source))
        elif kind < 0.9:
            permission = rng.choice(["read", "edit", "list"])
            pattern = rng.choice([
                f"{rng.choice(DIRS)}/**",
                f"{rng.choice(DIRS)}/**/*.{rng.choice(['py', 'ts', 'md'])}",
                f"*.{rng.choice(['lock', 'pem', 'key', 'log'])}",
                f".env{rng.choice(['', '.*', '*'])}",
                f"/etc/{rng.choice(['ssh', 'ssl', 'nginx'])}/**", "~/.ssh/**",
            ])
            rules.append(Rule(permission, pattern, action, source=source))
        else:
            permission = rng.choice(["webfetch", "task", "mcp__git__*", "mcp__fs__read"])
            pattern = rng.choice(["*", "https://*.example.com/*", "explore"])
            rules.append(Rule(permission, pattern, action, source=source))
    return rules


def make_inputs(rng: random.Random, count: int) -> list[tuple[str, str]]:
    inputs = []
    for i in range(count):
        kind = rng.random()
        if kind < 0.6:
            inputs.append(("bash", f"{rng.choice(TOOLS)} {rng.choice(SUBS)} --flag{i} "
                                   f"{rng.choice(DIRS)}/file{i}.txt"))
        elif kind < 0.9:
            suffix = rng.choice(["py", "ts", "md", "pem"])
            path = f"{rng.choice(DIRS)}/pkg{i % 97}/mod{i}.{suffix}"
            inputs.append((rng.choice(["read", "edit", "list"]), path))
        else:
            inputs.append(("webfetch", f"https://site{i}.example.com/page/{i}"))
    return inputs


# --------------------------------------------------------------------------- naive

# Each permission's pattern language, as the product reads it from the tool catalog.
LANGUAGE = {permission: language_of(permission) for permission in known_permissions()}
PATH_PERMISSIONS = {p for p, language in LANGUAGE.items() if language == "path"}


def naive_wildcard_regex(pattern: str) -> str:
    if pattern.endswith(" *"):
        return naive_wildcard_regex(pattern[:-2]) + "(?: .*)?"
    return ".*".join(".".join(re.escape(p) for p in part.split("?")) for part in pattern.split("*"))


def naive_path_regex(pattern: str) -> str:
    if pattern.startswith("~/"):
        pattern = HOME + pattern[1:]
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i])))
            i += 1
    body = "".join(out)
    return body if "/" in pattern else "(?:.*/)?" + body


def naive_evaluate(permission: str, subject: str, rules: list[Rule]) -> str:
    last = "ask"
    for rule in rules:
        if not re.fullmatch(naive_wildcard_regex(rule.permission), permission):
            continue
        if permission in PATH_PERMISSIONS:
            regex = naive_path_regex(rule.pattern)
        else:
            regex = naive_wildcard_regex(rule.pattern)
        if re.fullmatch(regex, subject, re.DOTALL):
            last = rule.action
    return last


# --------------------------------------------------------------------------- run


def rate(function, inputs) -> float:
    start = time.perf_counter()
    for permission, subject in inputs:
        function(permission, subject)
    return len(inputs) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rules = make_rules(random.Random(42))
    ruleset = Ruleset(rules, PathContext(root="/project", home=HOME))
    ours_rates, plain_rates, naive_rates = [], [], []
    for round_ in range(args.rounds):
        # Fresh unique inputs every round and for each side: nothing is seen twice.
        ours_inputs = make_inputs(random.Random(1000 + round_), args.decisions)
        plain_inputs = make_inputs(random.Random(3000 + round_), args.decisions)
        naive_inputs = make_inputs(random.Random(2000 + round_), args.decisions)
        agree = sum(naive_evaluate(p, s, rules)
                    == evaluate(p, s, ruleset, language=LANGUAGE.get(p)).action
                    for p, s in naive_inputs[:300])
        agree_plain = sum(naive_evaluate(p, s, rules)
                          == evaluate(p, s, rules, language=LANGUAGE.get(p)).action
                          for p, s in naive_inputs[300:600])
        ours = rate(lambda p, s: evaluate(p, s, ruleset, language=LANGUAGE.get(p)), ours_inputs)
        plain = rate(lambda p, s: evaluate(p, s, rules, language=LANGUAGE.get(p)), plain_inputs)
        naive = rate(lambda p, s: naive_evaluate(p, s, rules), naive_inputs)
        ours_rates.append(ours)
        plain_rates.append(plain)
        naive_rates.append(naive)
        print(f"round {round_ + 1}: Ruleset {ours:,.0f}/s, plain list {plain:,.0f}/s, "
              f"naive {naive:,.0f}/s; same action on {agree}/300 and {agree_plain}/300 "
              "sampled inputs")
    ours, plain = statistics.median(ours_rates), statistics.median(plain_rates)
    naive = statistics.median(naive_rates)
    print(f"\n{len(rules)} rules, {args.decisions} unique inputs per side per round, "
          f"median of {args.rounds} rounds:")
    print(f"  evaluate(p, s, ruleset):  {ours:>10,.0f} decisions/s ({1e6 / ours:7.1f} us each)"
          f"  {ours / naive:6.1f}x naive")
    print(f"  evaluate(p, s, rules):    {plain:>10,.0f} decisions/s ({1e6 / plain:7.1f} us each)"
          f"  {plain / naive:6.1f}x naive (target: at least 10x, aim 30x)")
    print(f"  naive reference:          {naive:>10,.0f} decisions/s ({1e6 / naive:7.1f} us each)")


if __name__ == "__main__":
    main()
