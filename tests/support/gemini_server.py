"""The Gemini API (Google AI Studio) wire format for the loopback model server
(tests/support/model_server.py), written from Google's public API reference::

    with serve([tool_calls(("read", {"path": "a"}), ("read", {"path": "b"}),
                           signature="c2lnLTE=")]) as server:
        model = LiteLLMModel("gemini/gemini-2.5-flash", api_base=server.base_url)

litellm sends ``POST {api_base}/models/{model}:streamGenerateContent?alt=sse`` (the key
in an ``x-goog-api-key`` header; Google also takes ``?key=``), so with the real
endpoint ``--api-base`` is ``https://generativelanguage.googleapis.com/v1beta``.
Both ``:generateContent`` (one JSON ``GenerateContentResponse``) and
``:streamGenerateContent`` (SSE, each event a whole ``GenerateContentResponse``) are
answered; a response is ``candidates[0].content.parts[]``:

* thinking comes first, as ``{"text": …, "thought": true}`` parts, one per fragment;
* then the text, one part per fragment;
* then every function call of the answer in ONE event, ``{"functionCall": {"name",
  "args"}}`` parts (the arguments an object, never fragments; no ``id``, as 2.5
  and 3 send none) — parallel calls are several parts of one content;
* ``thoughtSignature`` (the answer's ``signature``, base64 as Google's are) goes on
  the first function call part — Gemini signs only the first of a parallel batch —
  or, with no calls, on a last empty text part;
* the last event has ``finishReason: "STOP"`` (Gemini says STOP after function calls
  too) and the whole ``usageMetadata``: ``promptTokenCount``, ``candidatesTokenCount``
  (thoughts excluded), ``thoughtsTokenCount`` (here: the words of the reasoning),
  ``cachedContentTokenCount`` (the answer's cache reads), ``totalTokenCount``.
  Earlier events carry the prompt count only, as Gemini's do.

Failures are Google's error body, ``{"error": {"code": 429, "message": …, "status":
"RESOURCE_EXHAUSTED"}}``, with a ``RetryInfo`` detail when the answer has a
Retry-After (Gemini says how long to wait in the body).
GET …/models lists one model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from support.model_server import MODEL, Answer, ModelServer, split
from support.model_server import serve as serve_wire

#: The google.rpc status Gemini gives each HTTP status.
STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
            404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
            503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

_METHOD = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$")


class GeminiWire:
    def is_completion(self, method: str, path: str) -> bool:
        return method == "POST" and _METHOD.search(path.split("?")[0]) is not None

    def streams(self, path: str, body: Any) -> bool:
        match = _METHOD.search(path.split("?")[0])
        return match is not None and match["method"] == "streamGenerateContent"

    def get(self, path: str) -> Any | None:
        if path.split("?")[0].rstrip("/").endswith("/models"):
            return {"models": [{"name": f"models/{MODEL}", "displayName": "Test",
                                "supportedGenerationMethods": ["generateContent",
                                                               "streamGenerateContent"]}]}
        return None

    def error(self, answer: Answer) -> Any:
        error: dict[str, Any] = {
            "code": answer.status, "message": answer.error,
            "status": answer.error_type or STATUSES.get(answer.status, "UNKNOWN")}
        retry_after = dict(answer.headers).get("Retry-After")
        if retry_after is not None:
            error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                 "retryDelay": f"{float(retry_after):g}s"}]
        return {"error": error}

    def events(self, answer: Answer, number: int, body: Any) -> list[str]:
        return [f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in _chunks(answer, number)]

    def completion(self, answer: Answer, number: int, body: Any) -> Any:
        parts = [*_thought_parts([answer.reasoning] if answer.reasoning else []),
                 *([{"text": answer.text}] if answer.text else []),
                 *_call_parts(answer)]
        if answer.signature and not answer.tool_calls:
            parts.append({"text": "", "thoughtSignature": answer.signature})
        return _response(number, parts, answer, last=True)


GEMINI = GeminiWire()


@contextmanager
def serve(script: Iterable[Answer], port: int = 0) -> Iterator[ModelServer]:
    """A Gemini API loopback server for the block (``api_base=.base_url``)."""
    with serve_wire(script, GEMINI, port) as server:
        yield server


def _thought_parts(fragments: list[str]) -> list[dict[str, Any]]:
    return [{"text": fragment, "thought": True} for fragment in fragments]


def _call_parts(answer: Answer) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for name, arguments in answer.tool_calls:
        part: dict[str, Any] = {"functionCall": {"name": name, "args": _args(arguments)}}
        if answer.signature and not parts:
            part["thoughtSignature"] = answer.signature
        parts.append(part)
    return parts


def _args(arguments: str) -> Any:
    """Gemini's arguments are a JSON object; a script's malformed text becomes {}."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _chunks(answer: Answer, number: int) -> list[dict[str, Any]]:
    contents = [_thought_parts([part]) for part in split(answer.reasoning, answer.fragment)]
    contents += [[{"text": part}] for part in split(answer.text, answer.fragment)]
    if answer.tool_calls:
        contents.append(_call_parts(answer))
    elif answer.signature:
        contents.append([{"text": "", "thoughtSignature": answer.signature}])
    if not contents:
        contents.append([{"text": ""}])
    return [_response(number, parts, answer, last=index == len(contents) - 1)
            for index, parts in enumerate(contents)]


def _response(number: int, parts: list[dict[str, Any]], answer: Answer, *,
              last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    response: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL,
                                "responseId": f"resp-{number:04d}"}
    if answer.usage is not None:
        response["usageMetadata"] = _usage(answer) if last else {
            "promptTokenCount": answer.usage[0], "totalTokenCount": answer.usage[0]}
    return response


def _usage(answer: Answer) -> dict[str, Any]:
    prompt, output = answer.usage or (0, 0)
    thoughts = len(answer.reasoning.split())
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": output,
             "totalTokenCount": prompt + output + thoughts}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if answer.cache[0]:
        usage["cachedContentTokenCount"] = answer.cache[0]
    return usage
