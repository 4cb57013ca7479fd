"""A ChatModel that plays a script: the fake for tests, shipped in the package.

    model = ScriptedModel([call("read", path="a.txt"), reply("done")])

Each ``complete`` consumes the next item: a ``ModelReply``, a callable
``(system, messages, tools) -> ModelReply`` when the reply depends on what the
model is shown, or ``Delayed(item, seconds)`` for a model that takes its time.
Every call is recorded in ``.calls`` as (system, messages, tool names), and the
temperature it asked for in ``.temperatures``. Tool
calls built by ``call``/``calls`` get ids ``call_1``, ``call_2`` … when played,
unique per model instance. ``context_window`` (default None: unknown)
is what the loop compacts against.

Subagents share their parent's model and may run at the same time, so the order
in which they ask is not fixed: ``tasks={"find auth": [...]}`` gives each its own
script, played for a conversation whose first user message contains the key
(the subagent's prompt); every other conversation plays the main script.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.llm.base import (
    ModelError,
    ModelReply,
    OnStream,
    ReasoningDelta,
    TextDelta,
    ToolSpec,
)
from dm_cc.session import Message, ToolCall

ReplyFn = Callable[[str, list[Message], list[ToolSpec]], ModelReply]


class Delayed(NamedTuple):
    """A scripted reply that comes after ``seconds`` (a slow model, for the spinner)."""

    item: ModelReply | ReplyFn
    seconds: float


Item = ModelReply | ReplyFn | Delayed


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


class _Script:
    def __init__(self, name: str, items: Iterable[Item]) -> None:
        self.name = name
        self.items = list(items)
        self.played = 0

    def next(self) -> Item:
        if self.played >= len(self.items):
            raise ModelError(f"script exhausted: {self.name} had {len(self.items)} "
                             f"replies and was asked for reply {self.played + 1}")
        self.played += 1
        return self.items[self.played - 1]


class ScriptedModel:
    def __init__(self, replies: Iterable[Item], name: str = "scripted", *,
                 context_window: int | None = None,
                 tasks: Mapping[str, Iterable[Item]] | None = None) -> None:
        self.name = name
        self.context_window = context_window
        self._script = _Script(name, replies)
        self._tasks = {key: _Script(f"{name} (task {key!r})", items)
                       for key, items in (tasks or {}).items()}
        self._ids = itertools.count(1)
        self.calls: list[tuple[str, list[Message], list[str]]] = []
        self.temperatures: list[float | None] = []   # asked for, call by call

    @property
    def remaining(self) -> int:
        return sum(len(s.items) - s.played for s in (self._script, *self._tasks.values()))

    def _script_for(self, messages: Sequence[Message]) -> _Script:
        first = next((m.content for m in messages if m.role == "user"), "")
        return next((script for key, script in self._tasks.items() if key in first),
                    self._script)

    async def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                       *, temperature: float | None = None,
                       on_stream: OnStream | None = None) -> ModelReply:
        self.calls.append((system, list(messages), [tool.name for tool in tools]))
        self.temperatures.append(temperature)
        item = self._script_for(messages).next()
        if isinstance(item, Delayed):
            await asyncio.sleep(item.seconds)
            item = item.item
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


def load_script(path: Path, name: str = "scripted") -> ScriptedModel:
    """The model a YAML (or JSON) file scripts, for ``--model scripted:PATH``: a list
    of replies, each ``{text: …}``, ``{tool: NAME, args: {…}}``, ``{calls: [{tool,
    args}, …]}`` (text may go with calls), optionally with ``reasoning: TEXT`` (the
    model's thinking, streamed before the rest, as a reasoning model's is) and
    ``delay: SECONDS``; or a
    mapping ``{replies: [...], tasks: {PROMPT_PART: [...]}}`` giving subagents their
    own replies (see :class:`ScriptedModel`). ``echo: true`` makes a reply's text
    end with the last tool result the model was sent (what a test sees the model
    was told). ValueError naming the entry when one is malformed."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the script: {exc}") from None
    tasks: dict[str, list[Item]] = {}
    if isinstance(data, dict) and data.keys() <= {"replies", "tasks"} \
            and isinstance(data.get("tasks", {}), dict):
        for key, entries in data.get("tasks", {}).items():
            tasks[str(key)] = _entries(entries, f"{path}: tasks: {key}")
        data = data.get("replies", [])
    return ScriptedModel(_entries(data, str(path)), name=name, tasks=tasks)


def _entries(entries: Any, where: str) -> list[Item]:
    if not isinstance(entries, list):
        raise ValueError(f"{where}: a script is a list of replies (or a mapping of replies "
                         "and tasks)")
    return [_entry(entry, f"{where}: reply {number}") for number, entry in enumerate(entries, 1)]


def _entry(entry: Any, where: str) -> Item:
    if not isinstance(entry, dict) or not entry.keys() <= {"text", "tool", "args", "calls",
                                                              "reasoning", "delay", "echo"}:
        raise ValueError(f"{where}: expected a mapping of text, tool, args, calls, "
                         "reasoning, delay, echo")
    if not isinstance(entry.get("reasoning", ""), str):
        raise ValueError(f"{where}: reasoning is text")
    named = [(entry["tool"], entry.get("args") or {})] if "tool" in entry else []
    for one in entry.get("calls") or []:
        if not isinstance(one, dict) or "tool" not in one:
            raise ValueError(f"{where}: each of calls needs a tool")
        named.append((one["tool"], one.get("args") or {}))
    if any(not isinstance(name, str) or not isinstance(args, dict) for name, args in named):
        raise ValueError(f"{where}: tool is a name and args a mapping")
    result = calls(*named) if named else ModelReply()
    result = replace(result, text=str(entry.get("text", "")),
                     reasoning=entry.get("reasoning") or None)
    item: ModelReply | ReplyFn = _echoing(result) if entry.get("echo") else result
    delay = entry.get("delay")
    if delay is None:
        return item
    if not isinstance(delay, int | float) or delay < 0:
        raise ValueError(f"{where}: delay is a number of seconds")
    return Delayed(item, float(delay))


def _echoing(result: ModelReply) -> ReplyFn:
    """``result`` with the last tool result the model is sent after its text."""
    def play(system: str, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        told = next((m.content for m in reversed(messages) if m.role == "tool"), "(none)")
        return replace(result, text=f"{result.text}{told}")

    return play
