"""Decisions per second for a 500-rule policy: dm_cc's engine against opencode's evaluate.

The reference is what opencode does (``packages/opencode/src/permission``:
``evaluate`` is ``rules.findLast(rule => Wildcard.match(permission, rule.permission)
&& Wildcard.match(pattern, rule.pattern))``): scan the rules from the end and stop
at the first, i.e. last, match, each wildcard turned into a regex (``util/wildcard.ts``:
escape, ``*`` is ``.*``, ``?`` is ``.``, a trailing ``" *"`` optional, dot-all)
matched with ``re.match``, which Python's ``re`` cache keeps compiled. That cache
holds 512 patterns: a 500-rule policy fits, so the reference never recompiles (it
would from about 512 distinct patterns on). It is given its best case too: each
pattern's translation to a regex is memoised (opencode redoes that string work on
every call). Path permissions are matched as dm_cc reads path patterns
(gitignore-anchored globs, ``*`` within a segment) so that both sides decide the
same thing; the run prints how many sampled decisions agree.

dm_cc is measured through its public API, ``evaluate(permission, pattern, ruleset)``
with a compiled ``Ruleset`` and ``evaluate(permission, pattern, rules)`` with the
plain list of ``Rule`` a newcomer would pass. Every input is unique (no decision
cache can help). Rounds interleave the sides and time CPU (``time.process_time``),
so a busy machine slows all alike; the figures are medians.

It then grows one permission from 1,000 to 10,000 rules (saved approvals, deny
flag rules, paths, URLs) and prints the time per decision of both sides (the
reference keeping every regex compiled: ``re``'s cache would recompile past 512), and the
compile time (a Ruleset plus the index of each permission it is asked about) of
the 500-rule policy and the 10,000-rule ones: policies are compiled at start and
on every layer change.

Targets: the plain list at least 10x the reference on 500 rules (aim 30x); for one
permission, 10,000 rules not much slower per decision than 1,000.

    python benchmarks/bench_engine.py [--decisions N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from collections.abc import Callable

from dm_cc.permissions import PathContext, Rule, Ruleset, evaluate
from dm_cc.tools.catalog import known_permissions, language_of

TOOLS = ["git", "npm", "cargo", "docker", "kubectl", "make", "python", "pip", "go", "rm",
         "curl", "ssh", "terraform", "gh", "yarn", "pnpm", "uv", "poetry", "helm", "aws"]
SUBS = ["status", "push", "pull", "run", "build", "test", "install", "deploy", "get", "apply",
        "exec", "logs", "delete", "list", "show", "commit", "fetch", "clean", "init", "login"]
DIRS = ["src", "tests", "docs", "lib", "app", "config", "scripts", "build", "vendor", "web"]
HOME = "/home/user"
CONTEXT = PathContext(root="/project", home=HOME)


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


# --------------------------------------------------------------------------- one permission, grown


def grown_rules(permission: str, count: int) -> list[Rule]:
    """``count`` rules for one permission, as a store of saved approvals or a generated
    policy piles them up, after a catch-all."""
    rules = [Rule("*", "*", "ask", source="grown:0")]
    for i in range(count - 1):
        tool, sub = TOOLS[i % len(TOOLS)], SUBS[i // len(TOOLS) % len(SUBS)]
        if permission == "bash":
            pattern, action = ((f"{tool} {sub} task{i} *", "allow") if i % 10 < 8 else
                               (f"{tool} {sub} task{i} --force *", "deny") if i % 10 == 8 else
                               (f"{tool} task{i}*", "ask"))
        elif permission == "read":
            pattern, action = ((f"{DIRS[i % len(DIRS)]}/mod{i}/**", "allow") if i % 10 < 7 else
                               (f"secret{i}.json", "deny") if i % 10 < 9 else
                               (f"/srv/data{i}/**", "ask"))
        else:
            pattern, action = ((f"https://site{i}.example.com/*", "allow") if i % 10 < 8 else
                               (f"https://site{i}.example.com/admin/*", "deny"))
        rules.append(Rule(permission, pattern, action, source=f"grown:{i + 1}"))
    return rules


def grown_inputs(permission: str, count: int, rng: random.Random, n: int) -> list[tuple[str, str]]:
    out = []
    for j in range(n):
        i = rng.randrange(count)
        tool, sub = TOOLS[i % len(TOOLS)], SUBS[i // len(TOOLS) % len(SUBS)]
        if permission == "bash":
            text = rng.choice([f"{tool} {sub} task{i} --x{j}", f"{tool} {sub} task{i} -v --force",
                               f"{tool} task{i}{j}", f"{tool} other{j}"])
        elif permission == "read":
            text = rng.choice([f"{DIRS[i % len(DIRS)]}/mod{i}/f{j}.py", f"lib/x{j}/secret{i}.json",
                               f"/srv/data{i}/f{j}", f"other{j}/x.py"])
        else:
            text = rng.choice([f"https://site{i}.example.com/p{j}",
                               f"https://site{i}.example.com/admin/{j}", f"https://x{j}.org/"])
        out.append((permission, text))
    return out


# --------------------------------------------------------------------------- the reference

# Each permission's pattern language, as the product reads it from the tool catalog.
LANGUAGE = {permission: language_of(permission) for permission in known_permissions()}
PATH_PERMISSIONS = {p for p, language in LANGUAGE.items() if language == "path"}
_SPECIAL = re.compile(r"[.+^${}()|\[\]\\]")
_TRANSLATED: dict[str, str] = {}


def wildcard_regex(pattern: str) -> str:
    """opencode's util/wildcard.ts ``match``: the pattern as an anchored regex."""
    regex = _TRANSLATED.get(pattern)
    if regex is None:
        escaped = _SPECIAL.sub(lambda m: "\\" + m.group(), pattern.replace("\\", "/"))
        escaped = escaped.replace("*", ".*").replace("?", ".")
        if escaped.endswith(" .*"):
            escaped = escaped[:-3] + "( .*)?"
        regex = _TRANSLATED[pattern] = escaped + r"\Z"
    return regex


def path_regex(pattern: str) -> str:
    """A path pattern as dm_cc reads it (gitignore anchoring, ``*`` within a segment)."""
    regex = _TRANSLATED.get("\0" + pattern)
    if regex is None:
        body = pattern if not pattern.startswith("~/") else HOME + pattern[1:]
        out, i = [], 0
        while i < len(body):
            if body.startswith("**", i):
                out.append(".*")
                i += 2
            else:
                out.append({"*": "[^/]*", "?": "[^/]"}.get(body[i], re.escape(body[i])))
                i += 1
        regex = "".join(out)
        regex = _TRANSLATED["\0" + pattern] = (regex if "/" in body else "(?:.*/)?" + regex) + r"\Z"
    return regex


def reference(permission: str, subject: str, rules: list[Rule],
              match: Callable[[str, str, int], object] = re.match) -> str:
    """opencode's ``evaluate``: the last rule (scanning from the end) whose permission and
    pattern match; else ask."""
    paths = permission in PATH_PERMISSIONS
    for rule in reversed(rules):
        if match(wildcard_regex(rule.permission), permission, re.S) is None:
            continue
        regex = path_regex(rule.pattern) if paths else wildcard_regex(rule.pattern)
        if match(regex, subject, re.S) is not None:
            return rule.action
    return "ask"


_KEPT: dict[str, re.Pattern[str]] = {}


def kept_match(regex: str, text: str, flags: int) -> re.Match[str] | None:
    """``re.match`` with every regex kept compiled: past 512 patterns ``re``'s own cache
    would recompile them on every call, so for the grown policies the reference keeps
    them all (its best case again)."""
    compiled = _KEPT.get(regex)
    if compiled is None:
        compiled = _KEPT[regex] = re.compile(regex, flags)
    return compiled.match(text)


# --------------------------------------------------------------------------- run


def cpu_rate(decide: Callable[[str, str], object], inputs: list[tuple[str, str]]) -> float:
    """Decisions per CPU second."""
    start = time.process_time()
    for permission, subject in inputs:
        decide(permission, subject)
    return len(inputs) / max(time.process_time() - start, 1e-9)


def ours_on(rules: list[Rule] | Ruleset) -> Callable[[str, str], object]:
    return lambda p, s: evaluate(p, s, rules, language=LANGUAGE.get(p))


def compile_ms(rules: list[Rule], permissions: list[str]) -> float:
    """CPU ms to compile ``rules`` and index them for ``permissions`` (what the first
    decision of each pays)."""
    start = time.process_time()
    ruleset = Ruleset(rules, CONTEXT)
    for permission in permissions:
        ruleset.index(permission, LANGUAGE.get(permission, "name"))
    return (time.process_time() - start) * 1e3


def policy(args: argparse.Namespace) -> None:
    rules = make_rules(random.Random(42))
    ruleset = Ruleset(rules, CONTEXT)
    sample = make_inputs(random.Random(7), 600)
    agree = sum(reference(p, s, rules) == evaluate(p, s, ruleset, language=LANGUAGE.get(p)).action
                for p, s in sample)
    agree_plain = sum(reference(p, s, rules) == evaluate(p, s, rules,
                                                         language=LANGUAGE.get(p)).action
                      for p, s in sample)
    rates: dict[str, list[float]] = {"ruleset": [], "plain": [], "reference": []}
    for round_ in range(args.rounds):
        # Fresh unique inputs every round and for each side: nothing is seen twice.
        rates["reference"].append(cpu_rate(lambda p, s: reference(p, s, rules), make_inputs(
            random.Random(2000 + round_), max(args.decisions // 10, 100))))
        rates["ruleset"].append(cpu_rate(ours_on(ruleset), make_inputs(
            random.Random(1000 + round_), args.decisions)))
        rates["plain"].append(cpu_rate(ours_on(rules), make_inputs(
            random.Random(3000 + round_), args.decisions)))
        print(f"round {round_ + 1}: Ruleset {rates['ruleset'][-1]:,.0f}/s, plain list "
              f"{rates['plain'][-1]:,.0f}/s, reference {rates['reference'][-1]:,.0f}/s")
    ours, plain, ref = (statistics.median(rates[k]) for k in ("ruleset", "plain", "reference"))
    print(f"\n{len(rules)} rules, unique inputs, median of {args.rounds} rounds (CPU time); "
          f"same action as the reference on {agree}/{len(sample)} and {agree_plain}/{len(sample)}"
          " sampled inputs:")
    print(f"  evaluate(p, s, ruleset):  {ours:>10,.0f} decisions/s ({1e6 / ours:7.1f} us each)"
          f"  {ours / ref:6.1f}x the reference")
    print(f"  evaluate(p, s, rules):    {plain:>10,.0f} decisions/s ({1e6 / plain:7.1f} us each)"
          f"  {plain / ref:6.1f}x the reference (target: at least 10x, aim 30x)")
    print(f"  reference (opencode):     {ref:>10,.0f} decisions/s ({1e6 / ref:7.1f} us each)")
    print(f"  compile: {compile_ms(rules, sorted({r.permission for r in rules} | {'read'})):.1f} ms"
          " (Ruleset and the index of each permission)")


def growth(args: argparse.Namespace) -> None:
    print("\none permission grown (us per decision, median of rounds, CPU time; "
          "compile: Ruleset and its index):")
    print(f"  {'permission':10s} {'rules':>7s} {'dm_cc':>9s} {'reference':>11s} {'compile':>10s}")
    for permission in ("bash", "read", "webfetch"):
        per: dict[int, float] = {}
        for count in (1_000, 10_000):
            rules = grown_rules(permission, count)
            build = compile_ms(rules, [permission])
            ruleset = Ruleset(rules, CONTEXT)
            ours, ref = [], []
            for round_ in range(args.rounds):
                rng = random.Random(count + round_)
                ours.append(cpu_rate(ours_on(ruleset), grown_inputs(permission, count, rng, 1000)))
                few = max(3, 30_000 // count)  # the reference is slow: fewer decisions
                ref.append(cpu_rate(lambda p, s, rules=rules: reference(p, s, rules, kept_match),
                                    grown_inputs(permission, count, rng, few)))
            per[count] = 1e6 / statistics.median(ours)
            print(f"  {permission:10s} {count:>7,d} {per[count]:>8.1f}  "
                  f"{1e6 / statistics.median(ref):>10.1f}  {build:>7.1f} ms")
        print(f"  {'':10s} 10,000 rules take {per[10_000] / per[1_000]:.2f}x the time of 1,000 "
              "per decision (target: not much more than 1x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    policy(args)
    growth(args)


if __name__ == "__main__":
    main()
