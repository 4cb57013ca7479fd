"""What a session runs with: the :class:`Runtime` compose assembles (``World.open_loop``)
and hands the session's :class:`~dm_cc.core.loop.Loop` -- the policy, agents, tools,
model, approver, stores, sandbox and where each event goes. A subagent's loop gets
its parent's, with its own model and event sink (``dataclasses.replace``). The
model and the tools may change mid-session (``/model``, MCP tools that joined):
the next model call takes them from here. The policy is the one the session
started with; its rights decide with the one in force (``Rights.policy``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dm_cc.agents import Agent
from dm_cc.core.approval import Approvals, Approver
from dm_cc.core.events import Event
from dm_cc.core.settle import DecisionListener
from dm_cc.llm import ChatModel, OnStream
from dm_cc.permissions import PathContextDirs
from dm_cc.policy import Capabilities, Policy
from dm_cc.sandbox import Sandbox
from dm_cc.session import AuditLog, ToolCall, UndoStore
from dm_cc.tools import Tool


@dataclass
class Runtime:
    """Everything a loop needs that is not the session itself (``compose`` makes it)."""

    policy: Policy
    agents: Mapping[str, Agent]
    tools: Sequence[Tool[Any]]
    model: ChatModel
    approver: Approver
    where: PathContextDirs
    capabilities: Capabilities          # what each permission does (read-only rights)
    on_event: Callable[[Event], None] = lambda event: None
    on_stream: OnStream | None = None
    # What a running call of this loop prints, as it comes (a command's output: the
    # REPL's spinner shows its last lines), then None once it ended; subagents'
    # calls are not shown so.
    on_output: Callable[[ToolCall, str | None], None] | None = None
    approvals: Approvals = field(default_factory=Approvals)
    # A subagent whose agent names a model of its own gets it from here (None: the
    # parent's model); subagents nest at most this deep.
    models: Callable[[str], ChatModel] | None = None
    max_task_depth: int = 3
    max_turns: int | None = None        # the settings' max_turns: no subagent's turn is longer
    sandbox: Sandbox | None = None      # where shell commands run confined (None: unconfined)
    audit: AuditLog | None = None       # where every enforced decision is recorded
    # Who else is handed each decision's audit record, once (the telemetry exporter:
    # docs/telemetry.md); what one returns is told as a Notice. Never blocks.
    decisions: Sequence[DecisionListener] = ()
    undo: UndoStore | None = None       # where tools keep what they change (None: nothing kept)
    temperature: float | None = None    # for an agent that sets none (None: the model's default)
    # Before each model request: the tools as they are now and what each permission
    # does with them (None: ``tools`` and ``capabilities`` never change). MCP servers
    # starting in the background add their tools once they list them.
    refresh: Callable[[], Awaitable[tuple[Sequence[Tool[Any]], Capabilities]]] | None = None
