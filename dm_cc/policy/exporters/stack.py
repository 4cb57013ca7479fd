"""Which dm_cc rules an export writes: one ordered list, last match wins.

The other tools do not have dm_cc's built-in defaults (their own are looser in
places: opencode allows most tools, Gemini CLI reads anywhere), so every export
starts with them -- reads in the project allowed, ``.env*`` asks, edits and most
commands ask -- and ends with dm_cc's guardrails (``rm -rf /`` and the like): what
dm_cc decides, said in the target's terms.

* :func:`file_rules`: the given policy files on the defaults, as ``--policy``
  files alone would stack (their ``agents:`` overrides are for one agent: said,
  not written).
* :func:`stack_rules`: the layers in force for an agent, as ``dm_cc policy show``
  composes them, without the person's saved approvals and auto mode (a person's
  answers are not a team's policy). A repository's rules may tighten anywhere but
  loosen only what no rule of the person's own or the organisation's decides, and
  never beyond the project: so its allows are written before the first rule of
  the person's own or the organisation's (every such rule still wins over them),
  and its allows of what reaches beyond the project are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from dm_cc.permissions import REPOSITORY, Gate, Rule
from dm_cc.policy.defaults import DEFAULT_RULES, guardrail_rules
from dm_cc.policy.exporters.model import describe, permission_overlaps
from dm_cc.policy.layers import GUARDRAILS_LAYER
from dm_cc.policy.loader import PolicyFile


def file_rules(files: Sequence[PolicyFile]) -> tuple[list[Rule], list[str]]:
    """The defaults, the files' rules in order, the guardrails; and what is not
    written (each file's ``agents:`` overrides)."""
    notes = [f"{f.path}: agents.{name}: not exported (rules for one dm_cc agent; export "
             f"the project's stack with --agent {name} instead)"
             for f in files for name in f.agents]
    rules = [*DEFAULT_RULES, *(rule for f in files for rule in f.rules), *guardrail_rules()]
    return rules, notes


def stack_rules(gate: Gate) -> tuple[list[Rule], list[str], list[str]]:
    """The gate's layers as one list; what is left out (notes), and what cannot be
    left out without loosening (refused: the agent's own bounds). A repository's
    allows stay in place until a rule of the person's own or the organisation's
    has come (the managed base is usually empty); after that they are written
    before the first such rule, which they may not override."""
    notes: list[str] = []
    placed: list[Rule] = []
    anchor: int | None = None      # where a person's first rule is: a repository's allows go before
    moved = 0
    for layer in gate.layers:
        if layer.name == GUARDRAILS_LAYER:      # without the home directory spelled out
            layer = layer._replace(rules=guardrail_rules())
        if layer.origin == "untrusted" and layer.rules:
            notes.append(f"[{layer.name}]: the project's files are not trusted, so their allow "
                         "rules say nothing (dm_cc trust): only their deny and ask rules are "
                         "exported")
        if layer.approvals:
            if layer.rules:
                notes.append(f"[{layer.name}]: {len(layer.rules)} rule(s) not exported "
                             "(approvals and auto mode are the person's, not the policy's)")
            continue
        if layer.origin not in REPOSITORY:
            if layer.origin != "builtin" and layer.rules and anchor is None:
                anchor = len(placed)
            placed += layer.rules
            continue
        for rule in layer.rules:
            if rule.action != "allow":
                placed.append(rule)
            elif _reaches(rule, gate.reaching):
                notes.append(f"{describe(rule)}: not exported (a project's allow never opens "
                             "what reaches beyond the project in dm_cc)")
            elif anchor is None:
                placed.append(rule)
            else:
                placed.insert(anchor, rule)
                anchor += 1
                moved += 1
    if moved:
        notes.append(f"{moved} allow rule(s) of the project's files written before the first "
                     "rule of your own or the managed policy (a project's allow never "
                     "overrides those)")
    refused = [f"[{layer.name}]: {why}: the agent's bounds are not exported (export as an "
               "agent without them, e.g. --agent build)" for layer, why in gate.bounds()]
    return placed, notes, refused


def _reaches(rule: Rule, reaching: frozenset[str]) -> bool:
    """Whether an allow may open what reaches beyond the project: a permission that
    does, or a path outside it."""
    if any(permission_overlaps(rule.permission, p) for p in reaching):
        return True
    return rule.pattern.startswith(("/", "~", "../")) or "/../" in rule.pattern
