"""The OpenAI Chat Completions wire format for the loopback model server
(tests/support/model_server.py), as OpenAI, vLLM, llama.cpp and Ollama speak it::

    with serve([text("hello"), tool_call("read", {"path": "a.txt"})]) as server:
        model = LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1")

POST /v1/chat/completions answers the next ``Answer``: streamed as SSE chunks when
the request asks for ``stream`` (text and ``reasoning_content`` -- or the answer's
``reasoning_field`` -- in fragments, each
tool call's arguments in fragments under its ``index`` -- one call after another, or
interleaved (``tool_calls(..., interleave=True)``), usage in a last chunk with
no choices when ``stream_options.include_usage``), plain JSON otherwise.
GET /v1/models lists one model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import zip_longest
from typing import Any

from support.model_server import (
    MODEL,
    Answer,
    ModelServer,
    cut,
    failure,
    slow,
    split,
    text,
    tool_call,
    tool_calls,
)
from support.model_server import serve as serve_wire

__all__ = ["MODEL", "OPENAI", "Answer", "cut", "failure", "serve", "slow", "text", "tool_call",
           "tool_calls"]


class OpenAIWire:
    def is_completion(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/chat/completions")

    def streams(self, path: str, body: Any) -> bool:
        return bool(body.get("stream"))

    def get(self, path: str) -> Any | None:
        if path.rstrip("/").endswith("/models"):
            return {"object": "list",
                    "data": [{"id": MODEL, "object": "model", "owned_by": "dm_cc-tests"}]}
        return None

    def error(self, answer: Answer) -> Any:
        kinds = {400: "invalid_request_error", 401: "authentication_error",
                 404: "not_found_error", 429: "rate_limit_exceeded"}
        kind = answer.error_type or kinds.get(answer.status, "server_error")
        return {"error": {"message": answer.error, "type": kind, "param": None,
                          "code": answer.error_type or str(answer.status)}}

    def events(self, answer: Answer, number: int, body: Any) -> list[str]:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = _chunks(answer, number, include_usage)
        return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]

    def completion(self, answer: Answer, number: int, body: Any) -> Any:
        return _completion(answer, number)


OPENAI = OpenAIWire()


@contextmanager
def serve(script: Iterable[Answer], port: int = 0) -> Iterator[ModelServer]:
    """An OpenAI-compatible loopback server for the block (``.base_url`` + ``/v1``)."""
    with serve_wire(script, OPENAI, port) as server:
        yield server


def _usage(answer: Answer) -> dict[str, Any] | None:
    if answer.usage is None:
        return None
    prompt, completion = answer.usage
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if answer.cache[0]:
        usage["prompt_tokens_details"] = {"cached_tokens": answer.cache[0]}
    return usage


def _call_id(number: int, index: int) -> str:
    return f"call_{number}_{index}"


def _chunks(answer: Answer, number: int, include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({answer.reasoning_field: part})
               for part in split(answer.reasoning, answer.fragment)]
    chunks += [chunk({"content": part}) for part in split(answer.text, answer.fragment)]
    chunks += _call_chunks(answer, number, chunk)
    chunks.append(chunk({}, "tool_calls" if answer.tool_calls else "stop"))
    usage = _usage(answer)
    if include_usage and usage is not None:
        chunks.append({"id": f"chatcmpl-{number}", "object": "chat.completion.chunk",
                       "created": 0, "model": MODEL, "choices": [], "usage": usage})
    return chunks


def _call_chunks(answer: Answer, number: int,
                 chunk: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call's first chunk (index, id, name), then its arguments in fragments
    under its index: call after call, or -- ``answer.interleave`` -- every call's
    first chunk, then their fragments in turn."""
    heads, fragments = [], []
    for index, (name, arguments) in enumerate(answer.tool_calls):
        heads.append(chunk({"tool_calls": [{
            "index": index, "id": _call_id(number, index), "type": "function",
            "function": {"name": name, "arguments": ""}}]}))
        fragments.append([chunk({"tool_calls": [{"index": index,
                                                 "function": {"arguments": part}}]})
                          for part in split(arguments, answer.fragment)])
    if not answer.interleave:
        return [c for head, parts in zip(heads, fragments, strict=True) for c in (head, *parts)]
    in_turn = [c for row in zip_longest(*fragments) for c in row if c is not None]
    return heads + in_turn


def _completion(answer: Answer, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.reasoning:
        message[answer.reasoning_field] = answer.reasoning
    if answer.tool_calls:
        message["tool_calls"] = [
            {"id": _call_id(number, index), "type": "function",
             "function": {"name": name, "arguments": arguments}}
            for index, (name, arguments) in enumerate(answer.tool_calls)]
    finish = "tool_calls" if answer.tool_calls else "stop"
    body: dict[str, Any] = {
        "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    usage = _usage(answer)
    if usage is not None:
        body["usage"] = usage
    return body
