"""THE settle path: every decision dm_cc enforces goes through here, once.

    settle = Settle(rights, approver, where=…, on_event=…, audit_log=…)
    settled = await settle(call, tool, params, requests, ctx)     # decide, then settle
    if settled.runs: …                                            # the caller acts on it

In order, for a call's requests:

1. **decide**: the gate's decision (:class:`~dm_cc.core.rights.Rights`), the decision
   hooks of the policy it decides with combined into it (:mod:`dm_cc.core.hooks`),
   and a :class:`ToolDecided` event;
2. **settle**: an outright allow or deny is recorded in the audit log; an ``ask``
   is put to the Approver with what "always" would remember, the answer recorded
   and, for session/always, remembered. A cancel (Ctrl-C at the question) stops the
   turn here (:class:`TurnStopped`); a rejection is returned for the caller to say.

What the caller does with the outcome is its own: the loop runs an allowed call,
or tells the model the denial (:func:`denial_message`) or the person's feedback,
and ends the turn when the person said no without a word (:attr:`Settled.stops`).
The first decision about a call and the sandbox escape (running a stopped command
outside) are both calls of this path; a new kind of decision is another call of
it, never a copy (docs/architecture.md, "One settle path").

When every call of a reply is allowed the loop runs them at once, so it decides
all of a reply's calls first (:meth:`Settle.decide`) and settles each after
(:meth:`Settle.settle`); everything else calls the whole path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from dm_cc.core import audit
from dm_cc.core.approval import (
    REMEMBERING,
    RUNNING,
    Approval,
    ApprovalRequest,
    Approver,
    AskFailed,
    asks_a_person,
    suggested_for,
)
from dm_cc.core.events import Event, Notice, ToolDecided
from dm_cc.core.hooks import CallFacts, consult_hooks, failure_for
from dm_cc.core.rights import Rights
from dm_cc.permissions import Decision, PathContextDirs, Request, Rule
from dm_cc.policy import HOOK_LAYER, Hook
from dm_cc.session import AuditLog, ToolCall
from dm_cc.tools import Tool, ToolContext

DecisionListener = Callable[[dict[str, Any]], str | None]
"""Handed each decision's audit record (:func:`dm_cc.core.audit.record`) once its
outcome is known; returns a notice to tell, or None. It must not block nor raise."""


class TurnStopped(Exception):
    """Ends the turn; ``reason`` (done, max_turns, rejected, cancelled) is reported
    in :class:`~dm_cc.core.events.TurnEnded`."""

    def __init__(self, reason: str, text: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


@dataclass(frozen=True, slots=True)
class Judged:
    """A call and what was decided about it (before the question, if any)."""

    call: ToolCall
    tool: Tool[Any]
    params: BaseModel
    decision: Decision


@dataclass(frozen=True, slots=True)
class Settled:
    """What happens to a call: the decision, and the answer when it asked."""

    decision: Decision
    answer: Approval | None = None

    @property
    def runs(self) -> bool:
        """Allowed by the rules, or by the person's (or a headless run's) answer."""
        if self.answer is not None:
            return self.answer.answer in RUNNING
        return self.decision.action == "allow"

    @property
    def feedback(self) -> str | None:
        """What the person said when they rejected it."""
        return self.answer.feedback if self.answer is not None else None

    @property
    def stops(self) -> bool:
        """The person said no without a word: the turn ends after this call."""
        return self.answer is not None and self.answer.answer == "reject" \
            and not self.answer.feedback


class Settle:
    """The settle path of one session (see the module docstring). ``label`` names a
    subagent where it asks (``explore #2``; "" for the session's own)."""

    def __init__(self, rights: Rights, approver: Approver, *, where: PathContextDirs,
                 on_event: Callable[[Event], None], audit_log: AuditLog | None = None,
                 listeners: Sequence[DecisionListener] = (), label: str = "") -> None:
        self.rights = rights
        self.approver = approver
        self.where = where
        self.on_event = on_event
        self.audit_log = audit_log
        self.listeners = listeners
        self.label = label

    @property
    def hooks(self) -> tuple[Hook, ...]:
        """The decision hooks of the policy the rights decide with: a policy read again
        mid-session (``/permissions``) brings its hooks with its rules."""
        return self.rights.policy.hooks

    async def __call__(self, call: ToolCall, tool: Tool[Any], params: BaseModel,
                       requests: Sequence[Request], ctx: ToolContext, *,
                       stopped: str = "") -> Settled:
        """Decide and settle ``requests`` of ``call`` (``stopped``: what a confined run
        printed, shown with a sandbox escape's question)."""
        decision = await self.decide(call, tool, requests)
        return await self.settle(Judged(call, tool, params, decision), ctx, stopped=stopped)

    async def decide(self, call: ToolCall, tool: Tool[Any],
                     requests: Sequence[Request]) -> Decision:
        """The gate's decision with the decision hooks' answers; told as an event."""
        decision = await self.hooked(call, tool, self.rights.gate().decide(requests))
        self.on_event(ToolDecided(call, decision))
        return decision

    async def hooked(self, call: ToolCall, tool: Tool[Any], decision: Decision) -> Decision:
        """``decision`` (about ``call``) with the decision hooks' answers combined into
        its verdicts, in their order (a command's changes are judged so too)."""
        arguments = call.arguments or {}
        facts = CallFacts(call.name, tool.entry.main_text(arguments), arguments,
                          self.rights.agent.name, self.rights.session.info.id,
                          str(self.where.cwd))
        return await consult_hooks(decision, self.hooks, self.rights.gate(),
                                   facts, failure=failure_for(self.approver))

    async def settle(self, judged: Judged, ctx: ToolContext, *, stopped: str = "",
                     changes: str = "") -> Settled:
        """Record an outright decision, or put the question and handle the answer
        (``changes``: a command's changes the question is about, :mod:`dm_cc.core.effects`:
        such a question remembers nothing -- a rule kept from it would let any later
        command or tool make the change unasked -- and no earlier answer settles it, as
        a conflict's requests are all allowed)."""
        if judged.decision.action != "ask":
            self._audit(judged)
            return Settled(judged.decision)
        request = replace(self.question(judged, ctx), stopped=stopped, changes=changes)
        if changes:  # what a command did: these changes only, answered by the person now
            request = replace(request, suggestions=(), settled=lambda: False)
        try:
            approval = await self.approver.approve(request)
        except AskFailed:
            self._audit(judged, by="headless_default", answer="fail")
            raise
        except asyncio.CancelledError:  # the turn ended while the question was open
            self._audit(judged, by="cancelled", answer="cancel")
            raise
        self._audit(judged, approval)
        if approval.answer == "cancel":
            raise TurnStopped("cancelled", "")
        if approval.answer in REMEMBERING:
            if approval.answer == "always":
                self.durable()   # the answer is on disk before the approval it saves
            self.rights.approvals.remember(
                self.rights.agent.name, request.kept(approval), save=approval.answer == "always",
                note=f"approved for {judged.call.name} in session {self.rights.session.info.id}")
        return Settled(judged.decision, approval)

    def question(self, judged: Judged, ctx: ToolContext) -> ApprovalRequest:
        """What the person is shown: the call, why it asks, and what "always" would
        remember -- only rules that would in fact allow the request they were suggested
        for next time; none for an approver no person answers (headless: a call with
        thousands of requests must not pay for a question nobody reads)."""
        call, decision = judged.call, judged.decision
        arguments = dict(call.arguments or {})
        rights = self.rights
        approvals = rights.approvals.rules(rights.agent.name)
        requests = [v.request for v in decision.verdicts]
        # a hook's ask comes back whatever was approved: nothing to remember for it
        asking = [v.request for v in decision.verdicts
                  if v.action == "ask" and v.layer != HOOK_LAYER]
        hooked = any(v.layer == HOOK_LAYER and v.action != "allow"
                     for v in decision.verdicts)

        def allows(rule: Rule, these: Iterable[Request]) -> bool:
            # judged by the real gate: ceilings, managed rules
            gate = rights.gate_with((*approvals, rule))
            return any(gate.judge(request).action == "allow" for request in these)

        def covers(rule: Rule) -> bool:  # an edited rule: any request of its permission
            return allows(rule, (r for r in asking if r.permission == rule.permission))

        # each suggestion judged on the requests it was suggested for (once each:
        # linear in the call's requests), and none when nobody will answer
        suggestions = tuple(rule for rule, origins in suggested_for(asking, call.name).items()
                            if allows(rule, origins)) if asks_a_person(self.approver) else ()
        description = arguments.get("description")
        return ApprovalRequest(
            call.name, arguments, decision, judged.tool.preview(judged.params, ctx),
            agent=rights.agent.name, asker=self.label,
            description=description if isinstance(description, str) else "",
            main_input=judged.tool.entry.main_text(arguments), suggestions=suggestions,
            covers=covers, call_id=call.id,
            settled=lambda: not hooked and rights.gate().decide(requests).action == "allow")

    def record(self, judged: Judged) -> None:
        """Record an outright decision taken after the call ran (a command's changes a
        rule denied: :mod:`dm_cc.core.effects`)."""
        self._audit(judged)

    def durable(self, *, head: bool = False) -> None:
        """Make every decision recorded so far durable (one fsync for all of them):
        before anything a decision lets happen; ``head`` at the end of a reply, when
        the log's head is brought up to them too (docs/audit.md, "When a decision is durable")."""
        if self.audit_log is not None:
            audit.sync(self.audit_log, self.on_event, head=head)

    async def before_effects(self) -> None:
        """Write-ahead: the decisions recorded so far are durable before a call acts.
        When a reply's calls run at once, each is recorded and then waits here one
        turn of the event loop, so the others are recorded too and the first to go
        on makes them all durable with one fsync (the rest find nothing to do)."""
        if self.audit_log is not None and self.audit_log.unsynced:
            await asyncio.sleep(0)
            self.durable()

    def _audit(self, judged: Judged, approval: Approval | None = None, *,
               by: str | None = None, answer: str | None = None) -> None:
        """Record a decision once its outcome is known (core/audit.py): in the audit
        log, and handed to each listener (the telemetry exporter) -- one record for both."""
        if self.audit_log is None and not self.listeners:
            return
        decision = judged.decision
        if approval is not None and approval.by == "approval":  # covered by an answer meanwhile
            by = audit.decided_by(self.rights.gate().decide(v.request for v in decision.verdicts))
        rights = self.rights
        actor = audit.Actor(str(self.where.root), rights.session.info.id, rights.root_session,
                            rights.agent.name, self.label)
        main_input = judged.tool.entry.main_text(judged.call.arguments or {})
        entry = audit.record(actor, judged.call, main_input, decision, approval, by=by,
                             answer=answer)
        if self.audit_log is not None:
            audit.write(self.audit_log, entry, self.on_event, audit.full_requests(decision))
        for listener in self.listeners:
            if (notice := listener(entry)) is not None:
                self.on_event(Notice(notice))


def rule_said(rule: Rule) -> str:
    """A rule as the model is told it decided: ``rule `deny bash rm *` at FILE:LINE:
    reason``."""
    return (f"rule `{rule.action} {rule.permission} {rule.pattern}` at {rule.source}"
            + (f": {rule.reason}" if rule.reason else ""))


def denial_message(tool: str, decision: Decision) -> str:
    """What the model is told of a denied call: each deciding rule, where it is
    written and why, and not to retry."""
    lines = [f"Permission denied: {tool} was not run."]
    for verdict in decision.deciding:
        lines.append(f"- {verdict.request.permission} {verdict.request.pattern!r} is denied by "
                     + rule_said(verdict.rule) + (f" ({verdict.note})" if verdict.note else ""))
    lines.append("Do not retry this; find another way or explain to the user what is needed.")
    return "\n".join(lines)
