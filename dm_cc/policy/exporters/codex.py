"""A dm_cc policy → Codex ``.rules`` (execpolicy ``prefix_rule`` calls).

Codex's rules judge shell commands only, by their first tokens, and the strictest
matching rule wins (forbidden > prompt > allow); a command no rule matches is left
to Codex's approval policy. So only ``bash`` rules (and ``*`` rules' effect on
commands) are written; every other rule decides nothing in a rules file and is
said. A dm_cc allow is written only when it is a prefix (``git status *``: the
words, then anything); a deny or ask is written as the literal words it starts
with (``git * main`` → ``["git"]``: wider). As in Claude Code, a deny or ask beats
every allow, so the file is never looser than the policy where the policy's rules
decide; the policy's first ``* * ask`` is Codex's own default (it asks).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dm_cc.permissions import Rule
from dm_cc.policy.exporters.model import (
    Exported,
    SaysNothing,
    Unexpressible,
    catch_all,
    leading_words,
    literal_words,
    omissible_ask,
    prefix_words,
    said,
)

DECISIONS = {"allow": "allow", "ask": "prompt", "deny": "forbidden"}
ORDER = ("allow", "ask", "deny")


def _is_shell(permission: str) -> bool:
    return permission in ("bash", "*")


def codex_tokens(rule: Rule) -> list[tuple[str, ...]]:
    """The token prefix of one dm_cc rule, as a one-item list (the shape ``said`` takes)."""
    if not _is_shell(rule.permission):
        if "*" in rule.permission and not rule.permission.startswith("mcp__"):
            raise SaysNothing("a Codex rules file judges shell commands only: its effect "
                              "on other tools is not written")
        raise SaysNothing("a Codex rules file judges shell commands only")
    pattern = rule.pattern
    if rule.action == "allow":
        words = prefix_words(pattern)
        if words is None:
            if literal_words(pattern) is not None:
                raise Unexpressible("a Codex prefix rule also matches longer commands; this "
                                    "allow is of the exact command")
            raise Unexpressible("a Codex rule is a prefix of tokens, without wildcards")
        return [tuple(words)]
    words = literal_words(pattern) or prefix_words(pattern)
    if words is None:
        raise Unexpressible("a Codex rule is a prefix of tokens, without wildcards")
    return [tuple(words)]


def _wider(rule: Rule) -> list[tuple[str, ...]]:
    words = leading_words(rule.pattern)
    return [tuple(words)] if words else []


def export_codex(rules: Sequence[Rule]) -> Exported:
    out = Exported("codex")
    rules = list(rules)
    chosen: dict[str, list[tuple[tuple[str, ...], Rule]]] = {a: [] for a in ORDER}
    for index, rule in enumerate(rules):
        if index == 0 and catch_all(rule) and rule.action == "ask":
            continue               # Codex asks, by its approval policy, what no rule decides
        tokens = said(out, rule, codex_tokens, _wider,
                      default_asks=omissible_ask(rules, index))
        for prefix in tokens:
            if all(prefix != seen for seen, _ in chosen[rule.action]):
                chosen[rule.action].append((prefix, rule))
    lines = ["# Written by `dm_cc policy export codex`. Codex takes the strictest matching",
             "# rule (forbidden > prompt > allow); commands no rule matches are left to its",
             "# approval policy.", ""]
    for action in ORDER:
        for prefix, rule in chosen[action]:
            lines.append(f"# {rule.action} bash {rule.pattern!r}"
                         + (f" ({rule.source})" if rule.source not in ("inline", "") else ""))
            lines.append(f"prefix_rule(pattern={json.dumps(list(prefix))}, "
                         f"decision={json.dumps(DECISIONS[action])})")
    out.text = "\n".join(lines) + "\n"
    return out
