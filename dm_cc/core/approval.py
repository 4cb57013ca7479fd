"""The Approver seam: who answers when a decision is ``ask``.

Implementations: the REPL's prompt (interactive), :class:`HeadlessApprover`
(``dm_cc run --on-ask deny|fail``) and :class:`ScriptedApprover` (tests). An
approver only answers; the loop applies the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from dm_cc.errors import DmccError
from dm_cc.permissions import Decision, Request, Rule
from dm_cc.permissions.rules import language_of

Answer = Literal["once", "always", "reject"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked about: the tool call, why it asks, what it would do."""

    tool: str
    arguments: dict[str, Any]
    decision: Decision
    preview: str | None = None

    @property
    def asking(self) -> tuple[Request, ...]:
        """The requests that made this an ask."""
        return tuple(v.request for v in self.decision.verdicts if v.action == "ask")

    def always_rules(self) -> tuple[Rule, ...]:
        """The rules "always allow" would add: the arity-table suggestion for shell
        commands, the exact pattern for everything else and for requests with
        sensitive tokens (a prefix would not name them, and would not stick).

        A request whose text holds the pattern language's wildcards (a literal
        `*.tmp`, a path `.env*`, a URL with `?`) gets no rule: as a pattern it would
        allow more than what was asked."""
        rules = []
        for request in self.asking:
            if not request.allowable:
                continue
            exact = request.pattern if request.sensitive else None
            pattern = exact or request.always or request.pattern
            literal = pattern[:-2] if pattern == request.always and pattern.endswith(" *") \
                else pattern
            if any(ch in literal for ch in _WILDCARDS[language_of(request.permission)]):
                continue
            rules.append(Rule(request.permission, pattern, "allow",
                              reason=f"approved for {self.tool}", source="approval:session"))
        return tuple(dict.fromkeys(rules))


_WILDCARDS = {"path": "*?[]{}", "shell": "*?", "name": "*?"}


@dataclass(frozen=True, slots=True)
class Approval:
    answer: Answer
    feedback: str | None = None


class Approver(Protocol):
    async def approve(self, request: ApprovalRequest) -> Approval: ...


class AskFailed(DmccError):
    """``--on-ask fail``: a headless run reached a decision that needs a person."""

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request
        reasons = "; ".join(f"{v.request.permission} {v.request.pattern!r} ({v.rule.source})"
                            for v in request.decision.verdicts if v.action == "ask")
        super().__init__(f"{request.tool} needs approval and this run cannot ask: {reasons}")


HEADLESS_FEEDBACK = ("This needs the user's approval and this run is headless (--on-ask deny), "
                     "so it was not done. Do not retry it; continue without it or explain.")


@dataclass
class HeadlessApprover:
    """No person to ask: deny every ask (the model is told), or fail the run."""

    on_ask: Literal["deny", "fail"] = "deny"

    async def approve(self, request: ApprovalRequest) -> Approval:
        if self.on_ask == "fail":
            raise AskFailed(request)
        return Approval("reject", HEADLESS_FEEDBACK)


@dataclass
class ScriptedApprover:
    """Answers from a script, in order; records what it was asked."""

    answers: list[Approval] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    def __init__(self, answers: Iterable[Approval | Answer] = ()) -> None:
        self.answers = [a if isinstance(a, Approval) else Approval(a) for a in answers]
        self.asked = []

    async def approve(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected approval request for {request.tool}")
        return self.answers.pop(0)


def summarize(verdicts: Sequence) -> str:
    return "; ".join(f"{v.request.permission} {v.request.pattern!r}: {v.rule.describe()}"
                     for v in verdicts)
