"""A model reply for the agent in charge: the loop's ``query`` half.

    replies = Replies(session, model, offer, on_event=…)
    reply = await replies.next()     # prompt built, compacted first if it would not fit,
                                     # the reply recorded in the session and counted
    await replies.compact()          # /compact; replies.tokens(), replies.report(): /context
    agent, system, specs = replies.prompt()   # what the next call would send

``offer`` says, at each call, the agent in charge, what its tools are told (the
:class:`~dm_cc.tools.ToolContext`) and the tools it is offered (its rights decide
that, not this module). From them the system prompt is built (core/prompts.py);
an instruction file left out of it is told once, as a notice. Before a call whose
prompt would pass COMPACT_AT of the model's context window, older turns are
summarised first (core/compaction.py); a call the provider refuses as too long
all the same (ContextTooLong) is compacted once and made again. Nothing here
decides or runs a tool.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from dm_cc.agents import Agent
from dm_cc.core import compaction
from dm_cc.core.events import Compacted, Event, Notice
from dm_cc.core.instructions import LeftOut
from dm_cc.core.prompts import SectionSize, build_prompt, tool_specs
from dm_cc.llm import ChatModel, ContextTooLong, ModelReply, OnStream, ToolSpec, Usage
from dm_cc.session import Message, Session
from dm_cc.tools import Tool, ToolContext

START_OVER = "start a new session or change to a model with a larger one (/model)"

logger = logging.getLogger(__name__)    # written only with --verbose (cli/options.py)

Offer = Callable[[], tuple[Agent, ToolContext, Sequence[Tool[Any]]]]
"""The agent in charge, what its tools are told, and the tools it is offered."""


class Replies:
    """One session's model calls. ``model`` gives the model as it is now (``/model``
    changes it mid-session); ``temperature`` is for an agent that sets none."""

    def __init__(self, session: Session, model: Callable[[], ChatModel], offer: Offer, *,
                 on_event: Callable[[Event], None], on_stream: OnStream | None = None,
                 temperature: float | None = None) -> None:
        self.session = session
        self.model = model
        self.offer = offer
        self.on_event = on_event
        self.on_stream = on_stream
        self.temperature = temperature
        self.window = compaction.Window(session)
        self.usage = Usage()            # of every model call made here, summaries too
        self._told: set[LeftOut] = set()  # instruction files left out, said once each

    async def next(self) -> ModelReply:
        """The reply of one model call for the agent in charge, recorded in the session."""
        window = self.model().context_window
        if window and self.tokens() > compaction.COMPACT_AT * window:
            await self.compact(automatic=True)
        agent, reply = await self._complete_fitting()
        for notice in reply.notices:     # e.g. thinking the model does not support
            self.on_event(Notice(notice))
        self.usage = self.usage + reply.usage
        self.session.append(Message("assistant", reply.text, agent=agent.name,
                                    tool_calls=reply.tool_calls, reasoning=reply.reasoning,
                                    reasoning_blocks=reply.reasoning_blocks))
        self.window.counted(reply.usage)
        return reply

    def rewound(self) -> None:
        """The session's history was cut back (/rewind): its last count no longer holds."""
        self.window = compaction.Window(self.session)

    async def compact(self, *, automatic: bool = False,
                      context_window: int | None = None) -> Compacted | None:
        """Summarise the older turns (core/compaction.py), keeping verbatim what fits
        ``context_window`` (default: the model's); None: nothing to summarise."""
        before = self.tokens()
        done = await self.window.compact(self.model(), self.offer()[0].name,
                                         context_window=context_window)
        if done is None:
            return None
        self.usage = self.usage + done.usage
        event = Compacted(before, self.tokens(), done.summarised, automatic)
        self.on_event(event)
        return event

    def tokens(self) -> int:
        """About how many tokens the next model call's prompt holds."""
        return self.window.tokens(lambda: self.prompt()[1:])

    def report(self) -> list[SectionSize]:
        """What the next model call's prompt holds, part by part, each with its
        estimated size (``/context``, whose total is their sum): the system prompt's
        sections (an instruction file left out, with why), the tools' schemas (dm_cc's
        own, the MCP servers'), the messages the model is shown."""
        agent, ctx, tools = self.offer()
        return compaction.prompt_report(agent, ctx, tool_specs(tools, ctx),
                                        self.window.messages())

    def prompt(self) -> tuple[Agent, str, list[ToolSpec]]:
        """The agent in charge, its system prompt and the tools it is offered; an
        instruction file left out of the prompt is told once (a notice, not a question)."""
        agent, ctx, tools = self.offer()
        prompt = build_prompt(agent, ctx)
        for left_out in prompt.left_out:
            if left_out not in self._told:
                self._told.add(left_out)
                self.on_event(Notice(left_out.notice()))
        return agent, prompt.text, tool_specs(tools, ctx)

    async def _complete_fitting(self) -> tuple[Agent, ModelReply]:
        """One model call for the agent in charge. Refused as longer than the model's
        context window, the older turns are compacted and the call made once more;
        ContextTooLong, saying what to do, when nothing is older or it is still too long."""
        agent, system, specs = self.prompt()
        try:
            return agent, await self._complete(agent, system, specs)
        except ContextTooLong as error:
            await self._compact_to_fit(error)
        agent, system, specs = self.prompt()
        try:
            return agent, await self._complete(agent, system, specs)
        except ContextTooLong as error:
            raise ContextTooLong(f"{error}, even after compacting the conversation; "
                                 f"{START_OVER}", error.limit) from error

    async def _compact_to_fit(self, error: ContextTooLong) -> None:
        """Compact after the provider refused the prompt as too long, keeping what the
        window it named (else the model's) allows; ContextTooLong when that cannot be."""
        model = self.model()
        limit = error.limit or model.context_window
        too_long = f"the conversation is too long for {model.name}'s context window" + \
                   (f" ({limit} tokens)" if limit else "")
        self.on_event(Notice(f"{too_long}: compacting it and trying again"))
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
        model = self.model()
        temperature = agent.temperature if agent.temperature is not None else self.temperature
        messages = self.window.messages()
        logger.debug("model call: %s for %s (%s), %d messages, %d tools, temperature %s",
                     model.name, agent.name, self.session.info.id, len(messages),
                     len(specs), temperature)
        started = time.monotonic()
        reply = await model.complete(system, messages, specs, temperature=temperature,
                                     on_stream=self.on_stream)
        reply = replace(reply, tool_calls=tuple(call.with_own_id() for call in reply.tool_calls))
        logger.debug("model reply after %.2f s: %d characters, calls %s, usage %s",
                     time.monotonic() - started, len(reply.text),
                     [f"{c.name} {c.id} (the model's {c.wire_id})" for c in reply.tool_calls],
                     reply.usage)
        return reply
