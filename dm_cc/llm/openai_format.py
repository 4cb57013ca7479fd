"""A request as litellm takes it: OpenAI's chat format, and Claude's cache breakpoints.

dm_cc's conversation (:class:`~dm_cc.session.Message`, :class:`~dm_cc.llm.base.ToolSpec`)
becomes OpenAI-format ``messages`` and ``tools`` here (:func:`to_openai_messages`,
:func:`to_openai_tools`), a streamed call's argument text becomes a dict
(:func:`parse_arguments`), and a request to a Claude gets the ``cache_control``
breakpoints Anthropic caches by (:func:`with_cache_breakpoints`).

Separate from ``litellm_model.py`` because none of it needs litellm: plain data in,
plain data out, tested without a provider, and it never imports litellm (that
module is the only one that does).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from dm_cc.llm.base import ToolSpec
from dm_cc.session import Message, ToolCall


def to_openai_messages(system: str, messages: Sequence[Message], *,
                       thinking_blocks: bool = False,
                       reasoning_content: bool = False) -> list[dict[str, Any]]:
    """The system prompt first, then each message in OpenAI chat format; tool calls
    and results by the ids the model gave them (:func:`wire_ids`). ``thinking_blocks``:
    each assistant message carries its signed thinking (:func:`_thinking_blocks`), for
    a Claude model with thinking on. What a model showed of its reasoning (``reasoning``)
    goes back only with ``reasoning_content``, to DeepSeek's API, and only where it
    requires it (:func:`reasoning_echoed`); to others it is only more tokens."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    wire = wire_ids(messages)
    echoed = reasoning_echoed(messages) if reasoning_content else frozenset()
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            out.append({"role": "assistant", "content": message.content or None,
                        "tool_calls": [_openai_call(call, wire[call.id])
                                       for call in message.tool_calls]})
        elif message.role == "tool":
            said = message.tool_call_id or ""
            out.append({"role": "tool", "tool_call_id": wire.get(said, said),
                        "content": message.content})
        else:
            out.append({"role": message.role, "content": message.content})
        if thinking_blocks and message.role == "assistant" and message.reasoning_blocks:
            out[-1]["thinking_blocks"] = _thinking_blocks(message)
        if index in echoed:
            out[-1]["reasoning_content"] = message.reasoning or REASONING_PLACEHOLDER
    return out


#: What an assistant message DeepSeek wants reasoning for carries when it has none
#: (a synthetic call, a reply another model made): DeepSeek refuses an empty one as
#: missing; a space is the least it takes (litellm's DeepSeek path fills the same).
REASONING_PLACEHOLDER = " "


def reasoning_echoed(messages: Sequence[Message]) -> frozenset[int]:
    """The assistant messages whose reasoning DeepSeek's thinking mode wants back: those
    between two user messages where the model called tools (it answers 400, "The
    reasoning_content in the thinking mode must be passed back", when one lacks it, in
    every later request too). Where it called none, DeepSeek ignores the reasoning, so
    it is not sent."""
    echoed: set[int] = set()
    span: list[int] = []
    called = False
    for index, message in enumerate([*messages, Message("user")]):
        if message.role == "user":
            if called:
                echoed.update(span)
            span, called = [], False
        elif message.role == "assistant":
            span.append(index)
            called = called or bool(message.tool_calls)
    return frozenset(echoed)


def _thinking_blocks(message: Message) -> list[dict[str, Any]]:
    """A reply's signed thinking as litellm takes it back (``thinking_blocks``, which it
    puts first in the Anthropic message, before the text and the ``tool_use`` blocks):
    copies, unchanged — Anthropic checks each signature against its text."""
    return [dict(block) for block in message.reasoning_blocks]


def wire_ids(messages: Sequence[Message]) -> dict[str, str]:
    """dm_cc's id of each call → the id it goes by on the wire: the one the model gave
    it, unless an earlier call of the conversation already went by that (a model that
    numbers its calls from 1 again, after ``/model``): then dm_cc's own, unique in the
    session, as providers refuse a history where two calls share an id."""
    wire: dict[str, str] = {}
    used: set[str] = set()
    for message in messages:
        for call in message.tool_calls:
            given = call.wire_id or call.id
            wire[call.id] = given if given not in used else call.id
            used.add(wire[call.id])
    return wire


def _openai_call(call: ToolCall, wire_id: str) -> dict[str, Any]:
    # Malformed arguments go back as "{}": providers that parse them (Anthropic via
    # litellm, some vLLM chat templates) would otherwise reject the whole history.
    arguments = json.dumps(call.arguments) if call.arguments is not None else "{}"
    return {"id": wire_id, "type": "function",
            "function": {"name": call.name, "arguments": arguments}}


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tools in OpenAI format, each schema a copy: litellm's Gemini path rewrites
    a schema in place, which would change the session's own specs (and every later
    request, to any model) after the first Gemini request."""
    return [{"type": "function", "function": {"name": tool.name, "description": tool.description,
                                              "parameters": copy.deepcopy(tool.parameters)}}
            for tool in tools]


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """A tool call's arguments as a dict; None when not a JSON object. Empty means {}."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# -- prompt caching (Claude's cache breakpoints) -----------------------------------

EPHEMERAL = {"type": "ephemeral"}   # Anthropic's only cache type (5 minutes, renewed on a hit)
MAX_BREAKPOINTS = 4                 # per request, the API refuses more: tools, system, 2 ends
#: Hosts that also run Claude, whose Claude models cache only where the request marks
#: it; litellm turns OpenAI-format ``cache_control`` into their markers (Bedrock:
#: ``cachePoint``).
CLAUDE_HOSTS = ("bedrock", "vertex_ai", "vertex_ai_beta")


def is_claude(provider: str, model: str) -> bool:
    """Whether litellm reaches a Claude the Anthropic way: Anthropic's API always;
    Bedrock and Vertex AI for their Claude models. Those take ``cache_control``
    breakpoints and signed thinking blocks; what the hosts run besides caches by
    other rules or not at all (OpenAI, Gemini and DeepSeek cache a repeated prefix
    on their own, a local server has no use for markers), and a Claude behind an
    OpenAI-format proxy is reached the OpenAI way."""
    return provider == "anthropic" or (provider in CLAUDE_HOSTS and "claude" in model.lower())


def is_deepseek(provider: str, api_base: str | None) -> bool:
    """Whether requests go to DeepSeek's own API, whose thinking mode (on by default
    on its V4 models) wants a tool-calling turn's ``reasoning_content`` back
    (:func:`reasoning_echoed`): litellm's ``deepseek/…``, or an ``openai/…`` model
    with ``--api-base`` at DeepSeek's host. A DeepSeek model served elsewhere (vLLM,
    OpenRouter) is not: those servers ask nothing of the kind."""
    if provider == "deepseek":
        return True
    try:
        host = urlsplit(api_base).hostname if api_base else None
    except ValueError:      # not a URL: litellm will say so
        return False
    return host is not None and (host == "deepseek.com" or host.endswith(".deepseek.com"))


def with_cache_breakpoints(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
                           ) -> dict[str, list[dict[str, Any]]]:
    """An OpenAI-format request's ``messages`` and ``tools`` (when any), copied with
    ``cache_control`` breakpoints where Claude Code puts them: on the last tool and
    on the system prompt (the cache's order is tools, system, messages), and on the
    last two :func:`request_ends` of the conversation — this request's end, which the
    next request reads, and the previous request's end, which this one reads even
    when more than the ~20 content blocks Anthropic looks back from a breakpoint came
    since (a turn of many tool results). Never more than :data:`MAX_BREAKPOINTS`.
    A prefix shorter than the model's minimum (1024 tokens on Sonnet, 4096 on Opus
    4.5 and Haiku 4.5) is simply not cached: the breakpoint is harmless."""
    marked: dict[str, list[dict[str, Any]]] = {"messages": list(messages)}
    if tools:
        marked["tools"] = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    messages = marked["messages"]
    if messages and messages[0]["role"] == "system" and messages[0]["content"]:
        messages[0] = _marked(messages[0])
    for index in request_ends(messages)[-2:]:
        messages[index] = _marked(messages[index])
    return marked


def request_ends(messages: Sequence[dict[str, Any]]) -> list[int]:
    """Indices of the user and tool messages that ended a request of this conversation
    (an assistant's reply follows them) or end this one (the last message). An empty
    user message is left out: Anthropic refuses a breakpoint on an empty text block."""
    return [index for index, message in enumerate(messages)
            if (message["role"] == "tool" or (message["role"] == "user" and message["content"]))
            and (index + 1 == len(messages) or messages[index + 1]["role"] == "assistant")]


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with a breakpoint on its last content block. A tool result carries
    it on the message, which litellm puts on the ``tool_result`` block."""
    if message["role"] == "tool":
        return {**message, "cache_control": EPHEMERAL}
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return {**message, "content": [*blocks[:-1], {**blocks[-1], "cache_control": EPHEMERAL}]}
