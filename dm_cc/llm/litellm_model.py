"""ChatModel over litellm: the only module in dm_cc that imports litellm, lazily.

One ``complete`` call is one streamed chat completion in OpenAI format::

    Messages  --to_openai_messages-->  litellm.acompletion(stream=True)
                                             |  chunks
    ModelReply <--_Assembly-- text / reasoning deltas (-> on_stream), tool-call fragments, usage

Transient failures (429, 5xx, timeouts, connection errors) are retried with
exponential backoff, but only while nothing of that attempt has reached
``on_stream``: once the user has seen output, a retry would show it twice. An
endpoint that cannot be reached at all (the connection refused: nothing listens
there; its host name unknown) is tried once more after a short pause, then
reported as such ("cannot connect to http://127.0.0.1:9/v1: connection refused"),
not as the 500 litellm makes of it after seconds of backoff.
Everything else becomes one ``ModelError`` naming model, endpoint, status and
the provider's message. Malformed tool-call arguments are not an error here:
they come back as ``ToolCall(arguments=None, raw_arguments=...)`` for the loop
to answer with a tool error the model can fix.

``thinking`` (``--thinking BUDGET``) turns on the provider's own thinking where
litellm knows the model has it (:func:`_plan_thinking`). A Claude's signed thinking
blocks are kept with its reply (``ModelReply.reasoning_blocks``) and go back with
the turn while it thinks, as Anthropic requires; no model is sent what another
showed of its reasoning (docs/models.md, "Thinking").
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
import os
import re
import socket
import time
import uuid
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any

from dm_cc.llm.base import (
    ContextTooLong,
    ModelError,
    ModelReply,
    OnStream,
    ReasoningDelta,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
    shows_reply,
)
from dm_cc.session import Message, ToolCall

Sleep = Callable[[float], Awaitable[None]]

logger = logging.getLogger(__name__)    # dm_cc's side of each call, with --verbose

RETRY_BASE = 0.5          # seconds; attempt n waits RETRY_BASE * 2**n
UNREACHABLE_RETRIES = 1   # an endpoint nothing answers at: one more try (a server starting)
RETRY_CAP = 30.0          # longest backoff of our own
RETRY_AFTER_CAP = 60.0    # longest wait a server's Retry-After may ask for
DUMMY_KEY = "sk-dummy"    # for OpenAI-compatible servers that want no key

# --thinking BUDGET (tokens), per provider: see _plan_thinking and docs/models.md
THINKING_EFFORT = ((4_000, "low"), (16_000, "medium"))  # an OpenAI effort by budget; more: high
THINKING_MIN = 1_024       # Anthropic's smallest budget
ANSWER_TOKENS = 16_384     # what a thinking Claude's reply keeps for its answer beyond the budget
CLAUDE_HOSTS = ("bedrock", "vertex_ai", "vertex_ai_beta")   # Claude also runs there
GEMINI_PROVIDERS = ("gemini", "vertex_ai", "vertex_ai_beta")


@functools.cache
def _import_litellm() -> Any:
    """Import litellm on first use: no price-map download, no chatter on stderr."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True      # no "Give Feedback / Get Help" banners
    litellm.telemetry = False
    if "LITELLM_LOG" not in os.environ:     # the user may ask for litellm's logs
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"litellm\.")
    return litellm


# -- OpenAI wire format (pure) ---------------------------------------------------

def to_openai_messages(system: str, messages: Sequence[Message], *,
                       thinking_blocks: bool = False) -> list[dict[str, Any]]:
    """The system prompt first, then each message in OpenAI chat format; tool calls
    and results by the ids the model gave them (:func:`wire_ids`). ``thinking_blocks``:
    each assistant message carries its signed thinking (:func:`_thinking_blocks`), for
    a Claude model with thinking on. What a model showed of its reasoning (``reasoning``)
    never goes back: DeepSeek rejects it, and to others it is only more tokens."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    wire = wire_ids(messages)
    for message in messages:
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
    return out


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
#: Providers whose Claude models cache only where the request marks it; litellm turns
#: OpenAI-format ``cache_control`` into their markers (Bedrock: ``cachePoint``).
def is_claude(provider: str, model: str) -> bool:
    """Whether litellm reaches a Claude the Anthropic way: Anthropic's API always;
    Bedrock and Vertex AI for their Claude models. Those take ``cache_control``
    breakpoints and signed thinking blocks; what the hosts run besides caches by
    other rules or not at all (OpenAI, Gemini and DeepSeek cache a repeated prefix
    on their own, a local server has no use for markers), and a Claude behind an
    OpenAI-format proxy is reached the OpenAI way."""
    return provider == "anthropic" or (provider in CLAUDE_HOSTS and "claude" in model.lower())


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


# -- assembling a streamed reply ---------------------------------------------------

@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Assembly:
    """Folds stream chunks into a reply; ``add`` returns the deltas to show.
    ``signed_thinking``: the model is a Claude, whose thinking blocks are kept
    (:meth:`_add_thinking`) to go back with the turn."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    slot_of: dict[int, int] = field(default_factory=dict)   # provider index -> our slot
    usage: Any = None
    signed_thinking: bool = False
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def add(self, chunk: Any) -> list[StreamEvent]:
        if getattr(chunk, "usage", None):
            self.usage = chunk.usage
        events: list[StreamEvent] = []
        for choice in (getattr(chunk, "choices", None) or [])[:1]:
            delta = choice.delta
            if self.signed_thinking and self._add_thinking(
                    getattr(delta, "thinking_blocks", None) or ()) and self.reasoning:
                self.reasoning.append("\n\n")      # the reply's next thinking block
                events.append(ReasoningDelta("\n\n"))
            if reasoning := getattr(delta, "reasoning_content", None):
                self.reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            if content := getattr(delta, "content", None):
                self.text.append(content)
                events.append(TextDelta(content))
            for fragment in getattr(delta, "tool_calls", None) or ():
                self._add_call_fragment(fragment)
        return events

    def _add_thinking(self, fragments: Sequence[Any]) -> bool:
        """litellm streams a Claude thinking block in pieces: its text in fragments
        (``{"type": "thinking", "thinking": TEXT}``), then its signature alone (empty
        thinking), which closes it; a redacted block comes whole (``data``). A reply
        may hold several (interleaved thinking), kept in order. True when a thinking
        block began after another (its text is shown apart)."""
        another = False
        for fragment in fragments:
            if not isinstance(fragment, dict):
                continue
            if fragment.get("type") == "redacted_thinking":
                self.blocks.append({"type": "redacted_thinking", "data": fragment.get("data")})
            elif fragment.get("type") == "thinking":
                last = self.blocks[-1] if self.blocks else None
                if last is None or last["type"] != "thinking" or "signature" in last:
                    another = another or last is not None
                    last = {"type": "thinking", "thinking": ""}
                    self.blocks.append(last)
                last["thinking"] += fragment.get("thinking") or ""
                if signature := fragment.get("signature"):
                    last["signature"] = signature
        return another

    def _signed_blocks(self) -> tuple[dict[str, Any], ...]:
        """The whole blocks: a thinking block whose signature never came (the stream
        broke off) would be refused by Anthropic, so it is left out."""
        return tuple(block for block in self.blocks
                     if block["type"] == "redacted_thinking" or block.get("signature"))

    def _add_call_fragment(self, fragment: Any) -> None:
        index = fragment.index if fragment.index is not None else max(self.slot_of, default=0)
        slot = self.slot_of.get(index, index)
        call = self.calls.get(slot)
        if call is not None and fragment.id and call.id and fragment.id != call.id:
            # Some servers number every call 0; a new id means a new call.
            slot = max(self.calls) + 1
            call = None
        if call is None:
            call = self.calls[slot] = _PartialCall()
            self.slot_of[index] = slot
        call.id = call.id or (fragment.id or "")
        function = fragment.function
        if function is not None:
            call.name = call.name or (function.name or "")
            arguments = function.arguments
            if arguments:
                call.arguments += arguments if isinstance(arguments, str) else json.dumps(arguments)

    def reply(self, cost: float) -> ModelReply:
        calls = tuple(ToolCall(id=call.id or f"call_{uuid.uuid4().hex[:16]}", name=call.name,
                               arguments=parse_arguments(call.arguments),
                               raw_arguments=call.arguments)
                      for _, call in sorted(self.calls.items()))
        read, written = _cache_tokens(self.usage)
        usage = Usage(prompt_tokens=_tokens(self.usage, "prompt_tokens"),
                      completion_tokens=_tokens(self.usage, "completion_tokens"), cost=cost,
                      cache_read_tokens=read, cache_write_tokens=written)
        return ModelReply(text="".join(self.text), tool_calls=calls,
                          reasoning="".join(self.reasoning) or None, usage=usage,
                          reasoning_blocks=self._signed_blocks())


def _tokens(usage: Any, name: str) -> int:
    return int(getattr(usage, name, 0) or 0) if usage is not None else 0


# -- thinking (--thinking BUDGET) ----------------------------------------------------

@dataclass(frozen=True)
class _Thinking:
    """How one model's requests carry ``--thinking``: ``params`` added to each
    request; ``signed``: the model is a Claude, whose signed thinking blocks are kept
    and, while it thinks, sent back; ``notice``: to say once (not supported, a
    budget cut to what the model allows)."""

    params: dict[str, Any] = field(default_factory=dict)
    signed: bool = False
    notice: str | None = None

    @property
    def claude_thinks(self) -> bool:
        return self.signed and "thinking" in self.params


def _plan_thinking(litellm: Any, model: str, budget: int) -> _Thinking:
    """Thinking where the model supports it, as litellm knows the model (its model
    map: ``supports_reasoning``, the params it takes for it): a Claude or a Gemini
    gets ``thinking={"type": "enabled", "budget_tokens": N}`` (litellm makes Gemini's
    ``thinkingConfig`` of it), an OpenAI reasoning model ``reasoning_effort``; any
    other model is told it once."""
    name, provider = _provider(litellm, model)
    claude = is_claude(provider, name)
    if budget <= 0:
        return _Thinking(signed=claude)
    try:
        reasons = bool(litellm.supports_reasoning(model=model))
        supported = litellm.get_supported_openai_params(model=name,
                                                        custom_llm_provider=provider) or []
    except Exception:   # a model litellm does not know: nothing is known to work
        reasons, supported = False, []
    if reasons and claude and "thinking" in supported:
        return _claude_thinking(litellm, model, budget)
    if (reasons and provider in GEMINI_PROVIDERS and "gemini" in name.lower()
            and "thinking" in supported):
        return _Thinking({"thinking": {"type": "enabled", "budget_tokens": budget}})
    if reasons and provider in ("openai", "azure") and "reasoning_effort" in supported:
        return _Thinking({"reasoning_effort": thinking_effort(budget)})
    if reasons:     # DeepSeek's reasoner, a local reasoning model: it thinks anyway
        return _Thinking(signed=claude, notice=f"{model} reasons on its own: --thinking "
                                               "does not change it")
    return _Thinking(signed=claude, notice=f"thinking is not supported by {model}: "
                                           "--thinking has no effect")


def _claude_thinking(litellm: Any, model: str, budget: int) -> _Thinking:
    """Anthropic requires a budget of THINKING_MIN at least, and ``max_tokens`` above
    it: the budget plus ANSWER_TOKENS for the answer (a file written by a tool call
    is part of it), the budget cut where that would pass the model's output limit.
    Not the limit itself (litellm's choice without thinking): Claude refuses a
    request whose prompt and ``max_tokens`` together pass its context window, and a
    long session's prompt comes near it."""
    notice = None
    if budget < THINKING_MIN:
        notice = (f"thinking budget {budget} tokens is less than {model} takes: thinking "
                  f"with {THINKING_MIN}")
        budget = THINKING_MIN
    limit = _max_output(litellm, model)
    if limit is not None and budget > limit - ANSWER_TOKENS:
        cut = max(THINKING_MIN, limit - ANSWER_TOKENS)
        notice = (f"thinking budget {budget} tokens is more than {model} can write in a "
                  f"reply ({limit}, {ANSWER_TOKENS} of them kept for its answer): thinking "
                  f"with {cut}")
        budget = cut
    return _Thinking({"thinking": {"type": "enabled", "budget_tokens": budget},
                      "max_tokens": budget + ANSWER_TOKENS}, signed=True, notice=notice)


def thinking_effort(budget: int) -> str:
    """An OpenAI ``reasoning_effort`` for a budget of thinking tokens."""
    return next((effort for most, effort in THINKING_EFFORT if budget <= most), "high")


def _provider(litellm: Any, model: str) -> tuple[str, str]:
    """(the model's name at its provider, the provider) as litellm routes it."""
    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
    except Exception:   # litellm cannot route it: complete() will say so
        return model, ""
    return str(name), str(provider)


def _max_output(litellm: Any, model: str) -> int | None:
    try:
        tokens = litellm.get_model_info(model).get("max_output_tokens")
    except Exception:
        return None
    return tokens if isinstance(tokens, int) and tokens > ANSWER_TOKENS + THINKING_MIN else None


def _unthought_tool_turn(messages: Sequence[Message]) -> bool:
    """Whether the turn under way (the replies since the last user message) began with
    a reply that called tools without thinking (thinking was off then, or another
    model made it): Anthropic refuses thinking on the requests that go on from it
    ("a final assistant message must start with a thinking block"), and a turn is
    thought in one mode throughout. A turn that began thinking goes on thinking,
    though its later replies carry no blocks (Claude thinks once a turn unless
    interleaved thinking is asked for)."""
    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), -1)
    first = next((m for m in messages[start + 1:] if m.role == "assistant"), None)
    return first is not None and bool(first.tool_calls) and not first.reasoning_blocks


def _cache_tokens(usage: Any) -> tuple[int, int]:
    """(read from, written to) the provider's prompt cache: Anthropic's own counts
    (litellm adds both into ``prompt_tokens``, as OpenAI counts its cached tokens
    there), else the OpenAI-style ``prompt_tokens_details`` (OpenAI, Gemini, DeepSeek
    and vLLM as litellm reports them)."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = _tokens(usage, "cache_read_input_tokens") or _tokens(details, "cached_tokens")
    written = (_tokens(usage, "cache_creation_input_tokens")
               or _tokens(details, "cache_creation_tokens"))
    return read, written


# -- the model -----------------------------------------------------------------------

class _ProviderFailure(Exception):
    """An exception raised by litellm (not by our code or the on_stream callback)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class LiteLLMModel:
    """Any model litellm can reach; ``api_base`` for OpenAI-compatible servers
    (vLLM, llama.cpp, Ollama) with a model string like ``openai/<name>``."""

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None,
                 max_retries: int = 4, timeout: float = 120, *,
                 context_window: int | None = None, sleep: Sleep = asyncio.sleep,
                 thinking: int = 0) -> None:
        self.name = model
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.thinking = thinking            # --thinking: a budget of tokens; 0 is off
        self._context_window = context_window
        self._sleep = sleep
        self._noticed = False

    def warm_up(self) -> None:
        """Import litellm now (seconds): the REPL calls this in the background."""
        _import_litellm()

    @functools.cached_property
    def context_window(self) -> int | None:
        """Prompt tokens the model accepts: the constructor's value, else litellm's
        model map (``max_input_tokens``; imports litellm), else None."""
        if self._context_window is not None:
            return self._context_window
        try:
            tokens = _import_litellm().get_model_info(self.model).get("max_input_tokens")
        except Exception:   # not in litellm's map (a local server's model): unknown
            return None
        return tokens if isinstance(tokens, int) and tokens > 0 else None

    @functools.cached_property
    def _thinking(self) -> _Thinking:
        return _plan_thinking(_import_litellm(), self.model, self.thinking)

    async def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                       *, temperature: float | None = None,
                       on_stream: OnStream | None = None) -> ModelReply:
        litellm = _import_litellm()
        request = self._request(system, messages, tools, temperature)
        attempt = 0
        shows = shows_reply(on_stream)
        while True:
            assembly = _Assembly(signed_thinking=self._thinking.signed)
            shown = False
            try:
                async with aclosing(_guarded(litellm, request)) as chunks:
                    async for chunk in chunks:
                        for event in assembly.add(chunk):
                            if on_stream is not None:
                                shown = shows
                                on_stream(event)
                break
            except _ProviderFailure as failure:
                retry = self._retry(litellm, failure.error, attempt, shown)
                if on_stream is not None:      # before the wait: the person sees why
                    on_stream(retry)
                await self._sleep(retry.delay)
                attempt += 1
        return self._noticing(assembly.reply(self._cost(litellm, assembly.usage)))

    def _noticing(self, reply: ModelReply) -> ModelReply:
        """``reply``, with what to say of this model's thinking the first time only."""
        if self._noticed or self._thinking.notice is None:
            return reply
        self._noticed = True
        return replace(reply, notices=(*reply.notices, self._thinking.notice))

    def _request(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                 temperature: float | None) -> dict[str, Any]:
        thinking = self._thinking_now(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(system, messages,
                                           thinking_blocks=thinking.claude_thinks),
            "stream": True, "stream_options": {"include_usage": True},
            "timeout": self.timeout, "max_retries": 0,   # retries are ours, see complete()
            "drop_params": True,                         # e.g. temperature on reasoning models
            **copy.deepcopy(thinking.params),    # litellm may rewrite them in place
        }
        if tools:
            request["tools"] = to_openai_tools(tools)
        if self.marks_cache_breakpoints:
            request.update(with_cache_breakpoints(request["messages"], request.get("tools")))
        if temperature is not None and not thinking.claude_thinks:   # Anthropic: 1 only
            request["temperature"] = temperature
        if self.api_base:
            request["api_base"] = self.api_base
        if api_key := self._api_key():
            request["api_key"] = api_key
        return request

    def _thinking_now(self, messages: Sequence[Message]) -> _Thinking:
        """This request's thinking: none for a Claude going on with a turn that began
        with a reply that called tools without it (its blocks are not sent either:
        thinking off, they are not needed); the next turn thinks again."""
        plan = self._thinking
        if plan.claude_thinks and _unthought_tool_turn(messages):
            logger.debug("%s: no thinking on this request: the turn's first reply called "
                         "tools without it", self.model)
            return _Thinking(signed=True)
        return plan

    @functools.cached_property
    def marks_cache_breakpoints(self) -> bool:
        """Whether requests carry ``cache_control`` breakpoints: Claude, reached
        directly or through Bedrock or Vertex AI (:func:`is_claude`)."""
        name, provider = _provider(_import_litellm(), self.model)
        return is_claude(provider, name)    # unplaced (""): no markers

    def _api_key(self) -> str | None:
        if self.api_key:
            return self.api_key
        if (self.api_base and self.model.startswith("openai/")
                and not os.environ.get("OPENAI_API_KEY")):
            return DUMMY_KEY
        return None     # litellm reads the provider's usual environment variable

    def _cost(self, litellm: Any, usage: Any) -> float:
        if usage is None:
            return 0.0
        try:
            response = litellm.ModelResponse(model=self.model, usage=usage)
            return float(litellm.completion_cost(completion_response=response, model=self.model))
        except Exception:   # unknown model, no price: cost is simply unknown
            return 0.0

    def _retry(self, litellm: Any, error: Exception, attempt: int, shown: bool) -> Retrying:
        """The retry after attempt ``attempt`` (from 0) failed with ``error``: when,
        and why in words; raises the ModelError that says it when there is none."""
        unreachable = _unreachable(error)
        retries = min(self.max_retries, UNREACHABLE_RETRIES) if unreachable else self.max_retries
        if shown or attempt >= retries or not (unreachable or _transient(litellm, error)) \
                or _key_refused(litellm, error):
            logger.debug("%s: attempt %d failed", self.model, attempt + 1, exc_info=error)
            raise self._failure(litellm, error, attempt, shown, unreachable) from error
        logger.debug("%s: attempt %d failed, retrying: %r", self.model, attempt + 1, error)
        return Retrying(unreachable or _reason(litellm, error), _backoff(attempt, error),
                        attempt + 2, retries + 1)

    def _failure(self, litellm: Any, error: Exception, attempt: int, shown: bool,
                 unreachable: str | None) -> ModelError:
        """The error that ends the call, in words the person can act on."""
        if unreachable:
            return ModelError(self._unreachable(unreachable))
        if _too_long(litellm, error):
            message = _provider_message(error)
            return ContextTooLong(f"model {self.model}: the prompt is longer than its context "
                                  f"window ({message})", _limit(message))
        if _key_refused(litellm, error):
            return ModelError(self._key_refused(litellm, error))
        return ModelError(self._describe(error, attempt, shown))

    def _unreachable(self, why: str) -> str:
        where = self.api_base or "the provider's endpoint"
        hint = "; is the server running, and is --api-base right?" if self.api_base else ""
        return f"cannot connect to {where}: {why} (model {self.model}{hint})"

    def _key_refused(self, litellm: Any, error: Exception) -> str:
        """'… the API key was refused (…); the key comes from ANTHROPIC_API_KEY …', or,
        when litellm found none to send, which variable is not set."""
        unset, hint = self._key_hint(litellm)
        if unset:
            return f"model {self.model}: no API key: {hint}"
        where = self.api_base or "its default endpoint"
        status = _status(error)
        what = "permission denied" if status == 403 and not isinstance(
            error, litellm.AuthenticationError) else "the API key was refused"
        return (f"model {self.model} at {where}: {status or 'no status'} {what} "
                f"({_provider_message(error)}); {hint}")

    def _key_hint(self, litellm: Any) -> tuple[bool, str]:
        """Where the key comes from: the environment variable litellm reads for this
        provider (``litellm.validate_environment`` names it when it is unset, else
        KEY_VARIABLES), and whether it is unset."""
        if self.api_key:
            return False, "check the key dm_cc was given"
        if self._api_key() == DUMMY_KEY:
            return False, ("dm_cc sent a placeholder key as OPENAI_API_KEY is not set: set it "
                           "to the key this server wants")
        try:
            missing = litellm.validate_environment(self.model, api_base=self.api_base)
            provider = litellm.get_llm_provider(self.model, api_base=self.api_base)[1]
        except Exception:   # a model string litellm cannot place
            missing, provider = {}, ""
        unset = [name for name in missing.get("missing_keys", ()) if name.endswith("_KEY")]
        if unset:
            said = f"{unset[0]} is not set" if len(unset) == 1 else \
                f"neither {', '.join(unset[:-1])} nor {unset[-1]} is set"
            return True, f"{said}: set it to your {provider or 'API'} key"
        names = KEY_VARIABLES.get(provider)
        if names is None:
            return False, f"check the API key litellm reads for {provider or self.model}"
        return False, (f"the key comes from {' (read first) or '.join(names)}: check that it "
                       "is right and may use this model")

    def _describe(self, error: Exception, attempt: int, shown: bool) -> str:
        where = self.api_base or "its default endpoint"
        text = f"model {self.model} at {where}: {_status(error) or 'no status'} " \
               f"{type(error).__name__}: {_provider_message(error)}"
        if shown:
            text += " (the reply broke off after output had been shown; not retried)"
        elif attempt:
            text += f" (gave up after {attempt + 1} attempts)"
        return text


async def _guarded(litellm: Any, request: dict[str, Any]) -> AsyncGenerator[Any, None]:
    """litellm's chunks; whatever litellm raises comes out as _ProviderFailure.
    The HTTP stream is closed however the caller stops reading."""
    try:
        stream = await litellm.acompletion(**request)
        iterator = stream.__aiter__()
    except Exception as error:
        raise _ProviderFailure(error) from error
    try:
        while True:
            try:
                chunk = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except Exception as error:
                raise _ProviderFailure(error) from error
            yield chunk
    finally:
        if hasattr(stream, "aclose"):
            await stream.aclose()


def _transient(litellm: Any, error: Exception) -> bool:
    if isinstance(error, litellm.Timeout | litellm.APIConnectionError | TimeoutError
                  | ConnectionError):
        return True
    status = _status(error)
    return isinstance(status, int) and (status in (408, 429) or status >= 500)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the chain of causes behind it (litellm wraps the provider
    client's error, which wraps httpx's or aiohttp's, which wraps the socket's)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


def _status(error: BaseException) -> int | None:
    """The HTTP status the provider sent: the innermost in the chain, as litellm's
    wrapper may say another (500 for Anthropic's 529 "overloaded")."""
    statuses = [s for cause in _chain(error)
                if isinstance(s := getattr(cause, "status_code", None), int)]
    return statuses[-1] if statuses else None


def _reason(litellm: Any, error: Exception) -> str:
    """Why a call is retried, in a few words: 'rate limited (429)', 'overloaded (529)'."""
    status = _status(error)
    code = f" ({status})" if status else ""
    if status == 429:
        return f"rate limited{code}"
    if status == 529 or "overloaded" in _provider_message(error).lower():
        return f"overloaded{code}"
    if status == 408 or isinstance(error, litellm.Timeout | TimeoutError):
        return "timed out"
    if any(kind.__name__ in BROKEN for cause in _chain(error) for kind in type(cause).__mro__):
        return "the connection broke"
    if status is not None and status >= 500:
        return f"server error{code}"
    return "connection failed"


#: httpx's and aiohttp's errors for a connection lost (or a reply cut) half-way, by
#: name: litellm says "500" of them, though no server said so.
BROKEN = frozenset({"TransportError", "ClientConnectionError", "ClientPayloadError"})

#: What it means when one of these is behind a failure: the endpoint cannot be reached.
UNREACHABLE: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "connection refused"),
    (socket.gaierror, "its host name is not known"),
)


def _unreachable(error: BaseException) -> str | None:
    """Why the endpoint cannot be reached, when the chain of causes behind ``error``
    says so; None for any other failure."""
    for cause in _chain(error):
        for kind, why in UNREACHABLE:
            if isinstance(cause, kind):
                return why
    return None


#: How providers say a prompt is longer than the context window, when litellm did
#: not map it to ContextWindowExceededError (OpenAI's code; llama.cpp's wording).
TOO_LONG = re.compile(r"context_length_exceeded|prompt is too long|maximum context length"
                      r"|context window|context size|too many (?:input )?tokens", re.IGNORECASE)
#: The window a provider names in its message: OpenAI and vLLM, Anthropic, Gemini,
#: llama.cpp.
LIMIT = re.compile(r"maximum context length is (\d+)|tokens > (\d+) maximum"
                   r"|maximum number of tokens allowed \((\d+)\)|context size \((\d+) tokens\)")


def _too_long(litellm: Any, error: Exception) -> bool:
    """Whether the provider refused the prompt as too long for the context window."""
    if isinstance(error, litellm.ContextWindowExceededError):
        return True
    return _status(error) in (400, 413) and any(
        TOO_LONG.search(str(part)) for cause in _chain(error)
        for part in (cause, getattr(cause, "body", None) or ""))


def _limit(message: str) -> int | None:
    """The context window the provider's message names, if it names one."""
    match = LIMIT.search(message)
    return int(next(group for group in match.groups() if group)) if match else None


#: litellm's words when it finds no key to send (for Gemini, as a connection error).
NO_KEY = re.compile(r"\bmissing \w+ api key\b|\bno (?:api )?key is set\b", re.IGNORECASE)


def _key_refused(litellm: Any, error: Exception) -> bool:
    """Whether the provider refused the credentials, or litellm found none to send
    (never retried)."""
    if isinstance(error, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return True
    return any(getattr(cause, "status_code", None) in (401, 403) for cause in _chain(error)) \
        or bool(NO_KEY.search(str(error)))


#: The environment variables litellm reads a provider's API key from, in order, for
#: the providers people use most (``validate_environment`` names them only when unset).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
}


def _backoff(attempt: int, error: Exception) -> float:
    """Exponential, or what the server asked for (Retry-After) when that is longer,
    up to RETRY_AFTER_CAP."""
    delay = min(RETRY_BASE * 2 ** attempt, RETRY_CAP)
    return max(delay, min(_retry_after(error) or 0.0, RETRY_AFTER_CAP))


def _retry_after(error: BaseException) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms``, or ``Retry-After`` in
    seconds or as an HTTP date; the first in the chain that says it."""
    for cause in _chain(error):
        for headers in (getattr(cause, "litellm_response_headers", None),
                        getattr(getattr(cause, "response", None), "headers", None)):
            if not headers:
                continue
            found = {str(name).lower(): str(value) for name, value in dict(headers).items()}
            if (seconds := _seconds(found)) is not None:
                return seconds
    return None


def _seconds(headers: dict[str, str]) -> float | None:
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):    # nothing readable
        return None


_PREFIX = re.compile(r"^\s*(?:litellm\.\w+|\w+Error|\w+Exception)\s*[:-]\s*")
_ADVICE = re.compile(r"\s*Handle with `litellm\.\w+`\.?")


def _provider_message(error: Exception) -> str:
    """'litellm.RateLimitError: RateLimitError: OpenAIException - slow down' -> 'slow down';
    a provider's JSON error body (Anthropic's, Gemini's, as litellm quotes it) -> its message."""
    message = str(getattr(error, "message", None) or error)
    while (stripped := _PREFIX.sub("", message, count=1)) != message:
        message = stripped
    message = _body_message(message) or message
    message = " ".join(_ADVICE.sub("", message).split())
    return message[:400] + ("…" if len(message) > 400 else "") if message else "(no message)"


def _body_message(text: str) -> str | None:
    """The ``error.message`` of the first JSON object in ``text``, if there is one."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        body, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message.strip() else None
