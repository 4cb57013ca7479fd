"""What a failed call to a provider means: retry it, and when; or the words that end it.

litellm raises its own exceptions, wrapping the provider client's, which wrap
httpx's or aiohttp's, which wrap the socket's (:func:`_chain` walks them). From that
chain this module reads whether a failure is worth retrying (:func:`transient`),
why in a few words (:func:`reason`), how long to wait (:func:`backoff`, a server's
Retry-After included), whether the endpoint cannot be reached at all
(:func:`unreachable`), the prompt was too long (:func:`too_long`, :func:`limit`) or
the key refused (:func:`key_refused`), and the provider's own message
(:func:`provider_message`). ``LiteLLMModel`` decides with these.

Separate from ``litellm_model.py`` because it is interpretation, not calls: a
function that must know litellm's exception classes is handed the imported module
(``transient(litellm, error)``), so this module never imports litellm.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from typing import Any

RETRY_BASE = 0.5          # seconds; attempt n waits RETRY_BASE * 2**n
UNREACHABLE_RETRIES = 1   # an endpoint nothing answers at: one more try (a server starting)
RETRY_CAP = 30.0          # longest backoff of our own
RETRY_AFTER_CAP = 60.0    # longest wait a server's Retry-After may ask for


def transient(litellm: Any, error: Exception) -> bool:
    if isinstance(error, litellm.Timeout | litellm.APIConnectionError | TimeoutError
                  | ConnectionError):
        return True
    status = http_status(error)
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


def http_status(error: BaseException) -> int | None:
    """The HTTP status the provider sent: the innermost in the chain, as litellm's
    wrapper may say another (500 for Anthropic's 529 "overloaded")."""
    statuses = [s for cause in _chain(error)
                if isinstance(s := getattr(cause, "status_code", None), int)]
    return statuses[-1] if statuses else None


def reason(litellm: Any, error: Exception) -> str:
    """Why a call is retried, in a few words: 'rate limited (429)', 'overloaded (529)'."""
    status = http_status(error)
    code = f" ({status})" if status else ""
    if status == 429:
        return f"rate limited{code}"
    if status == 529 or "overloaded" in provider_message(error).lower():
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


def unreachable(error: BaseException) -> str | None:
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


def too_long(litellm: Any, error: Exception) -> bool:
    """Whether the provider refused the prompt as too long for the context window."""
    if isinstance(error, litellm.ContextWindowExceededError):
        return True
    return http_status(error) in (400, 413) and any(
        TOO_LONG.search(str(part)) for cause in _chain(error)
        for part in (cause, getattr(cause, "body", None) or ""))


def limit(message: str) -> int | None:
    """The context window the provider's message names, if it names one."""
    match = LIMIT.search(message)
    return int(next(group for group in match.groups() if group)) if match else None


#: litellm's words when it finds no key to send (for Gemini, as a connection error).
NO_KEY = re.compile(r"\bmissing \w+ api key\b|\bno (?:api )?key is set\b", re.IGNORECASE)


def key_refused(litellm: Any, error: Exception) -> bool:
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


def backoff(attempt: int, error: Exception) -> float:
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


def provider_message(error: Exception) -> str:
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
