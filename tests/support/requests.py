"""Requests and matches as the product makes them, for tests that write requests by
hand: a request carries the pattern language of what it names, which the product
takes from the tool catalog (a path for read and edit, a command for bash, a URL
for webfetch), so these do the same.

    from support.requests import Request, evaluate    # in place of dm_cc.permissions'
"""

from __future__ import annotations

from typing import Any

from dm_cc.permissions import Request as _Request
from dm_cc.permissions import Rule
from dm_cc.permissions import evaluate as _evaluate
from dm_cc.permissions.engine import RulesetLike
from dm_cc.tools.catalog import language_of


def Request(permission: str, pattern: str, **fields: Any) -> _Request:  # noqa: N802 - a stand-in
    """A request of ``permission`` in its catalog language (unless ``language`` is given)."""
    fields.setdefault("language", language_of(permission))
    return _Request(permission, pattern, **fields)


def evaluate(permission: str, pattern: str, *rulesets: RulesetLike) -> Rule:
    """The public ``evaluate`` with ``permission``'s catalog language."""
    return _evaluate(permission, pattern, *rulesets, language=language_of(permission))
