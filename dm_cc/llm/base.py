"""The ChatModel seam: what the loop needs from a model, and nothing more.

Implementations: ``litellm_model.LiteLLMModel`` (the only module that imports
litellm, lazily), ``scripted.ScriptedModel`` (tests), ``offline.OfflineModel``
(trying policies with no LLM).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dm_cc.session import Message, ToolCall


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description, JSON schema of its params."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and cost of model calls. ``prompt_tokens`` counts every prompt token,
    cached ones too; ``cache_read_tokens`` of them came from the provider's prompt
    cache (billed at a fraction), ``cache_write_tokens`` were written to it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.cost + other.cost,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One assistant reply. ``reasoning``: what the model showed of its thinking (to
    display); ``reasoning_blocks``: the provider's own signed record of it (Anthropic
    ``thinking``/``redacted_thinking`` blocks, as JSON), which must go back with the
    turn's tool results, unchanged — opaque to dm_cc. ``notices``: what the person
    should be told about the model (thinking it does not support), said once."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    reasoning_blocks: tuple[dict[str, Any], ...] = ()
    notices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Retrying:
    """The call failed in a way that may pass (rate limited, overloaded, timed out)
    and is made again in ``delay`` seconds: sent before the wait, so the person
    knows why nothing happens. Not part of the reply: a retry may follow it."""

    reason: str         # "rate limited (429)", "overloaded (529)", "timed out"
    delay: float        # seconds until the next attempt
    attempt: int        # the attempt about to be made: 2 for the first retry
    attempts: int       # how many attempts there are at most


StreamEvent = TextDelta | ReasoningDelta | Retrying
OnStream = Callable[[StreamEvent], None]


@dataclass(frozen=True, slots=True)
class RetryNotices:
    """An ``on_stream`` that shows nothing of the reply, only its retries (``dm_cc
    run`` on stderr, a subagent's in its parent's REPL): a model given one still
    retries a reply that broke off half-way, as no one saw its start."""

    on_retry: Callable[[Retrying], None]

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, Retrying):
            self.on_retry(event)


def shows_reply(on_stream: OnStream | None) -> bool:
    """Whether what ``on_stream`` is given of a reply reaches the person (so a
    broken reply cannot be retried without showing its start twice)."""
    return on_stream is not None and not isinstance(on_stream, RetryNotices)


class ModelError(Exception):
    """The model could not be reached or answered unusably after retries."""


class ContextTooLong(ModelError):
    """The provider refused the prompt as longer than the model's context window
    (the loop compacts the conversation once and tries again). ``limit``: that
    window in tokens, when the provider said it."""

    def __init__(self, message: str, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class ChatModel(Protocol):
    """One call: the conversation so far in, one assistant reply out (streamed).

    ``context_window`` is how many prompt tokens the model accepts, None when
    unknown (then dm_cc never compacts on its own)."""

    name: str

    @property
    def context_window(self) -> int | None: ...

    async def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                       *, temperature: float | None = None,
                       on_stream: OnStream | None = None) -> ModelReply: ...


@runtime_checkable
class WarmsUp(Protocol):
    """A model with a slow first use (litellm's import): an interactive front end
    calls ``warm_up`` in the background so the first turn does not wait."""

    def warm_up(self) -> None: ...
