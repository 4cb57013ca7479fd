"""Sessions: messages, the append-only JSONL store, saved approvals, the audit log.

    messages.py   messages and tool calls: frozen data that round-trips through JSON
    store.py      sessions as append-only JSONL files (SessionStore, Session), listed
                  through session_index.py (what each file holds, while it is unchanged)
    approvals.py  saved "always allow" answers and approved MCP servers, per project
    audit.py      every decision, as hash-chained JSON Lines (AuditLog)
    telemetry.py  every decision to an OpenTelemetry collector (DecisionExporter),
                  the SDK imported only when configured
    undo.py       the previous state of what each step changed, to undo it (UndoStore),
                  with undo_recorder.py (a step being recorded), undo_records.py (its
                  data and JSON), undo_restore.py (undoing on the files) and
                  file_states.py (a path's state, looked at without following links)

What the stores share to survive crashes is ``dm_cc.config.durable``.

The front door is lazy: a name's module is imported on its first use, so a
command loads only the stores it uses.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.session.approvals import ApprovalStore, SavedApproval, parse_duration
    from dm_cc.session.audit import AuditLog, Verification
    from dm_cc.session.messages import Message, ToolCall, agent_in_charge, new_id
    from dm_cc.session.store import Session, SessionInfo, SessionStore, session_tree
    from dm_cc.session.telemetry import DecisionExporter, telemetry_config
    from dm_cc.session.undo import UndoStore
    from dm_cc.session.undo_recorder import Recorder
    from dm_cc.session.undo_records import Step, UndoResult

__all__ = [
    "ApprovalStore",
    "AuditLog",
    "DecisionExporter",
    "Message",
    "Recorder",
    "SavedApproval",
    "Session",
    "SessionInfo",
    "SessionStore",
    "Step",
    "ToolCall",
    "UndoResult",
    "UndoStore",
    "Verification",
    "agent_in_charge",
    "new_id",
    "parse_duration",
    "session_tree",
    "telemetry_config",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.session.approvals": ("ApprovalStore", "SavedApproval", "parse_duration"),
    "dm_cc.session.audit": ("AuditLog", "Verification"),
    "dm_cc.session.messages": ("Message", "ToolCall", "agent_in_charge", "new_id"),
    "dm_cc.session.store": ("Session", "SessionInfo", "SessionStore", "session_tree"),
    "dm_cc.session.telemetry": ("DecisionExporter", "telemetry_config"),
    "dm_cc.session.undo": ("UndoStore",),
    "dm_cc.session.undo_recorder": ("Recorder",),
    "dm_cc.session.undo_records": ("Step", "UndoResult"),
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
