"""The headless renderer: the core's events as JSON lines (``dm_cc run --json``)."""

from __future__ import annotations

from typing import Any

from dm_cc.core.events import (
    AgentSwitched,
    Compacted,
    Event,
    ToolDecided,
    ToolFinished,
    TurnEnded,
)


def event_json(event: Event) -> dict[str, Any]:
    """One event as a JSON object with a ``type``."""
    if isinstance(event, ToolDecided):
        return {"type": "tool_decided", "tool": event.call.name, "call_id": event.call.id,
                "arguments": event.call.arguments, "decision": event.decision.action,
                "requests": [{"permission": v.request.permission, "pattern": v.request.pattern,
                              "decision": v.action, "source": v.rule.source,
                              "reason": v.rule.reason} for v in event.decision.verdicts]}
    if isinstance(event, ToolFinished):
        return {"type": "tool_finished", "tool": event.call.name, "call_id": event.call.id,
                "is_error": event.output.is_error, "output": event.output.output}
    if isinstance(event, AgentSwitched):
        return {"type": "agent_switched", "agent": event.agent}
    if isinstance(event, Compacted):
        return {"type": "compacted", "before_tokens": event.before_tokens,
                "after_tokens": event.after_tokens, "summarised": event.summarised,
                "automatic": event.automatic}
    if isinstance(event, TurnEnded):
        return {"type": "turn_ended", "reason": event.reason, "text": event.text}
    return {"type": type(event).__name__}
