"""The turn: ``run(prompt)`` appends the user's message and repeats ``query()`` then
``execute(calls)`` until the model answers without tool calls.

For every call of a reply, ``execute`` derives its requests and settles them on
the one settle path (:mod:`dm_cc.core.settle`: decision, hooks, event, audit,
question, answer); the call runs only when it is allowed. When every call of a
reply is allowed outright they run at once. A command the sandbox stopped is
settled again as a ``sandbox_escape`` request before it runs unconfined.

What the agent may do is its :class:`~dm_cc.core.rights.Rights` (the gate, the
lineage, the tools offered); subagents are :class:`~dm_cc.core.subagents.Subagents`,
given a ``spawn`` callable. Control flow that ends a turn is an exception carrying
its payload (:class:`TurnStopped`), not a flag. Before a model call whose prompt
would pass COMPACT_AT of the context window, older turns are summarised first
(core/compaction.py); a call the provider refuses as too long all the same
(ContextTooLong) is compacted once and made again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dm_cc.agents import DEFAULT_MAX_TURNS, Agent, named_agent
from dm_cc.config import plan_file
from dm_cc.core import compaction
from dm_cc.core.approval import Approvals, Approver, AskFailed
from dm_cc.core.calls import Calls, Done, all_or_none
from dm_cc.core.events import AgentSwitched, Compacted, Event, Notice, ToolFinished, TurnEnded
from dm_cc.core.instructions import LeftOut
from dm_cc.core.prompts import SectionSize, build_prompt, tool_specs
from dm_cc.core.rights import Rights
from dm_cc.core.settle import DecisionListener, Judged, Settle, TurnStopped
from dm_cc.core.subagents import Subagents, task_call
from dm_cc.core.undo import Steps
from dm_cc.llm import ChatModel, ContextTooLong, ModelReply, OnStream, RetryNotices, ToolSpec, Usage
from dm_cc.permissions import PathContextDirs
from dm_cc.policy import Capabilities, Policy
from dm_cc.sandbox import Sandbox
from dm_cc.session import AuditLog, Message, Session, ToolCall, UndoResult, UndoStore
from dm_cc.tools import Tool, ToolContext, ToolOutput

START_OVER = "start a new session or change to a model with a larger one (/model)"

logger = logging.getLogger(__name__)    # written only with --verbose (cli/options.py)


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
        self.settle = Settle(self.rights, runtime.approver, runtime.policy.hooks,
                             where=runtime.where, on_event=runtime.on_event,
                             audit_log=runtime.audit, listeners=runtime.decisions,
                             label=label)
        self.subagents = Subagents(self._spawn, runtime.agents, self.rights.may_start, session,
                                   on_event=runtime.on_event, depth=depth,
                                   max_depth=runtime.max_task_depth, numbers=numbers,
                                   max_turns=runtime.max_turns)
        tool_specs(runtime.tools)  # ValueError now, not at the first call, for a name twice
        self.calls = Calls({tool.name: tool for tool in runtime.tools}, self.settle,
                           on_output=runtime.on_output)
        self.window = compaction.Window(session)
        self.steps = Steps(runtime.undo, self.rights, runtime.where.root)
        self._todos: list[dict[str, Any]] = []
        self._usage = Usage()  # of this loop's own model calls
        self._told: set[LeftOut] = set()  # instruction files left out, said once each

    @property
    def agent(self) -> Agent:
        return self.rights.agent

    @property
    def usage(self) -> Usage:
        """Tokens and cost of every model call of this loop and its finished children."""
        return self._usage + self.subagents.usage

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
            self.window = compaction.Window(self.session)
            self.next_agent = None
        return result

    def switch_agent(self, name: str) -> None:
        """Put the primary agent ``name`` in charge, as plan_enter does: a synthetic user
        message, so the history stays. UsageError for an unknown or subagent-only agent."""
        agent = named_agent(self.rt.agents, name, primary=True)
        self.next_agent = None
        self.rights.accept_edits = False
        self.session.append(Message("user", f"The user switched this session to the {name} agent."
                                    + (f" {agent.description}" if agent.description else ""),
                                    agent=name, synthetic=True))
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
        for text in self.subagents.take_finished():  # background results, never mid-call
            self.session.append(Message("user", text, agent=self.agent.name, synthetic=True))
        await self._refresh_tools()
        window = self.rt.model.context_window
        if window and self.context_tokens() > compaction.COMPACT_AT * window:
            await self.compact(automatic=True)
        agent, reply = await self._complete_fitting()
        for notice in reply.notices:     # e.g. thinking the model does not support
            self.rt.on_event(Notice(notice))
        self._usage = self._usage + reply.usage
        self.session.append(Message("assistant", reply.text, agent=agent.name,
                                    tool_calls=reply.tool_calls, reasoning=reply.reasoning,
                                    reasoning_blocks=reply.reasoning_blocks))
        self.window.counted(reply.usage)
        return reply

    async def _complete_fitting(self) -> tuple[Agent, ModelReply]:
        """One model call for the agent in charge. Refused as longer than the model's
        context window, the older turns are compacted and the call made once more;
        ContextTooLong, saying what to do, when nothing is older or it is still too long."""
        agent, system, specs = self._prompt()
        try:
            return agent, await self._complete(agent, system, specs)
        except ContextTooLong as error:
            await self._compact_to_fit(error)
        agent, system, specs = self._prompt()
        try:
            return agent, await self._complete(agent, system, specs)
        except ContextTooLong as error:
            raise ContextTooLong(f"{error}, even after compacting the conversation; "
                                 f"{START_OVER}", error.limit) from error

    async def _compact_to_fit(self, error: ContextTooLong) -> None:
        """Compact after the provider refused the prompt as too long, keeping what the
        window it named (else the model's) allows; ContextTooLong when that cannot be."""
        name = self.rt.model.name
        limit = error.limit or self.rt.model.context_window
        too_long = f"the conversation is too long for {name}'s context window" + \
                   (f" ({limit} tokens)" if limit else "")
        self.rt.on_event(Notice(f"{too_long}: compacting it and trying again"))
        try:
            done = await self.compact(automatic=True, context_window=limit)
        except ContextTooLong as again:
            raise ContextTooLong(f"{too_long}, and its older part is too long to summarise; "
                                 f"{START_OVER}", limit) from again
        if done is None:
            raise ContextTooLong(f"{too_long} and there is nothing older to summarise; "
                                 f"{START_OVER}", limit) from error

    async def _complete(self, agent: Agent, system: str, specs: list[ToolSpec]) -> ModelReply:
        """One model call (at the agent's temperature, else the session's), its calls
        given dm_cc's own ids; both written to the debug log (``--verbose``)."""
        temperature = agent.temperature if agent.temperature is not None else self.rt.temperature
        messages = self.window.messages()
        logger.debug("model call: %s for %s (%s), %d messages, %d tools, temperature %s",
                     self.rt.model.name, agent.name, self.session.info.id, len(messages),
                     len(specs), temperature)
        started = time.monotonic()
        reply = await self.rt.model.complete(system, messages, specs, temperature=temperature,
                                             on_stream=self.rt.on_stream)
        reply = replace(reply, tool_calls=tuple(call.with_own_id() for call in reply.tool_calls))
        logger.debug("model reply after %.2f s: %d characters, calls %s, usage %s",
                     time.monotonic() - started, len(reply.text),
                     [f"{c.name} {c.id} (the model's {c.wire_id})" for c in reply.tool_calls],
                     reply.usage)
        return reply

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

    async def compact(self, *, automatic: bool = False,
                      context_window: int | None = None) -> Compacted | None:
        """Summarise the older turns (core/compaction.py), keeping verbatim what fits
        ``context_window`` (default: the model's); None: nothing to summarise."""
        before = self.context_tokens()
        done = await self.window.compact(self.rt.model, self.agent.name,
                                         context_window=context_window)
        if done is None:
            return None
        self._usage = self._usage + done.usage
        event = Compacted(before, self.context_tokens(), done.summarised, automatic)
        self.rt.on_event(event)
        return event

    def context_report(self) -> list[SectionSize]:
        """What the next model call's prompt holds, part by part, each with its
        estimated size (``/context``, whose total is their sum): the system prompt's
        sections (an instruction file left out, with why), the tools' schemas (dm_cc's
        own, the MCP servers'), the messages the model is shown."""
        ctx = self.context()
        return compaction.prompt_report(self.agent, ctx, tool_specs(self.rights.offered(
            self.calls.tools.values()), ctx), self.window.messages())

    def context_tokens(self) -> int:
        """About how many tokens the next model call's prompt holds."""
        return self.window.tokens(lambda: self._prompt()[1:])

    def _prompt(self) -> tuple[Agent, str, list[ToolSpec]]:
        """The agent in charge, its system prompt and the tools it is offered; an
        instruction file left out of the prompt is told once (a notice, not a question)."""
        ctx = self.context()
        prompt = build_prompt(self.agent, ctx)
        for left_out in prompt.left_out:
            if left_out not in self._told:
                self._told.add(left_out)
                self.rt.on_event(Notice(left_out.notice()))
        return self.agent, prompt.text, tool_specs(
            self.rights.offered(self.calls.tools.values()), ctx)

    async def execute(self, calls: Sequence[ToolCall]) -> None:
        """Settle every call, run those allowed, record one result per call in order;
        then end the turn if the person said no without a word."""
        ctx = self.context()
        judged = [await self.calls.judge(call, ctx) for call in calls]
        done: list[Done | None] = [None] * len(judged)
        try:
            if all(isinstance(j, Judged) and j.decision.action == "allow" for j in judged):
                await all_or_none(done, [self.calls.enforce(j, ctx) for j in judged])
            for index, item in enumerate(judged):
                if done[index] is None and not any(d is not None and d.stops for d in done):
                    done[index] = await self.calls.enforce(item, ctx)
        except TurnStopped as stop:
            self._results(calls, done, f"{stop.reason.capitalize()} by the user.")
            raise
        except asyncio.CancelledError:
            self._results(calls, done, "Cancelled: the turn was stopped.")
            raise
        except AskFailed:
            self._results(calls, done, "Not run: the turn stopped because a call needed an "
                                       "approval no one could give.")
            raise
        self._results(calls, done, "Rejected by the user.")
        if any(d is not None and d.stops for d in done):
            raise TurnStopped("rejected", "")

    def _results(self, calls: Sequence[ToolCall], done: Sequence[Done | None], missing: str) -> None:
        """Record one result per call, in call order (``missing`` for calls that did not
        run or finish, but what a cancelled one had: :meth:`Calls.finished`); then
        apply an agent switch (plan_enter / plan_exit)."""
        switch: ToolOutput | None = None
        for call, result in zip(calls, self.calls.finished(calls, done), strict=True):
            output = result.output if result is not None else ToolOutput(missing, is_error=True)
            self.session.append(Message("tool", output.output, agent=self.agent.name,
                                        tool_call_id=call.id, tool_name=call.name,
                                        is_error=output.is_error))
            self.rt.on_event(ToolFinished(call, output))
            if output.switch_agent and not output.is_error:
                switch = output
        if switch is not None and switch.switch_agent is not None:
            self.rights.accept_edits = False
            self.session.append(Message("user", switch.switch_message or "",
                                        agent=switch.switch_agent, synthetic=True))
            self.rt.on_event(AgentSwitched(switch.switch_agent))

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

