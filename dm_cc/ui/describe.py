"""Decisions, rules and layers as plain lines: what ``dm_cc policy check|show``,
the REPL's ``/why`` and ``/permissions`` and the approval question print.

Plain text only (no prompt_toolkit): the light commands import this too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from dm_cc.permissions import Decision, Gate, Rule, Verdict
from dm_cc.policy import AUTO_LAYER, Hook

#: What auto mode's allow means, by what was asked (a command's, whatever it writes).
AUTO_MEANS = {"bash": "runs confined, effects judged", "edit": "undo covers it"}


def rule_text(rule: Rule) -> str:
    """``ask bash "git push *" at .dm_cc/policy.yaml:5``."""
    return f'{rule.action} {rule.permission} "{rule.pattern}" at {rule.source}'


def verdict_text(verdict: Verdict) -> str:
    """One request and why: ``bash "git push origin" ← ask bash "git push *" at f:5``."""
    return f'{verdict.request.permission} "{verdict.request.pattern}" ← {rule_text(verdict.rule)}'


def trace_lines(decision: Decision) -> Iterator[str]:
    """Every request of a decision with its rule, the rule's reason and any note."""
    for v in decision.verdicts:
        yield f"  {v.action:<5} {v.request.permission} {v.request.pattern}"
        if v.name != v.request.pattern:
            yield f"        (as {v.name})"
        yield f"        rule: {v.rule.describe()}" + (f"  [layer {v.layer}]" if v.layer else "")
        if v.note:
            yield f"        note: {v.note}"


def auto_mode_text(decision: Decision, without: Decision) -> str | None:
    """What an allow of the auto layer means (``runs confined, effects judged``; for
    an edit ``undo covers it``) when it is all that allows: ``without`` (the decision
    where commands do not run as transactions, the auto layer empty) is not an allow.
    None when auto mode changes nothing about ``decision``."""
    if decision.action != "allow" or without.action == "allow":
        return None
    asked = {v.request.permission for v in decision.verdicts}   # a command's writes are its own
    return next((means for permission, means in AUTO_MEANS.items() if permission in asked),
                "auto mode")


def hooks_lines(hooks: Sequence[Hook]) -> Iterator[str]:
    """What ``policy check`` says of the decision hooks it ran (docs/hooks.md)."""
    if not hooks:
        return
    yield (f"hooks: {len(hooks)} in the policy; those matching a request were run now, as a "
           "session runs them (a failed hook counts as ask; in a headless run, deny; "
           "--no-hooks leaves them out)")
    for hook in hooks:
        yield f"  {hook.permission} {hook.pattern!r}: {hook.shown}  [{hook.layer}]"


def tree_indent(depth: int) -> str:
    """What leads a line of a tree at ``depth`` (a subagent's session under its
    parent's): nothing at the top, `` └ `` under it, three spaces more per level."""
    return "   " * (depth - 1) + " └ " if depth else ""


def layer_lines(gate: Gate) -> Iterator[str]:
    """The effective rules, layer by layer, in order (later wins); then the bounds no
    layer can overrule."""
    for layer in gate.layers:
        if layer.origin == "untrusted":
            yield f"[{layer.name}] (not trusted: its allow rules are left out; dm_cc trust --show)"
        elif not layer.rules:
            continue
        elif layer.origin == "repository":
            yield f"[{layer.name}] (trusted: opens nothing beyond the project)"
        elif layer.name == AUTO_LAYER:
            yield (f"[{layer.name}] (where commands run as transactions; like an approval, "
                   "it turns an ask into an allow, never a configured deny nor a managed rule)")
        else:
            yield f"[{layer.name}]"
        yield from _rule_lines(layer.rules)
    for layer, why in gate.bounds():
        yield f"[{layer.name}] bounds every layer above: {why}"
        yield from _rule_lines(layer.rules)


def _rule_lines(rules: Iterable[Rule]) -> Iterator[str]:
    for rule in rules:
        reason = f"  # {rule.reason}" if rule.reason else ""
        yield (f"  {rule.action:<5} {rule.permission:<12} {rule.pattern!r:<28} "
               f"{rule.source}{reason}")
