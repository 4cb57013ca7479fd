"""A ChatModel that plays a script: the fake for tests, shipped in the package.

    model = ScriptedModel([call("read", path="a.txt"), reply("done")])

Each ``complete`` consumes the next item: a ``ModelReply``, or a callable
``(system, messages, tools) -> ModelReply`` when the reply depends on what the
model is shown. Every call is recorded in ``.calls`` as (system, messages, tool
names). Tool calls built by ``call``/``calls`` get ids ``call_1``, ``call_2`` …
when played, unique per model instance. ``context_window`` (default None: unknown)
is what the loop compacts against.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from dm_cc.llm.base import (
    ModelError,
    ModelReply,
    OnStream,
    ReasoningDelta,
    TextDelta,
    ToolSpec,
)
from dm_cc.session.messages import Message, ToolCall

ReplyFn = Callable[[str, list[Message], list[ToolSpec]], ModelReply]


def reply(text: str) -> ModelReply:
    return ModelReply(text=text)


def call(name: str, /, **arguments: Any) -> ModelReply:
    """A reply with one tool call (its id is assigned when the model plays it)."""
    return calls((name, arguments))


def calls(*named: tuple[str, dict[str, Any]]) -> ModelReply:
    """A reply with several tool calls: ``calls(("read", {"path": "a"}), ("list", {}))``."""
    return ModelReply(tool_calls=tuple(
        ToolCall(id="", name=name, arguments=dict(arguments), raw_arguments=json.dumps(arguments))
        for name, arguments in named))


class ScriptedModel:
    def __init__(self, replies: Iterable[ModelReply | ReplyFn], name: str = "scripted", *,
                 context_window: int | None = None) -> None:
        self.name = name
        self.context_window = context_window
        self._script = list(replies)
        self._played = 0
        self._ids = itertools.count(1)
        self.calls: list[tuple[str, list[Message], list[str]]] = []

    @property
    def remaining(self) -> int:
        return len(self._script) - self._played

    async def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                       *, temperature: float | None = None,
                       on_stream: OnStream | None = None) -> ModelReply:
        self.calls.append((system, list(messages), [tool.name for tool in tools]))
        if self._played >= len(self._script):
            raise ModelError(f"script exhausted: {self.name} had {len(self._script)} "
                             f"replies and was asked for reply {self._played + 1}")
        item = self._script[self._played]
        self._played += 1
        result = item if isinstance(item, ModelReply) else item(system, list(messages),
                                                                 list(tools))
        await asyncio.sleep(0)      # a real model yields to the event loop too
        if on_stream is not None:
            for piece in _pieces(result.reasoning or ""):
                on_stream(ReasoningDelta(piece))
            for piece in _pieces(result.text):
                on_stream(TextDelta(piece))
        ids = tuple(replace(c, id=c.id or f"call_{next(self._ids)}") for c in result.tool_calls)
        return replace(result, tool_calls=ids)


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` in about ``count`` chunks, as a stream would deliver it."""
    size = max(1, -(-len(text) // count))
    return [text[i:i + size] for i in range(0, len(text), size)]
