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
import shlex
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import read_source
from dm_cc.policy.importers.model import (
    Entry,
    Imported,
    InlineTestEntry,
    denial_pattern,
    literal_command,
)

DECISIONS = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
ORDER = ("allow", "prompt", "forbidden")       # written in this order: last match wins
FIELDS = {"pattern", "decision", "justification", "match", "not_match"}
# calls of a rules file that make no rule (Codex's execpolicy: a program's paths)
NOT_RULES = frozenset({"host_executable"})


class Other(NamedTuple):
    """A statement that is not a prefix_rule: said as not imported; ``may_deny``:
    it may make rules, so leaving it out may loosen the policy (refused)."""

    message: str
    may_deny: bool = False


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


def parse_rules(text: str, shown: str) -> tuple[list[PrefixRule], list[Other]]:
    """The prefix rules of a rules file, and a line for each other statement."""
    try:
        tree = ast.parse(text, shown)
    except SyntaxError as exc:
        raise PolicyError(shown, exc.lineno, f"not a rules file: {exc.msg}") from None
    rules: list[PrefixRule] = []
    others: list[Other] = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
            else None
        if isinstance(call, ast.Call) and name == "prefix_rule":
            rules.append(_rule(call, shown))
            continue
        what = ast.get_source_segment(text, node) or type(node).__name__
        first = what.splitlines()[0][:60]
        if name in NOT_RULES or isinstance(call, ast.Constant):
            others.append(Other(f"line {node.lineno}: {first!r}: only prefix_rule is imported"))
        else:   # a loop, a variable, load(), an unknown call: it may make rules we never see
            others.append(Other(f"line {node.lineno}: {first!r}: only prefix_rule calls are "
                                "read, and this may make rules (a forbidden one among them)",
                                may_deny=True))
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
        out.unsaid(out.rules, "deny" if other.may_deny else None, other.message,
                   says_nothing=not other.may_deny)
    for decision in ORDER:
        for rule in (r for r in rules if r.decision == decision):
            _add(out, rule)
    _tests(out, rules)
    return out


def _add(out: Imported, rule: PrefixRule) -> None:
    """One rule per alternative. A token holding a space (Codex matches it as one
    argument) is read as words: wider, so a prompt or forbidden keeps it (said), an
    allow leaves that alternative out."""
    comment = f"line {rule.line}: {rule.decision} {[list(a) for a in rule.alternatives]}"
    if rule.justification:
        comment += f": {rule.justification}"
    action = DECISIONS[rule.decision]
    alternatives = rule.alternatives
    spaced = [a for a in alternatives if any(any(c.isspace() for c in t) for t in a)]
    if spaced and action == "allow":
        out.drop(out.rules, f"line {rule.line}: allow {[list(a) for a in spaced]}: a token "
                            "with a space is one argument in Codex; dm_cc judges words")
        alternatives = [a for a in alternatives if a not in spaced]
    elif spaced:
        out.approximate(f"line {rule.line}: a token with a space is matched as words (wider)")
    for index, alternative in enumerate(alternatives):
        pattern = literal_command(" ".join(alternative)) + " *"
        out.rules.append(Entry("bash", pattern if action == "allow" else denial_pattern(pattern),
                               action, comment=comment if index == 0 else None))


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
