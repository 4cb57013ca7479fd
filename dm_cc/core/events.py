"""Typed events the core emits; the REPL, the headless runner and tests consume
them. The core never prints."""

from __future__ import annotations

from dataclasses import dataclass

from dm_cc.permissions import Decision
from dm_cc.sandbox import Change
from dm_cc.session import ToolCall
from dm_cc.tools import ToolOutput


@dataclass(frozen=True, slots=True)
class ToolDecided:
    call: ToolCall
    decision: Decision


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call: ToolCall
    output: ToolOutput


@dataclass(frozen=True, slots=True)
class ChangesLanded:
    """What a command run as a transaction changed in the project: the changes
    applied, and those that were not, each with why (:mod:`dm_cc.core.effects`)."""

    call: ToolCall
    applied: tuple[Change, ...]
    refused: tuple[tuple[Change, str], ...]


@dataclass(frozen=True, slots=True)
class AgentSwitched:
    """The agent in charge changed, or (``accept_edits``) the session now accepts
    edits inside the project (the REPL's Shift+Tab); any switch of agent ends that."""

    agent: str
    accept_edits: bool = False


@dataclass(frozen=True, slots=True)
class TurnEnded:
    reason: str
    text: str


@dataclass(frozen=True, slots=True)
class Compacted:
    """Older turns were replaced by a summary (``automatic``: the context was nearly
    full). Token counts are estimates of the next prompt, before and after."""

    before_tokens: int
    after_tokens: int
    summarised: int       # messages the summary stands for
    automatic: bool


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the person should know that is not a tool call (a store that could
    not be read, an approval kept for this session only)."""

    text: str


@dataclass(frozen=True, slots=True)
class TaskStarted:
    """A subagent started (or was resumed) in its child session ``task_id`` for the
    task call ``call_id``; ``label`` names it where it asks or reports (``explore #2``)."""

    task_id: str
    label: str
    agent: str
    description: str
    background: bool = False
    resumed: bool = False
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class TaskFinished:
    """A subagent ended: ``status`` done | max_turns | error | rejected | cancelled;
    ``text`` its final answer (or what went wrong); ``tools`` how many tool calls
    it made."""

    task_id: str
    label: str
    status: str
    text: str
    tools: int
    seconds: float
    background: bool = False


@dataclass(frozen=True, slots=True)
class InTask:
    """An event of a subagent's loop as its parent sees it: wrapped once per level,
    so a grandchild's event arrives as ``InTask(child, InTask(grandchild, event))``."""

    task_id: str
    label: str
    event: Event


Event = (ToolDecided | ToolFinished | ChangesLanded | AgentSwitched | TurnEnded | Compacted | Notice
         | TaskStarted | TaskFinished | InTask)
