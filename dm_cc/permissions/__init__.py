"""The permission engine: pure, synchronous, no I/O, imports nothing else from dm_cc.

    >>> from dm_cc.permissions import Rule, evaluate
    >>> evaluate("bash", "git push", [Rule("bash", "git *", "allow"), Rule("bash", "git push *", "ask")]).action
    'ask'

``evaluate`` finds the deciding rule (:mod:`engine`); a :class:`Gate` over ordered
layers decides request sets (:mod:`gate`), and ``decide(requests, *rulesets)`` is a
gate over plain rulesets. :mod:`requests` turns what a tool call names into
requests, by kind; :mod:`shell` analyses command lines.
"""

from dm_cc.permissions.engine import Ruleset, evaluate
from dm_cc.permissions.gate import Candidate, Ceiling, Decision, Gate, Layer, Verdict, combine, decide, stricter
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.patterns import PathContext
from dm_cc.permissions.requests import path_requests
from dm_cc.permissions.rules import ACTIONS, DEFAULT_RULE, NETWORK, Action, Request, Rule
from dm_cc.permissions.urls import url_names

__all__ = [
    "ACTIONS",
    "DEFAULT_RULE",
    "NETWORK",
    "Action",
    "Candidate",
    "Ceiling",
    "Decision",
    "Gate",
    "Layer",
    "PathContext",
    "PathContextDirs",
    "Request",
    "Rule",
    "Ruleset",
    "Verdict",
    "combine",
    "decide",
    "evaluate",
    "path_requests",
    "stricter",
    "url_names",
]
