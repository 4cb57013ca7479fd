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
FIELDS = {"pattern", "decision", "justification", "match", "not_match", "reviewer"}
# calls of a rules file that make no rule (Codex's execpolicy: a program's paths)
NOT_RULES = frozenset({"host_executable"})
# network_rule(host=…, protocol=…, decision=…): the hosts a sandboxed command may
# reach, dm_cc's ``network`` permission ("deny" is Codex's other name of forbidden)
NETWORK_DECISIONS = {**DECISIONS, "deny": "deny"}
NETWORK_FIELDS = {"host", "protocol", "decision", "justification"}


class Other(NamedTuple):
    """A statement that is not a prefix_rule: said as not imported; ``may_deny``:
    it may make rules, so leaving it out may loosen the policy (refused)."""

    message: str
    may_deny: bool = False


class NetworkRule(NamedTuple):
    line: int
    host: str
    decision: str          # dm_cc's action
    source: str            # the call, shortened, for the comment


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


def _network_rule(call: ast.Call) -> NetworkRule | None:
    """A ``network_rule`` whose arguments are all literal and known; None otherwise
    (then it is a statement that may make rules: refused unless --lossy)."""
    values: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg not in NETWORK_FIELDS or call.args:
            return None
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            return None
    host, decision = values.get("host"), values.get("decision")
    if not isinstance(host, str) or decision not in NETWORK_DECISIONS:
        return None
    host = host.strip().strip("[]").rstrip(".").lower()
    host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if not host or any(c in host for c in "*/?#@ "):
        return None
    source = f"network_rule(host={values['host']!r}, decision={decision!r})"
    return NetworkRule(call.lineno, host, NETWORK_DECISIONS[decision], source)


def parse_rules(text: str, shown: str) -> tuple[list[PrefixRule], list[Other]]:
    """The prefix rules of a rules file, and a line for each other statement."""
    rules, others, _ = parse_file(text, shown)
    return rules, others


def parse_file(text: str, shown: str
               ) -> tuple[list[PrefixRule], list[Other], list[NetworkRule]]:
    """The prefix rules, the other statements and the network rules of a rules file."""
    try:
        tree = ast.parse(text, shown)
    except SyntaxError as exc:
        raise PolicyError(shown, exc.lineno, f"not a rules file: {exc.msg}") from None
    rules: list[PrefixRule] = []
    others: list[Other] = []
    network: list[NetworkRule] = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
            else None
        if isinstance(call, ast.Call) and name == "prefix_rule":
            rules.append(_rule(call, shown))
            continue
        if isinstance(call, ast.Call) and name == "network_rule" and \
                (found := _network_rule(call)) is not None:
            network.append(found)
            continue
        what = ast.get_source_segment(text, node) or type(node).__name__
        first = what.splitlines()[0][:60]
        if name in NOT_RULES or isinstance(call, ast.Constant):
            others.append(Other(f"line {node.lineno}: {first!r}: only prefix_rule is imported"))
        else:   # a loop, a variable, load(), an unknown call: it may make rules we never see
            others.append(Other(f"line {node.lineno}: {first!r}: only prefix_rule calls are "
                                "read, and this may make rules (a forbidden one among them)",
                                may_deny=True))
    return rules, others, network


def import_codex(path: Path) -> Imported:
    shown, text = read_source(path)
    out = Imported(shown, "codex", header=[
        f"Imported by `dm_cc policy import codex` from {shown}.",
        "Codex picks the strictest matching rule (forbidden > prompt > allow); dm_cc's",
        "last matching rule wins, so allows come first, then asks, then denies.",
        "A prefix rule [a, b] is the shell pattern 'a b *' (a b, or a b and more words).",
    ])
    rules, others, network = parse_file(text, shown)
    for other in others:
        out.unsaid(out.rules, "deny" if other.may_deny else None, other.message,
                   says_nothing=not other.may_deny)
    for decision in ORDER:
        for rule in (r for r in rules if r.decision == decision):
            _add(out, rule)
    for action in ("allow", "ask", "deny"):
        for net in (n for n in network if n.decision == action):
            _add_network(out, net)
    _reviewers(out, text)
    _tests(out, rules)
    return out


def _add_network(out: Imported, rule: NetworkRule) -> None:
    """A network_rule as dm_cc's ``network`` rules for its host on any port. Codex's
    rule names one protocol, dm_cc's every one: a deny or ask is kept (wider), an
    allow is left out (it would open the host's other protocols too)."""
    what = f"line {rule.line}: {rule.source}"
    if rule.decision == "allow":
        out.drop(out.rules, f"{what}: a Codex network allow names one protocol; dm_cc's "
                            "network rules cover every protocol of a host")
        return
    out.rules.append(Entry("network", rule.host, rule.decision, comment=what))
    out.rules.append(Entry("network", f"{rule.host}:*", rule.decision))


def _reviewers(out: Imported, text: str) -> None:
    """``reviewer`` (who answers a prompt rule: the user or Codex's auto-review) is
    not imported: dm_cc asks the person, which is never looser."""
    if "reviewer" in text and any(
            isinstance(node, ast.keyword) and node.arg == "reviewer"
            for node in ast.walk(ast.parse(text))):
        out.unused("reviewer", "who answers a Codex prompt; dm_cc's ask always asks the "
                               "person")


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
        if action != "allow":   # tokens are argument values: their quotes are text
            pattern = denial_pattern(pattern, shell_text=False)
        out.rules.append(Entry("bash", pattern, action,
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
