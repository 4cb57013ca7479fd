"""Decision hooks: external commands that see a request before it is decided
(docs/hooks.md; the ``hooks:`` of a user, ``--policy`` or managed policy file).

    decision = await consult_hooks(gate.decide(requests), policy.hooks, gate, facts,
                             failure="ask")

For each request of a call, every hook whose permission and pattern match it (the
engine's own matchers, as a deny rule's: case and flag spellings too) runs, at most
HOOKS_AT_ONCE at a time (a command naming thousands of paths must not start
thousands of processes at once: out of file descriptors, or late on a busy machine,
each would count as failed), with the request as JSON on stdin; it answers on stdout
``{"decision": "allow" | "deny" | "ask" | "abstain", "reason": "…"}``. The answers
combine with the rules' verdict by strictness:

* a hook may always tighten: deny beats ask beats allow;
* a hook from the person's own or a managed file (every hook: a project's files
  may name none) may turn an ``ask`` into ``allow`` when every other hook that
  answered agrees -- never an ask that a managed or enforced rule or a ceiling
  decided, nor one no rule could allow (a command that cannot be judged
  statically, an allow withheld), which is where an approval could not either;
* ``abstain`` changes nothing;
* a hook that cannot start, exits non-zero, takes longer than its timeout (its
  whole process group is killed) or answers anything else counts as ``failure``:
  ``ask``, or ``deny`` where no one can be asked (headless).

A verdict a hook decided has layer ``hook``, a rule naming the hook
(``hook ./check.py (policy.yaml:7)``) with its reason, and a note with what the
rules said; a hook that ran and changed nothing is told in the verdict's note.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from dm_cc.core.approval import Approver, HeadlessApprover
from dm_cc.permissions import STRICTNESS, Action, Decision, Gate, Request, Rule, Ruleset, Verdict, combine
from dm_cc.policy import HOOK_LAYER, TRUSTED_HOOK_LAYERS, Hook

ANSWERS = ("allow", "deny", "ask", "abstain")
MAX_ANSWER = 64 * 1024     # bytes of stdout read as the answer; more is garbage
STDERR_SHOWN = 200         # characters of a failed hook's stderr shown with its reason
HOOKS_AT_ONCE = 16         # hook processes of one call running at the same time


class CallFacts(NamedTuple):
    """What a hook is told about the call besides the request."""

    tool: str
    input: str
    arguments: Mapping[str, Any]
    agent: str
    session: str | None
    cwd: str


class HookAnswer(NamedTuple):
    """A hook's answer for one request; ``failed``: it counts as the failure action."""

    hook: Hook
    decision: str
    reason: str | None
    failed: bool = False


def failure_for(approver: Approver) -> Action:
    """What a failed hook counts as: ask, or deny where no one can be asked."""
    return "deny" if isinstance(approver, HeadlessApprover) else "ask"


def matching(hooks: Sequence[Hook], request: Request, ruleset: Ruleset) -> list[Hook]:
    """The hooks (in order) whose permission and pattern match any name of ``request``;
    ``ruleset`` holds each hook's :meth:`~Hook.as_rule`, in the same order."""
    return [hooks[index] for index, names in ruleset.considered(request) if names]


async def consult_hooks(decision: Decision, hooks: Sequence[Hook], gate: Gate, facts: CallFacts,
                  *, failure: Action = "ask") -> Decision:
    """``decision`` with the matching hooks' answers combined into its verdicts
    (the module docstring says how); the same object when no hook matches."""
    if not hooks or not decision.verdicts:
        return decision
    ruleset = Ruleset([hook.as_rule() for hook in hooks], gate.context)
    runs = [matching(hooks, v.request, ruleset) for v in decision.verdicts]
    if not any(runs):
        return decision
    room = asyncio.Semaphore(HOOKS_AT_ONCE)

    async def asked(hook: Hook, verdict: Verdict) -> HookAnswer:
        async with room:   # each hook's timeout runs from its own start
            return await ask(hook, payload(verdict, facts, hook), facts.cwd, failure)

    answers = await asyncio.gather(*(
        asyncio.gather(*(asked(hook, verdict) for hook in run))
        for verdict, run in zip(decision.verdicts, runs, strict=True)))
    binding = frozenset(layer.name for layer in gate.layers if layer.binding)
    return combine(combined(verdict, list(found), binding)
                   for verdict, found in zip(decision.verdicts, answers, strict=True))


def payload(verdict: Verdict, facts: CallFacts, hook: Hook) -> bytes:
    """The request as a hook reads it on stdin (docs/hooks.md)."""
    request, rule = verdict.request, verdict.rule
    return json.dumps({
        "permission": request.permission,
        "pattern": request.pattern,
        "aliases": list(request.aliases),
        "tool": facts.tool,
        "input": facts.input,
        "arguments": dict(facts.arguments),
        "agent": facts.agent,
        "session": facts.session,
        "cwd": facts.cwd,
        "rules": {
            "decision": verdict.action,
            "rule": {"permission": rule.permission, "pattern": rule.pattern,
                     "action": rule.action, "source": rule.source, "reason": rule.reason},
            "layer": verdict.layer,
            "note": verdict.note,
        },
        "hook": hook.source,
    }, default=str).encode()


async def ask(hook: Hook, data: bytes, cwd: str, failure: Action = "ask") -> HookAnswer:
    """Run ``hook`` with ``data`` on stdin and read its answer; any failure is an
    answer of ``failure`` whose reason says what went wrong."""
    def failed(why: str) -> HookAnswer:
        return HookAnswer(hook, failure, f"the hook failed: {why}", failed=True)

    try:
        process = await asyncio.create_subprocess_exec(
            *hook.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, start_new_session=True)
    except OSError as exc:
        return failed(f"it could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(data), hook.timeout)
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        return failed(f"no answer within {hook.timeout:g} s (stopped)")
    finally:
        _kill_group(process.pid)  # nothing it started outlives its answer
    if process.returncode != 0:
        said = err.decode(errors="replace").strip()[-STDERR_SHOWN:]
        return failed(f"exit status {process.returncode}" + (f": {said}" if said else ""))
    return _parsed(out, hook) or failed(f"not an answer: {_shown(out)} (expected JSON like "
                                        '{"decision": "allow|deny|ask|abstain", "reason": "…"})')


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _parsed(out: bytes, hook: Hook) -> HookAnswer | None:
    if len(out) > MAX_ANSWER:
        return None
    try:
        answer = json.loads(out)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(answer, dict) or answer.get("decision") not in ANSWERS:
        return None
    reason = answer.get("reason")
    if reason is not None and not isinstance(reason, str):
        return None
    return HookAnswer(hook, answer["decision"], reason or None)


def _shown(out: bytes) -> str:
    text = out.decode(errors="replace").strip()
    return repr(text[:STDERR_SHOWN]) if text else "nothing on stdout"


# ------------------------------------------------------------------ combining (pure)

def combined(verdict: Verdict, answers: Sequence[HookAnswer],
             binding: frozenset[str] = frozenset()) -> Verdict:
    """One request's verdict with its hooks' answers: the strictest answer when it
    is stricter than the rules; an allow over an ask when every hook that answered
    allows, one of them is trusted and the ask is :func:`loosenable`; else the
    rules' verdict, with the answers in its note."""
    if not answers:
        return verdict
    answered = [a for a in answers if a.decision != "abstain"]
    if answered:
        strictest = max(answered, key=lambda a: STRICTNESS[a.decision])
        if STRICTNESS[strictest.decision] > STRICTNESS[verdict.action]:
            return _decided(verdict, strictest)
        trusted = [a for a in answered if a.hook.layer in TRUSTED_HOOK_LAYERS]
        if verdict.action == "ask" and strictest.decision == "allow" and trusted \
                and loosenable(verdict, binding) is None:
            return _decided(verdict, trusted[0])
    told = "; ".join(_told(a, verdict, binding) for a in answers)
    return replace(verdict, note="; ".join(n for n in (verdict.note, told) if n))


def loosenable(verdict: Verdict, binding: frozenset[str] = frozenset()) -> str | None:
    """Why a hook may not turn this ask into an allow (None: it may). Where an
    approval could not (a managed or enforced rule, a ceiling, a request no rule
    may allow: the gate notes those), a hook cannot either."""
    if not verdict.request.allowable:
        return "no rule or hook may allow a request that cannot be judged statically"
    if verdict.layer in binding:
        return f"a {verdict.layer} rule decided it, which a hook cannot overrule"
    if verdict.note is not None:
        return f"a hook cannot overrule this ({verdict.note})"
    return None


def _decided(verdict: Verdict, answer: HookAnswer) -> Verdict:
    action: Action = answer.decision  # type: ignore[assignment]  # allow, deny or ask here
    hook = answer.hook
    rule = Rule(hook.permission, hook.pattern, action, answer.reason, hook.shown)
    said = f"the rules said {verdict.action}: {verdict.rule.describe()}"
    if verdict.note:
        said += f" ({verdict.note})"
    if answer.failed:
        said = f"a hook that fails counts as {action}; {said}"
    return Verdict(verdict.request, rule, action, verdict.name, said, HOOK_LAYER)


def _told(answer: HookAnswer, verdict: Verdict, binding: frozenset[str]) -> str:
    text = f"{answer.hook.shown} answered {answer.decision}"
    if answer.reason:
        text += f" ({answer.reason})"
    if answer.decision == "allow" and verdict.action == "ask":
        if answer.hook.layer not in TRUSTED_HOOK_LAYERS:
            text += ": only a hook of your own or a managed policy may allow what asks"
        elif (why := loosenable(verdict, binding)) is not None:
            text += f": {why}"
        else:
            text += ": another hook did not allow it"
    return text
