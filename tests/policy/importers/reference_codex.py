"""Codex's execpolicy decision procedure (codex-rs/execpolicy: rule.rs, policy.rs),
written apart from the importer: the reference the never-looser property compares
imports with.

A ``prefix_rule`` pattern is a list of tokens, each a string or a list of
alternatives; it matches a command (its argv) whose first tokens equal the
pattern's, one for one (``PrefixPattern::matches_prefix``: exact, case-sensitive
string equality, no wildcards, no quote handling: a token is an argument's value).
Every matching rule counts and the strictest decision wins (``Decision`` is
ordered allow < prompt < forbidden: ``Evaluation::from_matches`` takes the max).
No rule matching: no decision (None).
"""

from __future__ import annotations

from collections.abc import Sequence

ORDER = ("allow", "prompt", "forbidden")
AS_DM_CC = {"allow": "allow", "prompt": "ask", "forbidden": "deny", None: "ask"}

Pattern = Sequence[str | Sequence[str]]


def matches(pattern: Pattern, argv: Sequence[str]) -> bool:
    if len(argv) < len(pattern):
        return False
    return all(argv[i] == token if isinstance(token, str) else argv[i] in token
               for i, token in enumerate(pattern))


def decide(rules: Sequence[tuple[Pattern, str]], argv: Sequence[str]) -> str | None:
    hits = [decision for pattern, decision in rules if matches(pattern, argv)]
    return max(hits, key=ORDER.index) if hits else None
