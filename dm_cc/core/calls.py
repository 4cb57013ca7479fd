"""A reply's tool calls, each from the model's arguments to its output: the loop's
``execute`` half.

    calls = Calls(tools, settle)
    await calls.reply(reply.tool_calls, ctx, record)   # record(calls, outputs): one each
      judged = await calls.judge(call, ctx)   # its tool, params, requests and decision
      done = await calls.enforce(judged, ctx) # settled; run only if allowed; its output

Every call of a reply is judged first; when each is allowed outright they run at
once (:func:`all_or_none`), else one after another, and a no without a word stops
the calls after it.

Tools describe what a call touches (requests); :mod:`dm_cc.core.settle` decides
and asks; this module runs what was allowed: confined when the session has a
sandbox, and -- when the sandbox stopped it -- again outside only if its
``sandbox_escape`` requests (one per simple command) are settled as allowed.
Nothing here decides.

A call cancelled with the turn leaves what its tool had (``ToolContext.on_cancel``:
a command's output so far) or, cancelled at a question after it ran, its output
and that nothing of it landed; that is its output in place of "Cancelled", so the
person and the model see what it printed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from dm_cc.core import effects
from dm_cc.core.approval import AskFailed
from dm_cc.core.settle import Judged, Settle, TurnStopped, denial_message
from dm_cc.permissions import DOOM_LOOP, Request
from dm_cc.session import ToolCall
from dm_cc.tools import Tool, ToolContext, ToolOutput

DOOM_LOOP_REPEATS = 3
STOPPED_SHOWN = 2_000   # characters of a stopped command's output shown with its escape question

logger = logging.getLogger(__name__)    # a tool's traceback, with --verbose (cli/options.py)


@dataclass(frozen=True, slots=True)
class Done:
    """A call's output, and whether the person's answer to it ends the turn."""

    output: ToolOutput
    stops: bool = False


class Calls:
    """The tools of a session and its settle path; it remembers the last calls, so the
    same call several times running is asked about (``doom_loop``)."""

    def __init__(self, tools: Mapping[str, Tool[Any]], settle: Settle, *,
                 on_output: Callable[[ToolCall, str | None], None] | None = None) -> None:
        self.tools = tools
        self.settle = settle
        self.on_output = on_output      # what a running call prints, as it comes; None: ended
        self._recent: list[str] = []
        self._cut: dict[str, ToolOutput] = {}   # by call id: what a cancelled call had

    async def judge(self, call: ToolCall, ctx: ToolContext) -> Judged | ToolOutput:
        """The call's tool, params and decision; a tool error when it names no tool or
        its arguments do not fit."""
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolOutput(f"Unknown tool {call.name!r}. Available: {', '.join(self.tools)}.",
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

    async def enforce(self, item: Judged | ToolOutput, ctx: ToolContext) -> Done:
        """THE enforcement point: a call runs here only when it was settled as allowed."""
        if isinstance(item, ToolOutput):
            return Done(item)
        settled = await self.settle.settle(item, ctx)
        if settled.decision.action == "deny":
            return Done(ToolOutput(denial_message(item.call.name, settled.decision), is_error=True))
        if not settled.runs:
            said = f"{item.call.name} was not run: {settled.feedback}" if settled.feedback \
                else "Rejected by the user."
            return Done(ToolOutput(said, is_error=True), settled.stops)
        output = await self._run(item, ctx)
        try:
            if output.escape and ctx.confine is not None:
                return await self._escape(item, ctx, output, settled.answer is not None)
            return await self._land(item, ctx, output, settled.answer is not None)
        except asyncio.CancelledError:   # at a question after it ran: its output stays
            landed = "; what it changed in the project did not land" if output.landing else ""
            self._cut.setdefault(item.call.id, replace(output, is_error=True, output=(
                f"{output.output}\n(the turn was cancelled while the user was asked about "
                f"this command{landed})")))
            raise

    async def reply(self, calls: Sequence[ToolCall], ctx: ToolContext,
                    record: Callable[[Sequence[ToolCall], list[ToolOutput]], None]) -> None:
        """Settle every call of a reply and run those allowed, then ``record`` one output
        per call, in call order -- also before a stop or a cancel propagates, so every
        call has its result; then end the turn if the person said no without a word."""
        judged = [await self.judge(call, ctx) for call in calls]
        done: list[Done | None] = [None] * len(judged)
        try:
            if all(isinstance(j, Judged) and j.decision.action == "allow" for j in judged):
                await all_or_none(done, [self.enforce(j, ctx) for j in judged])
            for index, item in enumerate(judged):
                if done[index] is None and not any(d is not None and d.stops for d in done):
                    done[index] = await self.enforce(item, ctx)
        except TurnStopped as stop:
            record(calls, self._outputs(calls, done, f"{stop.reason.capitalize()} by the user."))
            raise
        except asyncio.CancelledError:
            record(calls, self._outputs(calls, done, "Cancelled: the turn was stopped."))
            raise
        except AskFailed:
            record(calls, self._outputs(calls, done, "Not run: the turn stopped because a call "
                                                     "needed an approval no one could give."))
            raise
        record(calls, self._outputs(calls, done, "Rejected by the user."))
        if any(d is not None and d.stops for d in done):
            raise TurnStopped("rejected", "")

    def _outputs(self, calls: Sequence[ToolCall], done: Sequence[Done | None],
                 missing: str) -> list[ToolOutput]:
        """Each call's output: what it gave; for one that did not finish, what it had
        when it was cancelled with the turn (then forgotten: the next reply's calls
        start afresh), else ``missing``. The reply's decisions are made durable first."""
        cut, self._cut = self._cut, {}
        self.settle.durable(head=True)   # the reply's decisions on disk, and the head
        return [result.output if result is not None
                else cut.get(call.id, ToolOutput(missing, is_error=True))
                for call, result in zip(calls, done, strict=True)]

    async def _land(self, item: Judged, ctx: ToolContext, output: ToolOutput,
                    approved: bool) -> Done:
        """A command run as a transaction: its changes judged, asked about, applied
        (:mod:`dm_cc.core.effects`); ``approved``: the person said yes to its text.
        A no to its changes without a word ends the turn, as at every question."""
        if output.landing is None:
            return Done(output)
        return Done(*await effects.land(self.settle, item, ctx, output, approved=approved))

    async def _escape(self, item: Judged, ctx: ToolContext, confined: ToolOutput,
                      approved: bool) -> Done:
        """The sandbox stopped the call: it runs again unconfined only if its
        ``sandbox_escape`` requests (one per simple command) are settled as allowed
        (what the confined run changed is then dropped: the command does it again);
        else the confined result stands, and its changes are judged."""
        try:
            settled = await self.settle(item.call, item.tool, item.params, confined.escape,
                                        ctx, stopped=confined.output[-STOPPED_SHOWN:])
        except BaseException:
            if confined.landing is not None:
                confined.landing.finish()
            raise
        if settled.decision.action == "deny":
            denied = "; ".join(f"{v.request.pattern!r} by {v.rule.describe()}"
                               for v in settled.decision.deciding)
            said = (f"It may not run outside the sandbox: {denied}. Do it inside the "
                    "project or $TMPDIR, or tell the user what is needed.")
        elif not settled.runs:
            said = "The user did not let it run outside the sandbox" + (
                f": {settled.feedback}" if settled.feedback else ".")
        else:
            if confined.landing is not None:
                confined.landing.finish()
            unconfined = await self._run(item, replace(ctx, confine=None))
            return Done(replace(unconfined, output=unconfined.output + "\n(run outside the sandbox)"))
        landed = await self._land(item, ctx, confined, approved)
        return Done(replace(landed.output, escape=(), output=f"{landed.output.output}\n{said}"),
                    settled.stops or landed.stops)

    async def _run(self, item: Judged, ctx: ToolContext) -> ToolOutput:
        call, show = item.call, self.on_output

        def cut(output: ToolOutput) -> None:
            self._cut[call.id] = output

        await self.settle.before_effects()   # its decision is on disk before it acts
        try:
            return await item.tool.run(item.params, replace(
                ctx, call_id=call.id, on_cancel=cut,
                on_output=(lambda text: show(call, text)) if show is not None else None))
        except (asyncio.CancelledError, TurnStopped, AskFailed):  # a subagent's stop is ours
            raise
        except Exception as exc:  # a tool bug must not kill the session
            logger.exception("%s (%s) failed", item.call.name, item.call.id)
            return ToolOutput(f"{item.call.name} failed: {type(exc).__name__}: {exc}",
                              is_error=True)
        finally:
            if show is not None:
                show(call, None)


async def all_or_none(done: list[Done | None], jobs: Sequence[Any]) -> None:
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
