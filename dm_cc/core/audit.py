"""What the loop writes to the audit log for each decision it enforces (docs/audit.md).

    record(actor, call, main_input, decision, approval) -> dict   one decision
    write(log, record, on_event, full)                      appended; trouble told once
    sync(log, on_event)                                     durable; before any effect

A call with more than :data:`FULL_UP_TO` requests (one command can yield
thousands) gets a bounded record: how many requests there were and how many of
each verdict, its deciding requests and its first ones (at most :data:`SHOWN`,
each with its ``index``); :func:`full_requests` is the whole list, which the log
keeps once, as a line of its own just before the record (docs/audit.md).

``decided_by`` says who settled the call:

    rule               the rules allowed or denied it outright
    saved_approval     an allow decided by a saved "always" approval
    session_approval   an allow decided by an approval given earlier in this process
    hook               a decision hook decided it (a verdict whose layer is "hook")
    person_once | person_session | person_always | person_reject | person_cancel
                       the rules asked and the person answered
    headless_default   the rules asked and a headless run answered (--on-ask deny|fail)
    cancelled          the rules asked and the turn was cancelled before an answer

A log that cannot be written never stops the session: the first failure is a
:class:`Notice`, and when writing works again a second one says how many
decisions were not recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from dm_cc.core.approval import RUNNING, Approval
from dm_cc.core.events import Event, Notice
from dm_cc.errors import DmccError
from dm_cc.permissions import Decision, Verdict
from dm_cc.policy import APPROVALS_LAYER, HOOK_LAYER
from dm_cc.session import AuditLog, ToolCall

SAVED_SOURCE = "approval:apr_"
FULL_UP_TO = 50   # requests a record lists in full; a call with more is summarised
SHOWN = 20        # requests a summarised record lists: its deciding ones, then its first


def decided_by(decision: Decision, approval: Approval | None = None) -> str:
    """Who settled a call decided ``decision`` (and answered ``approval`` if it asked)."""
    if approval is not None:
        if approval.by == "headless":
            return "headless_default"
        if approval.by == "person":
            return f"person_{approval.answer}"
    deciding = decision.deciding
    if any(v.layer == HOOK_LAYER for v in deciding):
        return "hook"
    if decision.action == "allow":
        approved = [v for v in deciding if v.layer == APPROVALS_LAYER]
        if any(v.rule.source.startswith(SAVED_SOURCE) for v in approved):
            return "saved_approval"
        if approved:
            return "session_approval"
    return "rule"


def _verdict(verdict: Verdict) -> dict[str, Any]:
    rule = verdict.rule
    return {"permission": verdict.request.permission, "pattern": verdict.request.pattern,
            "decision": verdict.action,
            "rule": {"action": rule.action, "permission": rule.permission,
                     "pattern": rule.pattern},
            "source": rule.source, "reason": rule.reason, "layer": verdict.layer,
            "note": verdict.note}


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


class Actor(NamedTuple):
    """Who acted: the project, the session and the session at the top of its lineage,
    the agent in charge, and a subagent's label (``explore #2``; "" for a session's own)."""

    project: str
    session: str
    root_session: str
    agent: str
    subagent: str = ""


def record(actor: Actor, call: ToolCall, main_input: str, decision: Decision,
           approval: Approval | None = None, *, by: str | None = None,
           answer: str | None = None) -> dict[str, Any]:
    """One decision as the audit log keeps it. ``main_input`` is the call's main input as a
    person reads it; ``decision`` is the gate's; the call ran (``decision`` allow) or
    not (deny). ``by`` and ``answer``: who decided and what was answered, when there
    is no ``approval`` to tell (a failed or cancelled question)."""
    ran = decision.action == "allow" or (
        approval is not None and approval.answer in RUNNING)
    return {
        "time": _now(),
        "project": actor.project,
        "session": actor.session,
        "root_session": actor.root_session,
        "agent": actor.agent,
        "subagent": actor.subagent,
        "tool": call.name,
        "call_id": call.id,
        "input": main_input,
        "gate": decision.action,
        "decision": "allow" if ran else "deny",
        "decided_by": by or decided_by(decision, approval),
        "answer": approval.answer if approval is not None else answer,
        "feedback": approval.feedback if approval is not None else None,
        **_requests(decision),
        "pid": os.getpid(),
    }


def _requests(decision: Decision) -> dict[str, Any]:
    """A record's ``requests``: all of them, or for a call with more than FULL_UP_TO
    a bounded summary -- the total, a count per verdict, and the deciding requests
    then the first ones (SHOWN at most, in the call's order, each with its index)."""
    verdicts = decision.verdicts
    if len(verdicts) <= FULL_UP_TO:
        return {"requests": [_verdict(v) for v in verdicts]}
    deciding = [i for i, v in enumerate(verdicts) if v.action == decision.action][:SHOWN // 2]
    shown = set(deciding)
    first = iter(range(len(verdicts)))
    while len(shown) < SHOWN:
        shown.add(next(first))
    counts = {action: 0 for action in ("allow", "ask", "deny")}
    for verdict in verdicts:
        counts[verdict.action] = counts.get(verdict.action, 0) + 1
    return {"requests": [{**_verdict(verdicts[i]), "index": i} for i in sorted(shown)],
            "requests_total": len(verdicts), "requests_by_verdict": counts}


def full_requests(decision: Decision) -> list[dict[str, Any]] | None:
    """Every request of a call whose record is summarised, to be kept once beside it;
    None when the record lists them all."""
    if len(decision.verdicts) <= FULL_UP_TO:
        return None
    return [_verdict(v) for v in decision.verdicts]


def write(log: AuditLog, entry: dict[str, Any], on_event: Callable[[Event], None],
          full: list[dict[str, Any]] | None = None) -> None:
    """Append ``entry`` (and ``full``, its call's whole request list when the entry
    summarises it: :func:`full_requests`), not yet durable (:func:`sync`); a failure
    is told once (never raised), as is a log set aside."""
    try:
        appended = log.append(entry, full)
    except (DmccError, OSError) as exc:
        _failed(log, exc, on_event)
        return
    if appended.notice is not None:
        on_event(Notice(appended.notice))
    if log.failed:
        lost, log.failed = log.failed, 0
        on_event(Notice(f"audit log written again; {lost} decision{'' if lost == 1 else 's'} "
                        "before this one were not recorded."))


def sync(log: AuditLog, on_event: Callable[[Event], None], *, head: bool = True) -> None:
    """Make the decisions written so far durable: called before anything a decision
    lets happen (a tool runs, changes land, an approval is saved; ``head`` False:
    the head waits) and at the end of each reply, so a reply's calls share one
    fsync. A failure is told once: the records are in the file, but a machine that
    goes down may lose them."""
    try:
        log.sync(head=head)
    except (DmccError, OSError) as exc:
        if not log.sync_failed:
            log.sync_failed = True
            on_event(Notice(f"audit log not synced to disk: {exc}. The decisions are in the "
                            "file, but a power loss or system crash could lose the latest."))


def _failed(log: AuditLog, exc: Exception, on_event: Callable[[Event], None]) -> None:
    log.failed += 1
    if log.failed == 1:
        on_event(Notice(f"audit log not written: {exc}. Decisions are not being recorded "
                        "until it can be written again."))
