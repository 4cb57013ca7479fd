"""The permission engine: pure, synchronous, no I/O, imports nothing else from dm_cc.

    >>> from dm_cc.permissions import Rule, evaluate
    >>> evaluate("bash", "git push", [Rule("bash", "git *", "allow"), Rule("bash", "git push *", "ask")]).action
    'ask'
"""

from dm_cc.permissions.engine import Decision, Ruleset, Verdict, decide, evaluate, judge, stricter
from dm_cc.permissions.patterns import PathContext
from dm_cc.permissions.rules import ACTIONS, DEFAULT_RULE, Action, Request, Rule

__all__ = [
    "ACTIONS",
    "DEFAULT_RULE",
    "Action",
    "Decision",
    "PathContext",
    "Request",
    "Rule",
    "Ruleset",
    "Verdict",
    "decide",
    "evaluate",
    "judge",
    "stricter",
]
