"""The headless renderer of events: each event as one human line (``dm_cc run``
prints them on stderr; the REPL can print the same) or as one JSON object
(``dm_cc run --json``, JSON Lines; docs/headless.md lists every record).

    call_input(call)                       "rm -rf build": the call's main input, one line
    call_text(call)                        what a call's line shows: the main input, a
                                            search's pattern too ('"def login" in src')
    decision_line(call, decision, asked)   'bash rm -rf build → deny (deny bash "rm *" at
                                            .dm_cc/policy.yaml:4: no deletes)'
    CallLines(asked).lines(event)          the lines an event adds: one per call, plus one
                                            for a call that failed after it was allowed
    event_json(event)                      {"type": "tool_decided", …}

``asked`` says what became of an ask when the front end knows it in advance
(``dm_cc run --on-ask deny``: "refused by --on-ask deny").
"""

from __future__ import annotations

import json
from typing import Any

from dm_cc.config import counted
from dm_cc.core import (
    AgentSwitched,
    ChangesLanded,
    Compacted,
    Event,
    InTask,
    Notice,
    TaskFinished,
    TaskStarted,
    ToolDecided,
    ToolFinished,
    TurnEnded,
)
from dm_cc.llm import Retrying, Usage
from dm_cc.permissions import Decision, Verdict
from dm_cc.sandbox import Change
from dm_cc.session import ToolCall
from dm_cc.tools import entry
from dm_cc.ui.describe import rule_text
from dm_cc.ui.sandbox_text import is_escape
from dm_cc.ui.usage_text import usage_json

INPUT_CHARS = 160     # characters of a call's main input shown on its line


def one_line(text: str, limit: int = INPUT_CHARS) -> str:
    """``text`` on one line (line breaks shown as ⏎), cut to ``limit`` characters."""
    line = " ⏎ ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def call_input(call: ToolCall) -> str:
    """The call's main input (the command, the path …, per the tool catalog) on one
    line; its arguments as JSON when the tool is not in the catalog."""
    if call.arguments is None:
        return one_line(call.raw_arguments)
    try:
        found = entry(call.name)
    except LookupError:
        return one_line(json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)) \
            if call.arguments else ""
    return one_line(found.main_text(call.arguments))


#: A search's arguments shown before its main input (where it searches): what it looks
#: for, and the files it keeps to (grep's ``include``).
SEARCHED = {"grep": ("pattern", "include"), "glob": ("pattern", None)}


def call_text(call: ToolCall) -> str:
    """What a call's line shows after its name: its main input; for a search, what it
    looks for in it too (``"def login" in src (*.py)``), not only where."""
    shown = call_input(call)
    searched, args = SEARCHED.get(call.name), call.arguments or {}
    if searched is None or not isinstance(args.get(searched[0]), str):
        return shown
    pattern, only = searched
    text = f'"{args[pattern]}" in {shown}'
    if only is not None and isinstance(args.get(only), str) and args[only]:
        text += f" ({args[only]})"
    return one_line(text)


def _call(call: ToolCall) -> str:
    shown = call_text(call)
    return f"{call.name} {shown}" if shown else call.name


def verdict_text(verdict: Verdict, call: ToolCall | None = None) -> str:
    """'deny bash "rm *" at .dm_cc/policy.yaml:4: no deletes': the deciding rule, its
    source and reason, led by the request when it is not the call's main input."""
    rule, request = verdict.rule, verdict.request
    text = rule_text(rule)
    if rule.reason:
        text += f": {rule.reason}"
    if verdict.note:
        text += f" [{verdict.note}]"
    if call is None or request.permission != call.name or request.pattern != call_input(call):
        text = f"{request.permission} {one_line(request.pattern)}: {text}"
    return text


def decision_line(call: ToolCall, decision: Decision, asked: str | None = None) -> str:
    """One line for a decided call; on deny and ask, the deciding rules."""
    if is_escape(decision):
        return escape_line(call, decision, asked)
    line = f"{_call(call)} → {decision.action}"
    if decision.action == "allow":
        return line
    if decision.action == "ask" and asked:
        line += f" → {asked}"
    deciding = decision.deciding
    told = [verdict_text(v, call) for v in deciding[:DECIDING_SHOWN]]
    if len(deciding) > DECIDING_SHOWN:   # a line naming thousands of paths: one line still
        told.append(f"… and {counted(len(deciding) - DECIDING_SHOWN, 'more request')}")
    return line + " (" + "; ".join(told) + ")"


#: The deciding requests one decision line names; the rest are counted.
DECIDING_SHOWN = 10


def escape_line(call: ToolCall, decision: Decision, asked: str | None = None) -> str:
    """'bash make → the sandbox stopped it: …; run outside the sandbox → deny (deny
    sandbox_escape "*" at f:3)': a confined command that failed, run again or not.
    When the line holds several commands, each that decided is named
    ('sandbox_escape curl x: ask sandbox_escape "*" at builtin:defaults')."""
    first = decision.deciding[0]
    why = first.request.note or "the sandbox stopped it"
    line = f"{_call(call)} → {why}; run outside the sandbox → {decision.action}"
    if decision.action == "ask" and asked:
        line += f" → {asked}"
    several = len(decision.verdicts) > 1
    return f"{line} (" + "; ".join(_escape_verdict(v, several) for v in decision.deciding) + ")"


def _escape_verdict(verdict: Verdict, named: bool) -> str:
    rule = verdict.rule
    text = rule_text(rule) + (f": {rule.reason}" if rule.reason else "")
    if verdict.note and verdict.note != verdict.request.note:
        text += f" [{verdict.note}]"
    return f"{verdict.request.permission} {one_line(verdict.request.pattern)}: {text}" \
        if named else text


def finished_line(call: ToolCall, text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return f"{_call(call)} → error: {one_line(first)}"


def task_started_line(event: TaskStarted) -> str:
    how = "resumed" if event.resumed else "started"
    where = " in the background" if event.background else ""
    return f"[{event.label}] {how}{where}: {one_line(event.description)} ({event.task_id})"


def tools_text(count: int) -> str:
    """``1 tool``, ``5 tools``: how many calls a subagent made."""
    return counted(count, "tool")


def task_finished_line(event: TaskFinished) -> str:
    line = f"[{event.label}] {event.status} · {tools_text(event.tools)}, {event.seconds:.1f} s"
    if event.status != "done":
        text = event.text.split("\n", 1)[1] if event.text.startswith("task_id:") else event.text
        line += f": {one_line(text, 200)}" if text.strip() not in ("", event.status) else ""
    return line


def retry_line(event: Retrying) -> str:
    """'rate limited (429), retrying in 8 s (attempt 2 of 5)': why the model is quiet."""
    return f"{event.reason}, retrying in {seconds(event.delay)} " \
           f"(attempt {event.attempt} of {event.attempts})"


def seconds(delay: float) -> str:
    """'0.5 s', '1 s', '8 s': tenths only where they matter."""
    return f"{round(delay, 1):g} s" if delay < 2 else f"{delay:.0f} s"


def changes_lines(event: ChangesLanded, most: int = 5) -> list[str]:
    """A command's changes as they landed: how many, then each that did not (with
    why), up to ``most``."""
    landed = len(event.applied)
    lines = [f"changes: {landed} landed" + (f", {len(event.refused)} did not:"
                                            if event.refused else "")]
    lines += [f"  ✗ {change.describe()}: {why}" for change, why in event.refused[:most]]
    if len(event.refused) > most:
        lines.append(f"  … and {len(event.refused) - most} more")
    return lines


class CallLines:
    """The human lines of a run's events: one per tool call when it is decided, one
    when a call fails that was allowed (or never reached a decision: an unknown tool,
    bad arguments), one per agent switch. A refusal already explained by its
    decision line (a deny; an ask when ``asked`` is given) adds no second line."""

    def __init__(self, asked: str | None = None) -> None:
        self.asked = asked
        self._explained: set[str] = set()

    def lines(self, event: Event) -> list[str]:
        if isinstance(event, ToolDecided):
            action = event.decision.action
            if action == "deny" or (action == "ask" and self.asked):
                self._explained.add(event.call.id)
            return [decision_line(event.call, event.decision, self.asked)]
        if isinstance(event, ToolFinished):
            if event.output.is_error and event.call.id not in self._explained:
                return [finished_line(event.call, event.output.output)]
            return []
        if isinstance(event, ChangesLanded):
            return ["  " + line for line in changes_lines(event)] if event.refused else []
        if isinstance(event, AgentSwitched):
            return [f"agent → {event.agent}"]
        if isinstance(event, Notice):
            return [event.text]
        if isinstance(event, TaskStarted):
            return [task_started_line(event)]
        if isinstance(event, TaskFinished):
            return [task_finished_line(event)]
        if isinstance(event, InTask):  # a subagent's call: led by who made it
            return [f"  [{event.label}] {line.lstrip()}" for line in self.lines(event.event)]
        return []


# ---------------------------------------------------------------------- JSON Lines


def event_json(event: Event) -> dict[str, Any]:
    """One event as a JSON object with a ``type``."""
    if isinstance(event, ToolDecided):
        return {"type": "tool_decided", "tool": event.call.name, "call_id": event.call.id,
                "input": call_input(event.call), "arguments": event.call.arguments,
                "decision": event.decision.action,
                "requests": [_verdict_json(v) for v in event.decision.verdicts]}
    if isinstance(event, ToolFinished):
        return {"type": "tool_finished", "tool": event.call.name, "call_id": event.call.id,
                "is_error": event.output.is_error, "output": event.output.output,
                "display": event.output.display}
    if isinstance(event, ChangesLanded):
        return {"type": "changes_landed", "tool": event.call.name, "call_id": event.call.id,
                "applied": [_change_json(c) for c in event.applied],
                "refused": [{**_change_json(c), "why": why} for c, why in event.refused]}
    if isinstance(event, AgentSwitched):
        return {"type": "agent_switched", "agent": event.agent}
    if isinstance(event, Compacted):
        return {"type": "compacted", "before_tokens": event.before_tokens,
                "after_tokens": event.after_tokens, "summarised": event.summarised,
                "automatic": event.automatic}
    if isinstance(event, TurnEnded):
        return {"type": "turn_ended", "reason": event.reason, "text": event.text}
    if isinstance(event, Notice):
        return {"type": "notice", "text": event.text}
    if isinstance(event, TaskStarted):
        return {"type": "task_started", "task_id": event.task_id, "call_id": event.call_id,
                "label": event.label,
                "agent": event.agent, "description": event.description,
                "background": event.background, "resumed": event.resumed}
    if isinstance(event, TaskFinished):
        return {"type": "task_finished", "task_id": event.task_id, "label": event.label,
                "status": event.status, "text": event.text, "tools": event.tools,
                "seconds": round(event.seconds, 3), "background": event.background}
    if isinstance(event, InTask):  # a subagent's event: which task, outermost first
        record = event_json(event.event)
        record["task_path"] = [event.task_id, *record.get("task_path", ())]
        record.setdefault("task_label", event.label)
        return record
    raise TypeError(f"not an event: {event!r}")


def _change_json(change: Change) -> dict[str, Any]:
    return {"path": change.path, "kind": change.kind, "what": change.what}


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    rule = verdict.rule
    return {"permission": verdict.request.permission, "pattern": verdict.request.pattern,
            "decision": verdict.action, "source": rule.source, "reason": rule.reason,
            "rule": {"action": rule.action, "permission": rule.permission,
                     "pattern": rule.pattern},
            "note": verdict.note}


def session_json(session_id: str, title: str, messages: int) -> dict[str, Any]:
    """The first record of a run: the session it runs in (``messages`` earlier ones)."""
    return {"type": "session", "session_id": session_id, "title": title, "messages": messages}


def result_json(session_id: str, reason: str, text: str, usage: Usage) -> dict[str, Any]:
    """The last record of a run that finished its turn."""
    return {"type": "result", "session_id": session_id, "reason": reason, "text": text,
            "usage": usage_json(usage)}


def failure_json(kind: str, session_id: str, message: str) -> dict[str, Any]:
    """The last record of a run that stopped: ``ask_failed`` or ``model_error``."""
    return {"type": kind, "session_id": session_id, "message": message}
