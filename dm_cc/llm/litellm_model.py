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
litellm knows the model has it (:func:`~dm_cc.llm.thinking.plan_thinking`). A Claude's signed thinking
blocks are kept with its reply (``ModelReply.reasoning_blocks``) and go back with
the turn while it thinks, as Anthropic requires; what a model showed of its
reasoning goes back only to DeepSeek's API, whose thinking mode requires it of a
tool-calling turn (docs/models.md, "Thinking").

What needs no litellm lives beside this module, which is what is left when that
is taken out — the calls, their retries and the streamed reply's assembly:

    openai_format.py  the request in OpenAI format, Claude's cache breakpoints
    thinking.py       --thinking per provider (handed litellm for its model map)
    failures.py       what a failure means: retry, wait, or which error to raise
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import importlib
import json
import logging
import os
import threading
import uuid
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any

from dm_cc.llm import failures
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
from dm_cc.llm.openai_format import (
    is_claude,
    is_deepseek,
    parse_arguments,
    to_openai_messages,
    to_openai_tools,
    with_cache_breakpoints,
)
from dm_cc.llm.thinking import Thinking, plan_thinking, provider_of, unthought_tool_turn
from dm_cc.session import Message, ToolCall

Sleep = Callable[[float], Awaitable[None]]

logger = logging.getLogger(__name__)    # dm_cc's side of each call, with --verbose

DUMMY_KEY = "sk-dummy"    # for OpenAI-compatible servers that want no key


#: What litellm imports on its own the first time it is used, after ``import litellm``
#: (litellm 1.104-1.106): the OpenAI SDK's resources (all of them, on a client's first
#: ``.chat``: a first request to any OpenAI-compatible endpoint), a helper its message
#: transformation loads, and the tokenizer its cost bookkeeping loads for the first
#: reply. The warm-up imports them too; a name a later litellm no longer has costs
#: nothing (tests/llm/test_model_start.py checks a first request loads none of them).
FIRST_USE = ("openai.resources.chat", "litellm.proxy.openai_files_endpoints.common_utils",
             "litellm.litellm_core_utils.default_encoding")

_importing = threading.Lock()   # one import at a time: the warm-up's, or the first use's
_starting = threading.Lock()
_started: list[threading.Thread] = []   # the warm-up thread, once started


def _import_litellm() -> Any:
    """litellm, imported and set up on first use; a call while the warm-up is importing
    it waits for that import (and, if it failed, tries again: the same error is raised
    here, where the model is used, as if there had been no warm-up)."""
    with _importing:
        return _set_up_litellm()


@functools.cache
def _set_up_litellm() -> Any:
    """Import litellm: no price-map download, no chatter on stderr."""
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


def start_import() -> None:
    """Begin importing litellm (seconds) and what its first call loads in a background
    thread, once per process; returns at once. Called as soon as a session knows its
    model is a litellm one (``World.open_loop``), so that the import runs while the
    session, the tools and the policy load and, in the REPL, while the person types.
    The first use waits for the import under way (:func:`_import_litellm`). A failure
    here is only logged: the first use imports again, and raises the error there.

    Not a daemon: a process that ends while the import is under way waits for it.
    Python stops a daemon thread wherever it is as it finalizes, and one stopped
    holding an import lock hangs the next import (a finalizer's) for ever."""
    with _starting:
        if _started:
            return
        _started.append(threading.Thread(target=_warm_up, name="dm_cc-litellm-import"))
    _started[0].start()


def _warm_up() -> None:
    try:
        _import_litellm()
        for name in FIRST_USE:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    except Exception:   # broken install; or a concurrent circular import (Python's lock)
        logger.debug("importing litellm in the background failed; its first use will "
                     "import it again", exc_info=True)


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
        """Start importing litellm in the background (:func:`start_import`)."""
        start_import()

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
    def _thinking(self) -> Thinking:
        return plan_thinking(_import_litellm(), self.model, self.thinking)

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
                                           thinking_blocks=thinking.claude_thinks,
                                           reasoning_content=self.echoes_reasoning),
            "stream": True, "stream_options": {"include_usage": True},
            "timeout": self.timeout, "max_retries": 0,   # retries are ours, see complete()
            "drop_params": True,                         # e.g. temperature on reasoning models
            # dm_cc's tools are plain functions (its MCP tools too: dm_cc is the MCP
            # client): litellm's MCP gateway never applies, and checking for it imports
            # litellm's MCP handler and the mcp SDK on the first request (~0.3 s).
            # litellm takes the flag out of what it sends (core_helpers' internal params).
            "_skip_mcp_handler": True,
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

    def _thinking_now(self, messages: Sequence[Message]) -> Thinking:
        """This request's thinking: none for a Claude going on with a turn that began
        with a reply that called tools without it (its blocks are not sent either:
        thinking off, they are not needed); the next turn thinks again."""
        plan = self._thinking
        if plan.claude_thinks and unthought_tool_turn(messages):
            logger.debug("%s: no thinking on this request: the turn's first reply called "
                         "tools without it", self.model)
            return Thinking(signed=True)
        return plan

    @functools.cached_property
    def marks_cache_breakpoints(self) -> bool:
        """Whether requests carry ``cache_control`` breakpoints: Claude, reached
        directly or through Bedrock or Vertex AI (:func:`is_claude`)."""
        name, provider = provider_of(_import_litellm(), self.model)
        return is_claude(provider, name)    # unplaced (""): no markers

    @functools.cached_property
    def echoes_reasoning(self) -> bool:
        """Whether a tool-calling turn's ``reasoning_content`` goes back: DeepSeek's own
        API, whose thinking mode refuses a history without it (:func:`is_deepseek`)."""
        return is_deepseek(provider_of(_import_litellm(), self.model)[1], self.api_base)

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
        unreachable = failures.unreachable(error)
        retries = (min(self.max_retries, failures.UNREACHABLE_RETRIES) if unreachable
                   else self.max_retries)
        if shown or attempt >= retries or not (unreachable or failures.transient(litellm, error)) \
                or failures.key_refused(litellm, error):
            logger.debug("%s: attempt %d failed", self.model, attempt + 1, exc_info=error)
            raise self._failure(litellm, error, attempt, shown, unreachable) from error
        logger.debug("%s: attempt %d failed, retrying: %r", self.model, attempt + 1, error)
        return Retrying(unreachable or failures.reason(litellm, error),
                        failures.backoff(attempt, error), attempt + 2, retries + 1)

    def _failure(self, litellm: Any, error: Exception, attempt: int, shown: bool,
                 unreachable: str | None) -> ModelError:
        """The error that ends the call, in words the person can act on."""
        if unreachable:
            return ModelError(self._unreachable(unreachable))
        if failures.too_long(litellm, error):
            message = failures.provider_message(error)
            return ContextTooLong(f"model {self.model}: the prompt is longer than its context "
                                  f"window ({message})", failures.limit(message))
        if failures.key_refused(litellm, error):
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
        status = failures.http_status(error)
        what = "permission denied" if status == 403 and not isinstance(
            error, litellm.AuthenticationError) else "the API key was refused"
        return (f"model {self.model} at {where}: {status or 'no status'} {what} "
                f"({failures.provider_message(error)}); {hint}")

    def _key_hint(self, litellm: Any) -> tuple[bool, str]:
        """Where the key comes from: the environment variable litellm reads for this
        provider (``litellm.validate_environment`` names it when it is unset, else
        failures.KEY_VARIABLES), and whether it is unset."""
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
        names = failures.KEY_VARIABLES.get(provider)
        if names is None:
            return False, f"check the API key litellm reads for {provider or self.model}"
        return False, (f"the key comes from {' (read first) or '.join(names)}: check that it "
                       "is right and may use this model")

    def _describe(self, error: Exception, attempt: int, shown: bool) -> str:
        where = self.api_base or "its default endpoint"
        text = f"model {self.model} at {where}: {failures.http_status(error) or 'no status'} " \
               f"{type(error).__name__}: {failures.provider_message(error)}"
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
