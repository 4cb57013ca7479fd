"""The turn loop — the one place a permission decision is enforced.

``run(prompt)`` appends the user's message and repeats ``step()`` until the model
answers without tool calls. ``step()`` is ``execute(query())``: ask the model,
then, for every tool call, derive its requests, decide them, and enforce:

* deny   → the model gets a tool error naming the rule, its source and reason;
* ask    → the Approver answers (see :mod:`dm_cc.core.approval`): once / session /
           always (remembered per agent, always also saved) / reject / cancel; a
           rejection with feedback goes to the model, one without ends the turn;
* allow  → the tool runs. When every call of a reply is allowed outright they run
           concurrently.

Control flow that ends a turn is an exception carrying its payload
(:class:`TurnStopped`), not a flag.

Before a model call whose prompt would pass COMPACT_AT of the model's context
window, older turns are summarised first (``compact()``, see core/compaction.py);
the model is shown only from the last summary on (``model_messages``).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from dm_cc.agents.builtin import Agent, named_agent
from dm_cc.core import audit, compaction
from dm_cc.core.approval import (
    REMEMBERING,
    Approval,
    ApprovalRequest,
    Approvals,
    Approver,
    AskFailed,
    suggested_rules,
)
from dm_cc.core.events import (
    AgentSwitched,
    Compacted,
    Event,
    Notice,
    ToolDecided,
    ToolFinished,
    TurnEnded,
)
from dm_cc.core.hooks import CallFacts, consult, failure_for
from dm_cc.core.prompts import system_prompt
from dm_cc.core.subagents import Subagents, lineage, lineage_key
from dm_cc.errors import UsageError
from dm_cc.llm.base import ChatModel, ModelReply, OnStream, ToolSpec, Usage
from dm_cc.permissions import Decision, Gate, Request, Rule
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.requests import path_requests
from dm_cc.permissions.rules import DOOM_LOOP
from dm_cc.policy.layers import Policy
from dm_cc.sandbox.host import Sandbox
from dm_cc.session.audit import AuditLog
from dm_cc.session.messages import Message, ToolCall, agent_in_charge
from dm_cc.session.store import Session
from dm_cc.tools.base import Tool, ToolContext, ToolOutput

DEFAULT_MAX_TURNS = 50
DOOM_LOOP_REPEATS = 3
STOPPED_SHOWN = 2_000   # characters of a stopped command's output shown with its escape question


class TurnStopped(Exception):
    """Ends the turn; ``reason`` is reported in :class:`TurnEnded`."""

    def __init__(self, reason: str, text: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


@dataclass
class Runtime:
    """Everything a loop needs that is not the session itself."""

    policy: Policy
    agents: Mapping[str, Agent]
    tools: Sequence[Tool[Any]]
    model: ChatModel
    approver: Approver
    where: PathContextDirs
    on_event: Callable[[Event], None] = lambda event: None
    on_stream: OnStream | None = None
    approvals: Approvals = field(default_factory=Approvals)
    # A subagent whose agent names a model of its own gets it from here (None: the
    # parent's model); subagents nest at most this deep.
    models: Callable[[str], ChatModel] | None = None
    max_task_depth: int = 3
    # Where shell commands run confined (None: unconfined, as in most unit tests).
    sandbox: Sandbox | None = None
    # Where every enforced decision is recorded (None: nowhere); subagents share it.
    audit: AuditLog | None = None


@dataclass(frozen=True, slots=True)
class TurnResult:
    reason: str           # done | max_turns | rejected | cancelled
    text: str


def _call_key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


def tool_specs(tools: Iterable[Tool[Any]]) -> list[ToolSpec]:
    """Each tool as the model sees it (name, description, JSON schema of its
    arguments), in order. ValueError when two tools share a name."""
    specs = [ToolSpec(tool.name, tool.description, tool.input_schema) for tool in tools]
    names = [spec.name for spec in specs]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"two tools are named {', '.join(duplicates)}")
    return specs


class Loop:
    """One session's turns. A subagent's loop has a ``parent`` (whose gate bounds
    its own), a ``depth`` (1 for a child) and a ``label`` (``explore #2``) that names
    it where it asks. ``wait_background``: a turn does not end while background
    children run (a headless run, a child); the REPL's turn ends, and the results
    come with the next one."""

    def __init__(self, session: Session, runtime: Runtime, *, max_turns: int | None = None,
                 agent: str | None = None, parent: Loop | None = None, label: str = "",
                 wait_background: bool = True) -> None:
        self.session = session
        self.rt = runtime
        self.max_turns = max_turns
        self.next_agent = agent  # the agent of the next user message, when asked for
        self.parent = parent
        # the parent's agent when it started this child: it bounds the child for good
        self.started_by: Agent | None = parent.agent if parent is not None else None
        self.depth: int = parent.depth + 1 if parent is not None else 0
        self.label = label
        self.wait_background = wait_background
        self.subagents: Subagents = Subagents(self)
        self._tools = {tool.name: tool for tool in runtime.tools}
        self._specs = {spec.name: spec for spec in tool_specs(runtime.tools)}
        self._recent: list[str] = []
        self._todos: list[dict[str, Any]] = []
        self._gate: tuple[tuple, Gate] | None = None
        self.usage = Usage()  # tokens and cost of every model call of this loop
        self._measured: compaction.Measured | None = None  # the provider's count, last call

    # ------------------------------------------------------------------ state

    @property
    def agent(self) -> Agent:
        """The agent of the last user message."""
        name = agent_in_charge(self.session.messages, self.session.info.agent)
        agent = self.rt.agents.get(name)
        if agent is None:  # its file was removed since: never guess another's rights
            raise UsageError(f"this session's agent {name!r} no longer exists; "
                             "continue it with --agent NAME")
        return agent

    def gate(self) -> Gate:
        """The compiled layers for the agent in charge; rebuilt when the agent or the
        approvals of it or of an ancestor change."""
        key = lineage_key(self)
        for warning in self.rt.approvals.drain_warnings():
            self.rt.on_event(Notice(warning))
        if self._gate is None or self._gate[0] != key:
            self._gate = (key, self.gate_with(self.rt.approvals.rules(self.agent.name)))
        return self._gate[1]

    def gate_with(self, approvals: Sequence[Rule]) -> Gate:
        """The agent in charge's gate with these approvals; a subagent's is bounded by
        every ancestor's (:meth:`~dm_cc.policy.layers.Policy.lineage_gate`)."""
        return self.rt.policy.lineage_gate(lineage(self, approvals))

    def child(self, session: Session, agent: Agent, label: str) -> Loop:
        """A subagent's loop over ``session``: this loop's approver, approvals and
        tools; its agent's model when it names one; no streaming to the screen."""
        model = self.rt.model
        if agent.model and self.rt.models is not None:
            model = self.rt.models(agent.model)
        runtime = replace(self.rt, model=model, on_stream=None)
        return Loop(session, runtime, agent=agent.name, parent=self, label=label)

    def switch_agent(self, name: str) -> None:
        """Put the primary agent ``name`` in charge, as plan_enter does: a synthetic
        user message, so the history stays. UsageError for an unknown or
        subagent-only agent."""
        agent = named_agent(self.rt.agents, name, primary=True)
        self.next_agent = None
        self._append(Message("user", f"The user switched this session to the {name} agent."
                             + (f" {agent.description}" if agent.description else ""),
                             agent=name, synthetic=True))
        self.rt.on_event(AgentSwitched(name))

    def context(self, gate: Gate | None = None) -> ToolContext:
        where = self.rt.where
        ctx = ToolContext(where=where, session_id=self.session.info.id, agent=self.agent.name,
                          plan_file=where.root / ".dm_cc" / "plans" / f"{self.session.info.id}.md",
                          todos=self._todos, subagents=self.subagents)
        if gate is not None and self.rt.sandbox is not None:
            ctx.confine = functools.partial(self.rt.sandbox.confine, gate)
        if gate is not None:
            # Only the read rules: the call's own directory (external_directory) was
            # already decided, and approved if it had to be.
            ctx.may_read = functools.lru_cache(maxsize=4096)(
                lambda path: all(gate.judge(request).action == "allow"
                                 for request in path_requests("read", path, where)
                                 if request.permission == "read"))
        return ctx

    def offered_tools(self, gate: Gate) -> list[Tool[Any]]:
        """Tools whose permission the agent's rules do not deny outright."""
        return [tool for tool in self._tools.values()
                if not gate.denies_outright(tool.entry.permission)]

    # ------------------------------------------------------------------ the loop

    async def run(self, prompt: str) -> TurnResult:
        agent = self.next_agent or self.agent.name
        self.next_agent = None
        self._append(Message("user", prompt, agent=agent))
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
        self.deliver_finished()
        window = self.rt.model.context_window
        if window and self.context_tokens() > compaction.COMPACT_AT * window:
            await self.compact(automatic=True)
        agent, system, specs = self._prompt()
        reply = await self.rt.model.complete(system, model_messages(self.session.messages), specs,
                                             temperature=agent.temperature,
                                             on_stream=self.rt.on_stream)
        self.usage = self.usage + reply.usage
        self._append(Message("assistant", reply.text, agent=agent.name,
                             tool_calls=reply.tool_calls, reasoning=reply.reasoning))
        self._measured = compaction.measured(reply.usage, len(self.session.messages))
        return reply

    async def compact(self, *, automatic: bool = False) -> Compacted | None:
        """Summarise the older turns by one model call and append the summary; the
        recent turns stay verbatim. None when there is nothing older to summarise.
        A failed call raises ModelError and leaves the session as it was."""
        before = self.context_tokens()
        done = await compaction.compact(
            self.rt.model, compaction.since_compaction(self.session.messages), agent=self.agent.name,
            keep_tokens=compaction.keep_budget(self.rt.model.context_window))
        if done is None:
            return None
        self.usage = self.usage + done.usage
        self._append(done.message)
        self._measured = None
        event = Compacted(before, self.context_tokens(), done.summarised, automatic)
        self.rt.on_event(event)
        return event

    def context_tokens(self) -> int:
        """About how many tokens the next model call's prompt holds: the provider's
        count for the last call plus an estimate of what came since; an estimate of
        the whole (system prompt, tools, messages) when there is no count."""
        messages = self.session.messages
        if self._measured is not None:
            return (self._measured.tokens
                    + compaction.message_tokens(messages[self._measured.messages:]))
        _agent, system, specs = self._prompt()
        return compaction.request_tokens(system, specs, model_messages(messages))

    def deliver_finished(self) -> None:
        """Hand the results of background children that finished to the model: a
        synthetic user message each (never between a call and its result)."""
        for text in self.subagents.take_finished():
            self._append(Message("user", text, agent=self.agent.name, synthetic=True))

    def _prompt(self) -> tuple[Agent, str, list[ToolSpec]]:
        """The agent in charge, its system prompt and the tools it is offered."""
        agent = self.agent
        ctx = self.context()
        specs = [replace(self._specs[tool.name], description=tool.describe(ctx))
                 for tool in self.offered_tools(self.gate())]
        return agent, system_prompt(agent, ctx), specs

    async def execute(self, calls: Sequence[ToolCall]) -> None:
        gate = self.gate()
        ctx = self.context(gate)
        prepared = [await self._prepare(call, gate, ctx) for call in calls]
        outputs: list[ToolOutput | None] = [None] * len(prepared)
        try:
            if all(p.decision is not None and p.decision.action == "allow" for p in prepared):
                await _all_or_none(outputs, [self._enforce_and_run(p, ctx) for p in prepared])
            else:
                for index, item in enumerate(prepared):
                    outputs[index] = await self._enforce_and_run(item, ctx)
        except TurnStopped as stop:
            self._results(prepared, outputs, missing=f"{stop.reason.capitalize()} by the user.")
            raise
        except asyncio.CancelledError:
            self._results(prepared, outputs, missing="Cancelled: the turn was stopped.")
            raise
        except AskFailed:
            self._results(prepared, outputs, missing="Not run: the turn stopped because a call "
                                                     "needed an approval no one could give.")
            raise
        self._results(prepared, outputs)

    # ------------------------------------------------------------------ enforcement

    async def _prepare(self, call: ToolCall, gate: Gate, ctx: ToolContext) -> _Prepared:
        tool = self._tools.get(call.name)
        if tool is None:
            return _Prepared(call, error=f"Unknown tool {call.name!r}. Available: "
                                         f"{', '.join(self._tools)}.")
        if call.arguments is None:
            return _Prepared(call, tool, error=f"The arguments of {call.name} were not a valid "
                             f"JSON object: {call.raw_arguments[:500]!r}. Send them again as JSON.")
        try:
            params = tool.Params.model_validate(call.arguments)
            requests = list(tool.requests(params, ctx))
        except ValidationError as exc:
            return _Prepared(call, tool, error=f"Invalid arguments for {call.name}: {exc}")
        except (ValueError, KeyError) as exc:
            return _Prepared(call, tool, error=f"Invalid arguments for {call.name}: {exc}")
        key = _call_key(call)
        self._recent = (self._recent + [key])[-DOOM_LOOP_REPEATS:]
        if len(self._recent) == DOOM_LOOP_REPEATS and len(set(self._recent)) == 1:
            requests.append(Request(DOOM_LOOP, call.name,
                                    note=f"{call.name} with the same arguments "
                                         f"{DOOM_LOOP_REPEATS} times in a row"))
        decision = await self._consult_hooks(gate.decide(requests), gate, call, tool)
        self.rt.on_event(ToolDecided(call, decision))
        return _Prepared(call, tool, params, decision)

    async def _consult_hooks(self, decision: Decision, gate: Gate, call: ToolCall,
                             tool: Tool[Any]) -> Decision:
        """The policy's decision hooks see the call's requests (core/hooks.py)."""
        arguments = call.arguments or {}
        facts = CallFacts(call.name, tool.entry.main_text(arguments), arguments, self.agent.name,
                          self.session.info.id, str(self.rt.where.cwd))
        return await consult(decision, self.rt.policy.hooks, gate, facts,
                             failure=failure_for(self.rt.approver))

    async def _enforce_and_run(self, item: _Prepared, ctx: ToolContext) -> ToolOutput:
        """THE enforcement point: every tool call passes here before it runs."""
        if item.error is not None or item.decision is None:
            return ToolOutput(item.error or "not decided", is_error=True)
        action = item.decision.action
        if action != "ask":
            self._audit(item)
        if action == "deny":
            return ToolOutput(denial_message(item.call.name, item.decision), is_error=True)
        if action == "ask":
            approval = await self._ask(item, ctx)
            if approval.answer == "cancel":
                raise TurnStopped("cancelled", "")
            if approval.answer == "reject":
                if not approval.feedback:
                    raise TurnStopped("rejected", "")
                return ToolOutput(f"{item.call.name} was not run: {approval.feedback}",
                                  is_error=True)
        output = await self._run(item, ctx)
        if output.escape is not None and ctx.confine is not None:
            return await self._escape(item, ctx, output)
        return output

    async def _escape(self, item: _Prepared, ctx: ToolContext, confined: ToolOutput) -> ToolOutput:
        """The sandbox stopped the call: run it again unconfined only if a
        ``sandbox_escape`` rule allows it or the person says so."""
        assert confined.escape is not None
        assert item.tool is not None
        gate = self.gate()
        decision = await self._consult_hooks(gate.decide([confined.escape]), gate, item.call,
                                             item.tool)
        self.rt.on_event(ToolDecided(item.call, decision))
        if decision.action != "ask":
            self._audit(replace(item, decision=decision))
        if decision.action == "ask":
            approval = await self._ask(replace(item, decision=decision), ctx,
                                       stopped=confined.output[-STOPPED_SHOWN:])
            if approval.answer == "cancel":
                raise TurnStopped("cancelled", "")
            if approval.answer == "reject":
                said = f": {approval.feedback}" if approval.feedback else "."
                return replace(confined, escape=None, output=confined.output + (
                    f"\nThe user did not let it run outside the sandbox{said}"))
        elif decision.action == "deny":
            verdict = decision.deciding[0]
            return replace(confined, escape=None, output=confined.output + (
                f"\nIt may not run outside the sandbox: {verdict.rule.describe()}. "
                "Do it inside the project or $TMPDIR, or tell the user what is needed."))
        unconfined = await self._run(item, replace(ctx, confine=None))
        return replace(unconfined, output=unconfined.output + "\n(run outside the sandbox)")

    async def _ask(self, item: _Prepared, ctx: ToolContext, stopped: str = "") -> Approval:
        assert item.tool is not None and item.decision is not None
        request = replace(self.approval_request(item, ctx), stopped=stopped)
        try:
            approval = await self.rt.approver.approve(request)
        except AskFailed:
            self._audit(item, by="headless_default", answer="fail")
            raise
        except asyncio.CancelledError:  # the turn ended while the question was open
            self._audit(item, by="cancelled", answer="cancel")
            raise
        self._audit(item, approval)
        if approval.answer in REMEMBERING:
            self.rt.approvals.remember(
                self.agent.name, request.kept(approval), save=approval.answer == "always",
                note=f"approved for {item.call.name} in session {self.session.info.id}")
        return approval

    def approval_request(self, item: _Prepared, ctx: ToolContext) -> ApprovalRequest:
        """What the person is shown: the call, why it asks, and what "always" would
        remember -- only rules that would in fact allow the request next time."""
        assert item.tool is not None and item.decision is not None
        arguments = dict(item.call.arguments or {})
        approvals = self.rt.approvals.rules(self.agent.name)
        requests = [v.request for v in item.decision.verdicts]
        # a hook's ask comes back whatever was approved: nothing to remember for it
        asking = [v.request for v in item.decision.verdicts
                  if v.action == "ask" and v.layer != "hook"]
        hooked = any(v.layer == "hook" and v.action != "allow" for v in item.decision.verdicts)

        def covers(rule: Rule) -> bool:  # judged by the real gate: ceilings, managed rules
            gate = self.gate_with((*approvals, rule))
            return any(gate.judge(request).action == "allow"
                       for request in asking if request.permission == rule.permission)

        suggestions = tuple(rule for rule in suggested_rules(asking, item.call.name)
                            if covers(rule))
        description = arguments.get("description")
        return ApprovalRequest(
            item.call.name, arguments, item.decision, item.tool.preview(item.params, ctx),
            agent=self.agent.name, asker=self.label,
            description=description if isinstance(description, str) else "",
            main_input=item.tool.entry.main_text(arguments), suggestions=suggestions,
            covers=covers, call_id=item.call.id,
            settled=lambda: not hooked and self.gate().decide(requests).action == "allow")

    async def _run(self, item: _Prepared, ctx: ToolContext) -> ToolOutput:
        assert item.tool is not None and item.params is not None
        try:
            return await item.tool.run(item.params, replace(ctx, call_id=item.call.id))
        except (asyncio.CancelledError, TurnStopped, AskFailed):  # a subagent's stop is ours
            raise
        except Exception as exc:  # a tool bug must not kill the session
            return ToolOutput(f"{item.call.name} failed: {type(exc).__name__}: {exc}",
                              is_error=True)

    # ------------------------------------------------------------------ recording

    def _audit(self, item: _Prepared, approval: Approval | None = None, *,
               by: str | None = None, answer: str | None = None) -> None:
        """Record a decision once its outcome is known (core/audit.py)."""
        if self.rt.audit is None or item.decision is None:
            return
        if approval is not None and approval.by == "approval":  # covered by an answer meanwhile
            requests = [v.request for v in item.decision.verdicts]
            by = audit.decided_by(self.gate().decide(requests))
        entry = audit.record(self, item.call, item.tool, item.decision, approval, by=by,
                             answer=answer)
        audit.write(self.rt.audit, entry, self.rt.on_event)

    def _append(self, message: Message) -> None:
        self.session.append(message)

    def _result(self, call: ToolCall, output: ToolOutput) -> None:
        self._append(Message("tool", output.output, agent=self.agent.name, tool_call_id=call.id,
                             tool_name=call.name, is_error=output.is_error))
        self.rt.on_event(ToolFinished(call, output))

    def _results(self, prepared: Sequence[_Prepared], outputs: Sequence[ToolOutput | None],
                 missing: str | None = None) -> None:
        """Record one result per call, in call order; calls that never ran (or did
        not finish) get ``missing``. Then apply an agent switch (plan_enter / plan_exit)."""
        switch: ToolOutput | None = None
        for item, done in zip(prepared, outputs, strict=True):
            output = done if done is not None else ToolOutput(missing or "Not run.",
                                                              is_error=True)
            self._result(item.call, output)
            if output.switch_agent and not output.is_error:
                switch = output
        if switch is not None and switch.switch_agent is not None:
            self._append(Message("user", switch.switch_message or "", agent=switch.switch_agent,
                                 synthetic=True))
            self.rt.on_event(AgentSwitched(switch.switch_agent))


async def _all_or_none(outputs: list[ToolOutput | None], jobs: Sequence[Any]) -> None:
    """Run ``jobs`` at once, each output into its place in ``outputs``. When one stops
    the turn (a rejection or a failed ask in a subagent) or the turn is cancelled,
    the others are cancelled and awaited before it propagates."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        for index, done in enumerate(await asyncio.gather(*tasks)):
            outputs[index] = done
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for index, task in enumerate(tasks):
            if task.done() and not task.cancelled() and task.exception() is None:
                outputs[index] = task.result()
        raise


@dataclass
class _Prepared:
    call: ToolCall
    tool: Tool[Any] | None = None
    params: BaseModel | None = None
    decision: Decision | None = None
    error: str | None = None


def denial_message(tool: str, decision: Decision) -> str:
    lines = [f"Permission denied: {tool} was not run."]
    for verdict in decision.deciding:
        rule = verdict.rule
        lines.append(f"- {verdict.request.permission} {verdict.request.pattern!r} is denied by "
                     f"rule `{rule.action} {rule.permission} {rule.pattern}` at {rule.source}"
                     + (f": {rule.reason}" if rule.reason else "")
                     + (f" ({verdict.note})" if verdict.note else ""))
    lines.append("Do not retry this; find another way or explain to the user what is needed.")
    return "\n".join(lines)


def model_messages(messages: Sequence[Message]) -> list[Message]:
    """The history as the model must see it: from the last compaction summary on
    (the summary, the turns it kept, what came after), every tool call answered (a
    call left without a result by a cancellation or crash gets one saying so)."""
    window = compaction.since_compaction(messages)
    answered = {m.tool_call_id for m in window if m.role == "tool"}
    out: list[Message] = []
    for message in window:
        out.append(message)
        if message.role == "assistant":
            for call in message.tool_calls:
                if call.id not in answered:
                    out.append(Message("tool", "Interrupted: this call did not run.",
                                       agent=message.agent, tool_call_id=call.id,
                                       tool_name=call.name, is_error=True))
    return out
