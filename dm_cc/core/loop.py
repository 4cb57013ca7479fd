"""The turn: ``run(prompt)`` appends the user's message and repeats ``query()`` then
``execute(calls)`` until the model answers without tool calls.

``query`` is the model's reply for the agent in charge (core/replies.py: the
prompt, compaction, the call). ``execute`` is the reply's calls (core/calls.py):
each call's requests are settled on the one settle path (:mod:`dm_cc.core.settle`:
decision, hooks, event, audit, question, answer) and the call runs only when it is
allowed; a command the sandbox stopped is settled again as a ``sandbox_escape``
request before it runs unconfined. The loop records each call's result and
applies an agent switch.

What the agent may do is its :class:`~dm_cc.core.rights.Rights` (the gate, the
lineage, the tools offered); subagents are :class:`~dm_cc.core.subagents.Subagents`,
given a ``spawn`` callable. Control flow that ends a turn is an exception carrying
its payload (:class:`TurnStopped`), not a flag.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dm_cc.agents import DEFAULT_MAX_TURNS, Agent, named_agent
from dm_cc.config import plan_file
from dm_cc.core.calls import Calls
from dm_cc.core.events import AgentSwitched, Event, Notice, ToolFinished, TurnEnded
from dm_cc.core.prompts import tool_specs
from dm_cc.core.replies import Replies
from dm_cc.core.rights import Rights
from dm_cc.core.runtime import Runtime
from dm_cc.core.settle import Settle, TurnStopped
from dm_cc.core.subagents import Subagents, task_call
from dm_cc.core.undo import Steps
from dm_cc.llm import ModelReply, RetryNotices, Usage
from dm_cc.session import Message, Session, ToolCall, UndoResult
from dm_cc.tools import Tool, ToolContext, ToolOutput


@dataclass(frozen=True, slots=True)
class TurnResult:
    reason: str           # done | max_turns | rejected | cancelled
    text: str


class Loop:
    """One session's turns. A subagent's loop has its parent's ``rights`` as ``parent``
    (which bound its own), a ``depth`` (1 for a child) and a ``label`` (``explore
    #2``) that names it where it asks. ``wait_background``: a turn does not end while
    background children run (a headless run, a child); the REPL's turn ends, and the
    results come with the next one."""

    def __init__(self, session: Session, runtime: Runtime, *, max_turns: int | None = None,
                 agent: str | None = None, parent: Rights | None = None, label: str = "",
                 depth: int = 0, numbers: Iterator[int] | None = None,
                 wait_background: bool = True) -> None:
        self.session, self.rt, self.max_turns = session, runtime, max_turns
        self.next_agent = agent  # the agent of the next user message, when asked for
        self.wait_background = wait_background
        self.rights = Rights(runtime.policy, runtime.agents, runtime.approvals,
                             runtime.capabilities, session, parent=parent,
                             notify=lambda text: runtime.on_event(Notice(text)))
        self.settle = Settle(self.rights, runtime.approver, where=runtime.where,
                             on_event=runtime.on_event, audit_log=runtime.audit,
                             listeners=runtime.decisions, label=label)
        self.subagents = Subagents(self._spawn, runtime.agents, self.rights.may_start, session,
                                   on_event=runtime.on_event, depth=depth,
                                   max_depth=runtime.max_task_depth, numbers=numbers,
                                   max_turns=runtime.max_turns)
        tool_specs(runtime.tools)  # ValueError now, not at the first call, for a name twice
        self.calls = Calls({tool.name: tool for tool in runtime.tools}, self.settle,
                           on_output=runtime.on_output)
        self.replies = Replies(session, lambda: self.rt.model, self._offer,
                               on_event=runtime.on_event, on_stream=runtime.on_stream,
                               temperature=runtime.temperature)
        self.steps = Steps(runtime.undo, self.rights, runtime.where.root)
        self._todos: list[dict[str, Any]] = []

    @property
    def agent(self) -> Agent:
        return self.rights.agent

    @property
    def usage(self) -> Usage:
        """Tokens and cost of every model call of this loop and its finished children."""
        return self.replies.usage + self.subagents.usage

    def context(self) -> ToolContext:
        """What a tool of this session is told: where it runs, and, from the rights, how
        to confine a command and what may be read, and where to keep what it changes."""
        where, gate = self.rt.where, self.rights.gate()
        sandbox = self.rt.sandbox
        return ToolContext(where=where, session_id=self.session.info.id, agent=self.agent.name,
                           plan_file=plan_file(where.root, self.session.info.id),
                           todos=self._todos, subagents=self.subagents,
                           may_read=self.rights.may_read(where),
                           confine=(lambda argv: sandbox.confine(gate, argv, transaction=True))
                           if sandbox is not None else None,
                           undo=self.steps.step if self.rt.undo is not None else None,
                           undo_limit=self.rt.undo.limit_bytes if self.rt.undo is not None
                           else None)

    def undo(self, step: int | None = None) -> UndoResult:
        """/undo: this session's last step, or every step from ``step`` on (core/undo.py)."""
        return self.steps.undo(self.session, self.agent.name, step)

    def rewind(self, index: int) -> UndoResult | None:
        """/rewind: back to before message ``index``, files and history (core/undo.py);
        the model is then shown the history as it was."""
        result = self.steps.rewind(self.session, index)
        if result is None or result.ok:
            self.replies.rewound()
            self.next_agent = None
        return result

    def switch_agent(self, name: str) -> None:
        """Put the primary agent ``name`` in charge, as plan_enter does: a synthetic user
        message, so the history stays. UsageError for an unknown or subagent-only agent."""
        agent = named_agent(self.rt.agents, name, primary=True)
        self.next_agent = None
        self._switched(name, f"The user switched this session to the {name} agent."
                       + (f" {agent.description}" if agent.description else ""))

    def _switched(self, name: str, message: str) -> None:
        """``name`` is in charge from ``message`` (a synthetic user message) on; the
        person's accept-edits ends with the agent it was given to."""
        self.rights.accept_edits = False
        self.session.append(Message("user", message, agent=name, synthetic=True))
        self.rt.on_event(AgentSwitched(name))

    def accept_edits(self, on: bool = True) -> None:
        """Accept edits inside the project without asking, for this session and its
        subagents, until the agent changes (``policy/defaults.py``: what it never
        opens); a session layer, never saved, and nothing the model is told."""
        self.rights.accept_edits = on
        self.rt.on_event(AgentSwitched(self.agent.name, accept_edits=on))

    # ------------------------------------------------------------------ the turn

    async def run(self, prompt: str, *, task: tuple[str, str] | None = None) -> TurnResult:
        """One turn for the message ``prompt``. ``task``: the person named a subagent
        and its task (``@explore find the login code``: ``agents.mentioned``), so the
        turn starts with that ``task`` call, made as the model's would be (gated,
        recorded, shown); then the model reads its result and goes on."""
        agent = self.next_agent or self.agent.name
        self.next_agent = None
        self.session.append(Message("user", prompt, agent=agent))
        limit = self.max_turns or self.agent.max_turns or DEFAULT_MAX_TURNS
        try:
            if task is not None:   # recorded as a reply of the agent in charge: dm_cc made it
                call = task_call(*task)
                self.session.append(Message("assistant", "", agent=self.agent.name,
                                            synthetic=True, tool_calls=(call,)))
                await self.execute((call,))
            for _ in range(limit):
                reply = await self.query()
                if not reply.tool_calls:
                    if self.wait_background and self.subagents.waiting():
                        await self.subagents.next_finished()
                        continue
                    raise TurnStopped("done", reply.text)
                await self.execute(reply.tool_calls)
            raise TurnStopped("max_turns", f"Stopped after {limit} model calls (max_turns).")
        except TurnStopped as stop:
            result = TurnResult(stop.reason, stop.text)
        except asyncio.CancelledError:
            self.rt.on_event(TurnEnded("cancelled", ""))
            raise
        self.rt.on_event(TurnEnded(result.reason, result.text))
        return result

    async def query(self) -> ModelReply:
        """The background results that came in, then the model's reply (core/replies.py)."""
        for text in self.subagents.take_finished():  # background results, never mid-call
            self.session.append(Message("user", text, agent=self.agent.name, synthetic=True))
        await self._refresh_tools()
        return await self.replies.next()

    def _offer(self) -> tuple[Agent, ToolContext, list[Tool[Any]]]:
        """The agent in charge, what its tools are told, and the tools its rights offer."""
        return self.agent, self.context(), self.rights.offered(self.calls.tools.values())

    async def _refresh_tools(self) -> None:
        """Take the session's tools as they are now (``Runtime.refresh``): a tool that
        joined is offered from this request on, and read-only rights count it."""
        if self.rt.refresh is None:
            return
        tools, capabilities = await self.rt.refresh()
        if tools is not self.rt.tools:
            self.rt.tools = tools
            self.calls.tools = {tool.name: tool for tool in tools}
        if capabilities is not self.rt.capabilities:
            self.rt.capabilities = capabilities
            self.rights.use(capabilities)

    async def execute(self, calls: Sequence[ToolCall]) -> None:
        """Settle every call, run those allowed, record one result per call in order
        (core/calls.py); then end the turn if the person said no without a word."""
        await self.calls.reply(calls, self.context(), self._record)

    def _record(self, calls: Sequence[ToolCall], outputs: Sequence[ToolOutput]) -> None:
        """Each call's output in the session, in call order; then an agent switch
        (plan_enter / plan_exit) one of them asked for."""
        switch: ToolOutput | None = None
        for call, output in zip(calls, outputs, strict=True):
            self.session.append(Message("tool", output.output, agent=self.agent.name,
                                        tool_call_id=call.id, tool_name=call.name,
                                        is_error=output.is_error))
            self.rt.on_event(ToolFinished(call, output))
            if output.switch_agent and not output.is_error:
                switch = output
        if switch is not None and switch.switch_agent is not None:
            self._switched(switch.switch_agent, switch.switch_message or "")

    def _spawn(self, agent: Agent, session: Session, label: str,
               on_event: Callable[[Event], None], max_turns: int | None = None) -> Loop:
        """A subagent's loop over ``session``: this loop's tools, approver and approvals;
        its agent's model when it names one; no streaming to the screen; bounded by
        these rights; at most ``max_turns`` model calls a turn. Its model's retries are
        shown, not its reply."""
        model = self.rt.model
        if agent.model and self.rt.models is not None:
            model = self.rt.models(agent.model)
        on_stream = self.rt.on_stream    # only its retries: "rate limited (429), retrying …"
        runtime = replace(self.rt, model=model, on_event=on_event, on_output=None,
                          on_stream=RetryNotices(on_stream) if on_stream is not None else None)
        return Loop(session, runtime, max_turns=max_turns, agent=agent.name, parent=self.rights,
                    label=label,
                    depth=self.subagents.depth + 1, numbers=self.subagents.numbers)

