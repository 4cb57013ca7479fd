"""Compaction: older turns replaced, for the model only, by a summary.

    window  = since_compaction(messages)       what the model is shown now
    start   = keep_from(window, budget)        the recent turns kept verbatim
    summary = ONE model call over window[:start], as a transcript, no tools offered
    -> Message("user", SUMMARY_PREFIX + summary, synthetic=True, compaction=True,
               kept_from=window[start].id)     appended to the session

The session file keeps every message (append-only). From then on the model is
shown the last summary, the messages it kept (they come before it in the file)
and everything after it. A failed summarisation raises :class:`ModelError` before
anything is appended, so the history is unchanged.

Sizes are estimated at CHARS_PER_TOKEN characters a token; a session's
:class:`Window` prefers the provider's own count for its last call when it has
one (:class:`Measured`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from dm_cc.agents import Agent
from dm_cc.config import counted
from dm_cc.core.prompts import (
    CHARS_PER_TOKEN,
    SectionSize,
    context_report,
    spec_chars,
    tool_sizes,
)
from dm_cc.llm import ChatModel, ModelError, ToolSpec, Usage
from dm_cc.session import Message, Session, ToolCall
from dm_cc.tools import ToolContext

COMPACT_AT = 0.8              # compact before a call whose prompt passes this share of the window
KEEP_USER_TURNS = 2           # the last turns the user typed are kept whole …
KEEP_SHARE = 0.25             # … when they fit in this share of the window,
KEEP_TOKENS = 20_000          # or in this many tokens when the window is unknown
RESULT_CHARS = 4_000          # of one tool result in the transcript the summariser reads

SUMMARY_PREFIX = "[dm_cc: conversation compacted]"

SUMMARY_SYSTEM = """You summarise a coding session between a user and dm_cc, a coding \
assistant working in the user's terminal under a permission policy. Your summary replaces \
the earlier conversation: the assistant continues the work from it and from the most recent \
messages, which it still sees. Write for the assistant, under these headings:
1. Requests: what the user asked for, in order; quote the latest request and every explicit \
constraint or preference.
2. Decisions: what was decided, and the user's feedback, approvals and rejections.
3. Files: files read, created or changed, with the details that matter (paths, functions, \
key lines).
4. Commands: what was run and what it showed; errors and how they were fixed.
5. Denials: tool calls the permission policy denied, with the rule; they must not be retried.
6. State: where the work stands and the next steps.
Be complete but concise. Do not invent anything. Do not call tools."""

SUMMARY_REQUEST = "Summarise this conversation:\n\n"


class Measured(NamedTuple):
    """The provider's count for one model call: its prompt plus its reply, and how
    many session messages there were once the reply was recorded."""

    tokens: int
    messages: int


class Compaction(NamedTuple):
    message: Message      # the summary, to append
    summarised: int       # how many messages of the window it stands for
    usage: Usage          # of the summarisation call


def measured(usage: Usage, messages: int) -> Measured | None:
    """The provider's count from a reply's usage (None when it gave none), with how
    many session messages there were once that reply was recorded."""
    if not usage.prompt_tokens:
        return None
    return Measured(usage.prompt_tokens + usage.completion_tokens, messages)


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def message_tokens(messages: Iterable[Message]) -> int:
    """About what ``messages`` cost in a prompt: content, tool calls, a little framing."""
    return sum(4 + estimate_tokens(m.content + "".join(c.name + _arguments(c)
                                                       for c in m.tool_calls))
               for m in messages)


def prompt_report(agent: Agent, ctx: ToolContext, specs: Sequence[ToolSpec],
                  messages: Sequence[Message]) -> list[SectionSize]:
    """What a model call's prompt holds, part by part, each with its estimated size
    (``/context``, whose total is their sum): the system prompt's sections (an
    instruction file left out, with why), the tools' schemas (dm_cc's own, the MCP
    servers'), the messages the model is shown."""
    return [*context_report(agent, ctx), *tool_sizes(specs),
            SectionSize(f"{len(messages)} messages", sum(len(m.content) for m in messages),
                        message_tokens(messages), group="messages")]


def request_tokens(system: str, specs: Sequence[ToolSpec], messages: Sequence[Message]) -> int:
    """About what one model call's prompt costs: system prompt, tool schemas, messages."""
    tools = sum(-(-spec_chars(s) // CHARS_PER_TOKEN) for s in specs)
    return estimate_tokens(system) + tools + message_tokens(messages)


def keep_budget(context_window: int | None) -> int:
    return int(context_window * KEEP_SHARE) if context_window else KEEP_TOKENS


def since_compaction(messages: Sequence[Message]) -> list[Message]:
    """What the model is shown: the last compaction summary, the messages it kept
    (other summaries among them left out: it summarised those), then everything
    after it. Without a summary, every message."""
    for index in range(len(messages) - 1, -1, -1):
        summary = messages[index]
        if summary.compaction:
            start = next((i for i in range(index) if messages[i].id == summary.kept_from), index)
            kept = [m for m in messages[start:index] if not m.compaction]
            return [summary, *kept, *messages[index + 1:]]
    return list(messages)


def model_messages(messages: Sequence[Message]) -> list[Message]:
    """The history as the model must see it: from the last compaction summary on
    (the summary, the turns it kept, what came after), every tool call answered (a
    call left without a result by a cancellation or crash gets one saying so)."""
    window = since_compaction(messages)
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


def keep_from(window: Sequence[Message], budget: int) -> int:
    """Where the verbatim part of ``window`` begins: at the last KEEP_USER_TURNS turns
    the user typed if they fit in ``budget`` tokens, else at the first later user or
    assistant message whose suffix fits (a tool call is never split from its results,
    which follow it). ``len(window)`` keeps nothing; 0 summarises nothing."""
    turns = [i for i, m in enumerate(window) if m.role == "user" and not m.synthetic]
    floor = turns[-KEEP_USER_TURNS] if len(turns) >= KEEP_USER_TURNS else 0
    start, size = len(window), 0
    for index in range(len(window) - 1, floor - 1, -1):
        size += message_tokens(window[index:index + 1])
        if size > budget:
            break
        if window[index].role != "tool":
            start = index
    return start


def transcript(messages: Iterable[Message]) -> str:
    """The messages as plain text for the summariser: no tool-call structure, so any
    provider takes it; long tool results are cut to RESULT_CHARS."""
    parts: list[str] = []
    for m in messages:
        if m.compaction:
            parts.append(f"[summary of the conversation before]\n"
                         f"{m.content.removeprefix(SUMMARY_PREFIX).strip()}")
        elif m.role == "user":
            parts.append(f"[{'dm_cc' if m.synthetic else 'user'}]\n{m.content}")
        elif m.role == "assistant":
            calls = [f"[calls {c.name} {_arguments(c)}]"
                     for c in m.tool_calls]
            parts.append("\n".join(["[assistant]", *([m.content] if m.content else []), *calls]))
        else:
            content = m.content
            if len(content) > RESULT_CHARS:
                content = (content[:RESULT_CHARS]
                           + f"\n[… {counted(len(content) - RESULT_CHARS, 'more character')} left out]")
            parts.append(f"[{m.tool_name} {'error' if m.is_error else 'result'}]\n{content}")
    return "\n\n".join(parts)


async def compact(model: ChatModel, window: Sequence[Message], *, agent: str,
                  keep_tokens: int) -> Compaction | None:
    """Summarise the part of ``window`` before the turns kept verbatim by ONE call to
    ``model``. None when there is nothing to summarise. ModelError when the call fails
    or gives no summary; nothing is changed either way: the caller appends."""
    start = keep_from(window, keep_tokens)
    older = window[:start]
    if all(m.compaction for m in older):
        return None
    request = Message("user", SUMMARY_REQUEST + transcript(older), agent=agent, synthetic=True)
    reply = await model.complete(SUMMARY_SYSTEM, [request], [])
    summary = reply.text.strip()
    if not summary:
        raise ModelError(f"model {model.name} gave no summary of the conversation; "
                         "nothing was compacted")
    message = Message("user", f"{SUMMARY_PREFIX} The earlier part of this session is "
                              f"summarised below; the messages after this one are verbatim."
                              f"\n\n{summary}",
                      agent=agent, synthetic=True, compaction=True,
                      kept_from=window[start].id if start < len(window) else None)
    return Compaction(message, len(older), reply.usage)


def _arguments(call: ToolCall) -> str:
    if call.arguments is None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


class Window:
    """A session as the model is shown it (:func:`model_messages`), and about how
    many tokens that is: the provider's count for the last call plus an estimate of
    what came since, or an estimate of the whole prompt when there is no count."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._measured: Measured | None = None

    def messages(self) -> list[Message]:
        return model_messages(self.session.messages)

    @property
    def measured(self) -> bool:
        """Whether :meth:`tokens` starts from the provider's count (not an estimate)."""
        return self._measured is not None

    def counted(self, usage: Usage) -> None:
        """The provider's count for the call whose reply was just appended."""
        self._measured = measured(usage, len(self.session.messages))

    def tokens(self, prompt: Callable[[], tuple[str, Sequence[ToolSpec]]]) -> int:
        """About how many tokens the next call's prompt holds; ``prompt`` gives its
        system prompt and tools, asked only when there is no count to start from."""
        messages = self.session.messages
        if self._measured is not None:
            return self._measured.tokens + message_tokens(messages[self._measured.messages:])
        system, specs = prompt()
        return request_tokens(system, specs, model_messages(messages))

    async def compact(self, model: ChatModel, agent: str, *,
                      context_window: int | None = None) -> Compaction | None:
        """Summarise the older turns by one call to ``model`` and append the summary
        (None: nothing older to summarise); ModelError leaves the session as it was.
        ``context_window``: the window to keep turns for, when the provider named
        one (it refused a prompt as too long), else the model's."""
        done = await compact(model, since_compaction(self.session.messages), agent=agent,
                             keep_tokens=keep_budget(context_window or model.context_window))
        if done is not None:
            self.session.append(done.message)
            self._measured = None
        return done
