"""The core: the loop (the one place a decision is enforced), its typed events, the
Approver seam and the system prompts. It never prints: the UI consumes its events.

    loop.py        the turn (query -> execute); runtime.py the Runtime a session runs with
    replies.py     a model reply: the prompt, compaction, the call (the query half)
    calls.py       a reply's tool calls, from the model's arguments to their output
    settle.py      THE settle path of every decision: gate, hooks, event, audit, question
    rights.py      a session's gate, bounded by its lineage; audit.py what it logs
    approval.py    the Approver seam (headless, scripted) and what was approved
    hooks.py       decision hooks run on a decision's requests (``consult_hooks``)
    events.py      the typed events; subagents.py the task tool's child sessions
    prompts.py     system prompts; compaction.py older turns summarised for the model
    instructions.py  AGENTS.md / CLAUDE.md, read as a read call would be (or left out)

The front door is lazy: a name's module is imported on its first use (the loop
brings the tools' pydantic models; an event type alone does not).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.core.approval import (
        Approval,
        ApprovalRequest,
        Approvals,
        Approver,
        AskFailed,
        HeadlessApprover,
    )
    from dm_cc.core.events import (
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
    from dm_cc.core.hooks import CallFacts, consult_hooks
    from dm_cc.core.loop import Loop
    from dm_cc.core.prompts import context_report
    from dm_cc.core.runtime import Runtime
    from dm_cc.core.subagents import Running

__all__ = [
    "AgentSwitched",
    "Approval",
    "ApprovalRequest",
    "Approvals",
    "Approver",
    "AskFailed",
    "CallFacts",
    "Compacted",
    "Event",
    "HeadlessApprover",
    "InTask",
    "Loop",
    "Notice",
    "Running",
    "Runtime",
    "TaskFinished",
    "TaskStarted",
    "ToolDecided",
    "ToolFinished",
    "ChangesLanded",
    "TurnEnded",
    "consult_hooks",
    "context_report",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.core.approval": ("Approval", "ApprovalRequest", "Approvals", "Approver", "AskFailed",
                            "HeadlessApprover"),
    "dm_cc.core.events": ("AgentSwitched", "Compacted", "Event", "InTask", "Notice",
                          "TaskFinished", "TaskStarted", "ToolDecided", "ToolFinished", "ChangesLanded",
                          "TurnEnded"),
    "dm_cc.core.hooks": ("CallFacts", "consult_hooks"),
    "dm_cc.core.loop": ("Loop",),
    "dm_cc.core.prompts": ("context_report",),
    "dm_cc.core.runtime": ("Runtime",),
    "dm_cc.core.subagents": ("Running",),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
