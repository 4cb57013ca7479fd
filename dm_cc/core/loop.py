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
(core/compaction.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from dm_cc.agents.builtin import Agent, named_agent
from dm_cc.config import dirs
from dm_cc.core import compaction
from dm_cc.core.approval import Approvals, Approver, AskFailed
from dm_cc.core.events import AgentSwitched, Compacted, Event, Notice, ToolFinished, TurnEnded
from dm_cc.core.prompts import system_prompt, tool_specs
from dm_cc.core.rights import Rights
from dm_cc.core.settle import Judged, Settle, TurnStopped, denial_message
from dm_cc.core.subagents import Subagents
from dm_cc.llm.base import ChatModel, ModelReply, OnStream, ToolSpec, Usage
from dm_cc.permissions import Request
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.rules import DOOM_LOOP
from dm_cc.policy.effects import Capabilities
from dm_cc.policy.layers import Policy
from dm_cc.sandbox.host import Sandbox
from dm_cc.session.audit import AuditLog
from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import Session
from dm_cc.tools.base import Tool, ToolContext, ToolOutput

__all__ = ["Loop", "Runtime", "TurnResult", "TurnStopped"]

DEFAULT_MAX_TURNS = 50
DOOM_LOOP_REPEATS = 3
STOPPED_SHOWN = 2_000   # characters of a stopped command's output shown with its escape question


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
    approvals: Approvals = field(default_factory=Approvals)
    # A subagent whose agent names a model of its own gets it from here (None: the
    # parent's model); subagents nest at most this deep.
    models: Callable[[str], ChatModel] | None = None
    max_task_depth: int = 3
    sandbox: Sandbox | None = None      # where shell commands run confined (None: unconfined)
    audit: AuditLog | None = None       # where every enforced decision is recorded


@dataclass(frozen=True, slots=True)
class TurnResult:
    reason: str           # done | max_turns | rejected | cancelled
    text: str


@dataclass(frozen=True, slots=True)
class _Done:
    """A call's result, and whether the person's answer to it ends the turn."""

    output: ToolOutput
    stops: bool = False


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
                             audit_log=runtime.audit, label=label)
        self.subagents = Subagents(self._spawn, runtime.agents, self.rights.may_start, session,
                                   on_event=runtime.on_event, depth=depth,
                                   max_depth=runtime.max_task_depth, numbers=numbers)
        tool_specs(runtime.tools)  # ValueError now, not at the first call, for a name twice
        self._tools = {tool.name: tool for tool in runtime.tools}
        self._recent: list[str] = []
        self._todos: list[dict[str, Any]] = []
        self._usage = Usage()  # of this loop's own model calls
        self._measured: compaction.Measured | None = None  # the provider's count, last call

    @property
    def agent(self) -> Agent:
        return self.rights.agent

    @property
    def usage(self) -> Usage:
        """Tokens and cost of every model call of this loop and its finished children."""
        return self._usage + self.subagents.usage

    def context(self) -> ToolContext:
        """What a tool of this session is told: where it runs, and, from the rights, how
        to confine a command and what may be read."""
        where, gate = self.rt.where, self.rights.gate()
        sandbox = self.rt.sandbox
        return ToolContext(where=where, session_id=self.session.info.id, agent=self.agent.name,
                           plan_file=dirs.plan_file(where.root, self.session.info.id),
                           todos=self._todos, subagents=self.subagents,
                           may_read=self.rights.may_read(where),
                           confine=(lambda argv: sandbox.confine(gate, argv))
                           if sandbox is not None else None)

    def switch_agent(self, name: str) -> None:
        """Put the primary agent ``name`` in charge, as plan_enter does: a synthetic user
        message, so the history stays. UsageError for an unknown or subagent-only agent."""
        agent = named_agent(self.rt.agents, name, primary=True)
        self.next_agent = None
        self.session.append(Message("user", f"The user switched this session to the {name} agent."
                                    + (f" {agent.description}" if agent.description else ""),
                                    agent=name, synthetic=True))
        self.rt.on_event(AgentSwitched(name))

    # ------------------------------------------------------------------ the turn

    async def run(self, prompt: str) -> TurnResult:
        agent = self.next_agent or self.agent.name
        self.next_agent = None
        self.session.append(Message("user", prompt, agent=agent))
        limit = self.max_turns or self.agent.max_turns or DEFAULT_MAX_TURNS
        try:
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
        window = self.rt.model.context_window
        if window and self.context_tokens() > compaction.COMPACT_AT * window:
            await self.compact(automatic=True)
        agent, system, specs = self._prompt()
        reply = await self.rt.model.complete(system, compaction.model_messages(self.session.messages),
                                             specs, temperature=agent.temperature,
                                             on_stream=self.rt.on_stream)
        self._usage = self._usage + reply.usage
        self.session.append(Message("assistant", reply.text, agent=agent.name,
                                    tool_calls=reply.tool_calls, reasoning=reply.reasoning))
        self._measured = compaction.measured(reply.usage, len(self.session.messages))
        return reply

    async def compact(self, *, automatic: bool = False) -> Compacted | None:
        """Summarise the older turns by one model call and append the summary (None:
        nothing older to summarise). ModelError leaves the session as it was."""
        before = self.context_tokens()
        done = await compaction.compact(
            self.rt.model, compaction.since_compaction(self.session.messages), agent=self.agent.name,
            keep_tokens=compaction.keep_budget(self.rt.model.context_window))
        if done is None:
            return None
        self._usage = self._usage + done.usage
        self.session.append(done.message)
        self._measured = None
        event = Compacted(before, self.context_tokens(), done.summarised, automatic)
        self.rt.on_event(event)
        return event

    def context_tokens(self) -> int:
        """About how many tokens the next model call's prompt holds: the provider's count
        for the last call plus an estimate since; an estimate of the whole without one."""
        messages = self.session.messages
        if self._measured is not None:
            return (self._measured.tokens
                    + compaction.message_tokens(messages[self._measured.messages:]))
        _agent, system, specs = self._prompt()
        return compaction.request_tokens(system, specs, compaction.model_messages(messages))

    def _prompt(self) -> tuple[Agent, str, list[ToolSpec]]:
        """The agent in charge, its system prompt and the tools it is offered."""
        ctx = self.context()
        return self.agent, system_prompt(self.agent, ctx), tool_specs(
            self.rights.offered(self._tools.values()), ctx)

    async def execute(self, calls: Sequence[ToolCall]) -> None:
        """Settle every call, run those allowed, record one result per call in order;
        then end the turn if the person said no without a word."""
        ctx = self.context()
        judged = [await self._judge(call, ctx) for call in calls]
        done: list[_Done | None] = [None] * len(judged)
        try:
            if all(isinstance(j, Judged) and j.decision.action == "allow" for j in judged):
                await _all_or_none(done, [self._enforce(j, ctx) for j in judged])
            for index, item in enumerate(judged):
                if done[index] is None and not any(d is not None and d.stops for d in done):
                    done[index] = await self._enforce(item, ctx)
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

    async def _judge(self, call: ToolCall, ctx: ToolContext) -> Judged | ToolOutput:
        """The call's tool, params and decision; a tool error when it names no tool or
        its arguments do not fit. The same call three times running also asks doom_loop."""
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolOutput(f"Unknown tool {call.name!r}. Available: {', '.join(self._tools)}.",
                              is_error=True)
        if call.arguments is None:
            return ToolOutput(f"The arguments of {call.name} were not a valid JSON object: "
                              f"{call.raw_arguments[:500]!r}. Send them again as JSON.",
                              is_error=True)
        try:
            params = tool.Params.model_validate(call.arguments)
            requests = list(tool.requests(params, ctx))
        except (ValidationError, ValueError, KeyError) as exc:
            return ToolOutput(f"Invalid arguments for {call.name}: {exc}", is_error=True)
        key = call.name + json.dumps(call.arguments, sort_keys=True, default=str)
        self._recent = (self._recent + [key])[-DOOM_LOOP_REPEATS:]
        if len(self._recent) == DOOM_LOOP_REPEATS and len(set(self._recent)) == 1:
            requests.append(Request(DOOM_LOOP, call.name, note=f"{call.name} with the same "
                                    f"arguments {DOOM_LOOP_REPEATS} times in a row"))
        return Judged(call, tool, params, await self.settle.decide(call, tool, requests))

    async def _enforce(self, item: Judged | ToolOutput, ctx: ToolContext) -> _Done:
        """THE enforcement point: a call runs here only when it was settled as allowed."""
        if isinstance(item, ToolOutput):
            return _Done(item)
        settled = await self.settle.settle(item, ctx)
        if settled.decision.action == "deny":
            return _Done(ToolOutput(denial_message(item.call.name, settled.decision), is_error=True))
        if not settled.runs:
            said = f"{item.call.name} was not run: {settled.feedback}" if settled.feedback \
                else "Rejected by the user."
            return _Done(ToolOutput(said, is_error=True), settled.stops)
        output = await self._run(item, ctx)
        if output.escape is not None and ctx.confine is not None:
            return await self._escape(item, ctx, output)
        return _Done(output)

    async def _escape(self, item: Judged, ctx: ToolContext, confined: ToolOutput) -> _Done:
        """The sandbox stopped the call: it runs again unconfined only if its
        ``sandbox_escape`` request is settled as allowed; else the confined result stands."""
        assert confined.escape is not None
        settled = await self.settle(item.call, item.tool, item.params, [confined.escape], ctx,
                                    stopped=confined.output[-STOPPED_SHOWN:])
        if settled.decision.action == "deny":
            said = (f"It may not run outside the sandbox: {settled.decision.deciding[0].rule.describe()}."
                    " Do it inside the project or $TMPDIR, or tell the user what is needed.")
        elif not settled.runs:
            said = "The user did not let it run outside the sandbox" + (
                f": {settled.feedback}" if settled.feedback else ".")
        else:
            unconfined = await self._run(item, replace(ctx, confine=None))
            return _Done(replace(unconfined, output=unconfined.output + "\n(run outside the sandbox)"))
        return _Done(replace(confined, escape=None, output=f"{confined.output}\n{said}"),
                     settled.stops)

    async def _run(self, item: Judged, ctx: ToolContext) -> ToolOutput:
        try:
            return await item.tool.run(item.params, replace(ctx, call_id=item.call.id))
        except (asyncio.CancelledError, TurnStopped, AskFailed):  # a subagent's stop is ours
            raise
        except Exception as exc:  # a tool bug must not kill the session
            return ToolOutput(f"{item.call.name} failed: {type(exc).__name__}: {exc}",
                              is_error=True)

    def _results(self, calls: Sequence[ToolCall], done: Sequence[_Done | None], missing: str) -> None:
        """Record one result per call, in call order (``missing`` for calls that did not
        run or finish); then apply an agent switch (plan_enter / plan_exit)."""
        switch: ToolOutput | None = None
        for call, result in zip(calls, done, strict=True):
            output = result.output if result is not None else ToolOutput(missing, is_error=True)
            self.session.append(Message("tool", output.output, agent=self.agent.name,
                                        tool_call_id=call.id, tool_name=call.name,
                                        is_error=output.is_error))
            self.rt.on_event(ToolFinished(call, output))
            if output.switch_agent and not output.is_error:
                switch = output
        if switch is not None and switch.switch_agent is not None:
            self.session.append(Message("user", switch.switch_message or "",
                                        agent=switch.switch_agent, synthetic=True))
            self.rt.on_event(AgentSwitched(switch.switch_agent))

    def _spawn(self, agent: Agent, session: Session, label: str,
               on_event: Callable[[Event], None]) -> Loop:
        """A subagent's loop over ``session``: this loop's tools, approver and approvals;
        its agent's model when it names one; no streaming to the screen; bounded by
        these rights."""
        model = self.rt.model
        if agent.model and self.rt.models is not None:
            model = self.rt.models(agent.model)
        runtime = replace(self.rt, model=model, on_stream=None, on_event=on_event)
        return Loop(session, runtime, agent=agent.name, parent=self.rights, label=label,
                    depth=self.subagents.depth + 1, numbers=self.subagents.numbers)


async def _all_or_none(done: list[_Done | None], jobs: Sequence[Any]) -> None:
    """Run ``jobs`` at once, each result into its place in ``done``. When one stops the
    turn (a subagent's rejection or failed ask) or the turn is cancelled, the others
    are cancelled and awaited before it propagates."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        for index, result in enumerate(await asyncio.gather(*tasks)):
            done[index] = result
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for index, task in enumerate(tasks):
            if task.done() and not task.cancelled() and task.exception() is None:
                done[index] = task.result()
        raise

