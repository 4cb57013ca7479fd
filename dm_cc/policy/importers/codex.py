"""Codex ``.rules`` (execpolicy, Starlark) → a dm_cc policy.

Only ``prefix_rule(pattern=[...], decision=..., justification=..., match=[...],
not_match=[...])`` calls are read, as data: the file is parsed with :mod:`ast` and
every argument must be a literal (nothing is executed). A pattern is a list of
tokens, a nested list giving alternatives (``["git", ["push", "fetch"]]``); a rule
matches a command whose tokens start with the pattern's. Codex picks the strictest
decision among the matching rules (forbidden > prompt > allow), so the rules are
written allows first, then prompts (ask), then forbidden (deny). ``match`` and
``not_match`` examples become inline tests with Codex's decision for them.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from pathlib import Path
from typing import Any

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import read_source
from dm_cc.policy.importers.model import Entry, Imported, InlineTestEntry

DECISIONS = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
ORDER = ("allow", "prompt", "forbidden")       # written in this order: last match wins
FIELDS = {"pattern", "decision", "justification", "match", "not_match"}


class PrefixRule:
    def __init__(self, line: int, alternatives: list[tuple[str, ...]], decision: str,
                 justification: str | None, match: list[list[str]],
                 not_match: list[list[str]]) -> None:
        self.line = line
        self.alternatives = alternatives
        self.decision = decision
        self.justification = justification
        self.match = match
        self.not_match = not_match


def codex_decision(rules: list[PrefixRule], tokens: list[str]) -> str | None:
    """Codex's decision for a command (its tokens); None when no rule matches."""
    hits = {r.decision for r in rules
            if any(tuple(tokens[:len(a)]) == a for a in r.alternatives)}
    for decision in ("forbidden", "prompt", "allow"):    # Codex: the strictest wins
        if decision in hits:
            return decision
    return None


def _literal_command(text: str) -> str:
    return re.sub(r"([\\?*])", r"\\\1", text)


def _example(value: Any, shown: str, line: int) -> list[str]:
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise PolicyError(shown, line, f"example {value!r}: {exc}") from None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise PolicyError(shown, line, "an example is a string or a list of strings")


def _rule(call: ast.Call, shown: str) -> PrefixRule:
    line = call.lineno
    if call.args:
        raise PolicyError(shown, line, "prefix_rule takes keyword arguments only")
    values: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg not in FIELDS:
            raise PolicyError(shown, line, f"prefix_rule: unknown argument {keyword.arg!r}")
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise PolicyError(shown, keyword.value.lineno,
                              f"prefix_rule: {keyword.arg} must be a literal") from None
    pattern = values.get("pattern")
    if not isinstance(pattern, list) or not pattern:
        raise PolicyError(shown, line, "prefix_rule: pattern must be a non-empty list")
    choices: list[list[str]] = []
    for token in pattern:
        options = token if isinstance(token, list) else [token]
        if not options or not all(isinstance(o, str) and o for o in options):
            raise PolicyError(shown, line, "prefix_rule: a pattern token is a string "
                                           "or a list of strings")
        choices.append(options)
    decision = values.get("decision", "allow")
    if decision not in DECISIONS:
        raise PolicyError(shown, line, f"prefix_rule: decision {decision!r} is not "
                                       "allow, prompt or forbidden")
    justification = values.get("justification")
    return PrefixRule(line, [tuple(c) for c in itertools.product(*choices)], decision,
                 justification if isinstance(justification, str) else None,
                 [_example(v, shown, line) for v in values.get("match", [])],
                 [_example(v, shown, line) for v in values.get("not_match", [])])


def parse_rules(text: str, shown: str) -> tuple[list[PrefixRule], list[str]]:
    """The prefix rules of a rules file, and a line for each other statement."""
    try:
        tree = ast.parse(text, shown)
    except SyntaxError as exc:
        raise PolicyError(shown, exc.lineno, f"not a rules file: {exc.msg}") from None
    rules: list[PrefixRule] = []
    others: list[str] = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
                and call.func.id == "prefix_rule":
            rules.append(_rule(call, shown))
        else:
            what = ast.get_source_segment(text, node) or type(node).__name__
            first = what.splitlines()[0][:60]
            others.append(f"line {node.lineno}: {first!r}: only prefix_rule is imported")
    return rules, others


def import_codex(path: Path) -> Imported:
    shown, text = read_source(path)
    out = Imported(shown, "codex", header=[
        f"Imported by `dm_cc policy import codex` from {shown}.",
        "Codex picks the strictest matching rule (forbidden > prompt > allow); dm_cc's",
        "last matching rule wins, so allows come first, then asks, then denies.",
        "A prefix rule [a, b] is the shell pattern 'a b *' (a b, or a b and more words).",
    ])
    rules, others = parse_rules(text, shown)
    for other in others:
        out.drop(out.rules, other)
    for decision in ORDER:
        for rule in (r for r in rules if r.decision == decision):
            _add(out, rule)
    _tests(out, rules)
    return out


def _add(out: Imported, rule: PrefixRule) -> None:
    comment = f"line {rule.line}: {rule.decision} {[list(a) for a in rule.alternatives]}"
    if rule.justification:
        comment += f": {rule.justification}"
    if any(any(c.isspace() for c in token) for a in rule.alternatives for token in a):
        out.approximate(f"line {rule.line}: a token with a space is matched as words")
    for index, alternative in enumerate(rule.alternatives):
        pattern = _literal_command(" ".join(alternative)) + " *"
        out.rules.append(Entry("bash", pattern, DECISIONS[rule.decision],
                               comment=comment if index == 0 else None))


def _tests(out: Imported, rules: list[PrefixRule]) -> None:
    """``match`` examples with Codex's decision over every rule; ``not_match``
    examples only when another rule decides them (else Codex has no answer to pin)."""
    seen: set[str] = set()
    for rule in rules:
        for tokens, kind in [(t, "match") for t in rule.match] + \
                [(t, "not_match") for t in rule.not_match]:
            command = shlex.join(tokens)
            decision = codex_decision(rules, tokens)
            if decision is None or command in seen or not tokens:
                continue
            seen.add(command)
            out.tests.append(InlineTestEntry(
                "bash", command, DECISIONS[decision],
                name=f"Codex line {rule.line} {kind}: {decision}"))
