"""The Anthropic Messages wire format for the loopback model server
(tests/support/model_server.py), written from Anthropic's public API reference::

    with serve([text("hello", reasoning="Let me think.", signature="sig-1")]) as server:
        model = LiteLLMModel("anthropic/claude-test", api_base=server.base_url)

POST …/v1/messages answers the next ``Answer``. Streamed (``"stream": true``), it is
the SSE sequence ``message_start`` (input and cache token counts), then for each
content block ``content_block_start`` / ``content_block_delta``… /
``content_block_stop`` — a ``thinking`` block (``thinking_delta`` fragments, then
one ``signature_delta``; more of them between the tool calls with
``Answer.interleaved``), a ``redacted_thinking`` block (whole in its start), a
``text`` block (``text_delta``), a ``tool_use`` block per call (``input_json_delta``
fragments of its input) — with a ``ping`` among them, then ``message_delta`` (stop
reason, output tokens) and ``message_stop``. Failures are Anthropic's error body
(``{"type": "error", "error": {"type": "overloaded_error", …}}``; 529 is overloaded).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from support.model_server import MODEL, Answer, ModelServer, split
from support.model_server import serve as serve_wire

#: An Anthropic error type for each status it documents.
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


class AnthropicWire:
    def is_completion(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?")[0].rstrip("/").endswith("/messages")

    def streams(self, path: str, body: Any) -> bool:
        return bool(body.get("stream"))

    def get(self, path: str) -> Any | None:
        if path.split("?")[0].rstrip("/").endswith("/models"):
            return {"data": [{"type": "model", "id": MODEL, "display_name": "Test"}],
                    "has_more": False}
        return None

    def error(self, answer: Answer) -> Any:
        kind = answer.error_type or ERROR_TYPES.get(answer.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": answer.error}}

    def events(self, answer: Answer, number: int, body: Any) -> list[str]:
        message = _message(answer, number, content=[], stop=None)
        message["usage"]["output_tokens"] = 1
        events = [_event("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(_blocks(answer, number)):
            events += _block_events(index, block, answer.fragment)
            if index == 0:
                events.append(_event("ping", {"type": "ping"}))
        output = answer.usage[1] if answer.usage else 0
        events.append(_event("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": _stop(answer), "stop_sequence": None},
            "usage": {"output_tokens": output}}))
        events.append(_event("message_stop", {"type": "message_stop"}))
        return events

    def completion(self, answer: Answer, number: int, body: Any) -> Any:
        blocks = [{**block, "input": _parsed(block["input"])} if block["type"] == "tool_use"
                  else block for block in _blocks(answer, number)]
        return _message(answer, number, content=blocks, stop=_stop(answer))


ANTHROPIC = AnthropicWire()


@contextmanager
def serve(script: Iterable[Answer], port: int = 0) -> Iterator[ModelServer]:
    """An Anthropic Messages loopback server for the block (``api_base=.base_url``)."""
    with serve_wire(script, ANTHROPIC, port) as server:
        yield server


def tool_use_id(number: int, index: int) -> str:
    """The id of the ``index``-th call of the ``number``-th answer."""
    return f"toolu_{number:02d}{index:02d}"


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return {}


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def _stop(answer: Answer) -> str:
    return "tool_use" if answer.tool_calls else "end_turn"


def _usage(answer: Answer) -> dict[str, Any]:
    prompt, output = answer.usage or (0, 0)
    read, written = answer.cache
    return {"input_tokens": prompt, "output_tokens": output,
            "cache_creation_input_tokens": written, "cache_read_input_tokens": read}


def _message(answer: Answer, number: int, *, content: list[dict[str, Any]],
             stop: str | None) -> dict[str, Any]:
    return {"id": f"msg_{number:04d}", "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": _usage(answer)}


def _blocks(answer: Answer, number: int) -> list[dict[str, Any]]:
    """The whole content blocks of an answer, in the order Claude gives them."""
    blocks: list[dict[str, Any]] = []
    if answer.reasoning:
        blocks.append({"type": "thinking", "thinking": answer.reasoning,
                       "signature": answer.signature or f"sig-{number}"})
    if answer.redacted:
        blocks.append({"type": "redacted_thinking", "data": answer.redacted})
    if answer.text:
        blocks.append({"type": "text", "text": answer.text})
    thoughts = [{"type": "thinking", "thinking": thought, "signature": signature}
                for thought, signature in answer.interleaved]
    for index, (name, arguments) in enumerate(answer.tool_calls):
        if index < len(thoughts):     # interleaved thinking: Claude thinks between calls
            blocks.append(thoughts[index])
        blocks.append({"type": "tool_use", "id": tool_use_id(number, index), "name": name,
                       "input": arguments})    # the JSON text; parsed below when whole
    return blocks + thoughts[len(answer.tool_calls):]


def _block_events(index: int, block: dict[str, Any], size: int) -> list[str]:
    def start(content_block: dict[str, Any]) -> str:
        return _event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": content_block})

    def delta(payload: dict[str, Any]) -> str:
        return _event("content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": payload})

    kind = block["type"]
    if kind == "thinking":
        events = [start({"type": "thinking", "thinking": ""})]
        events += [delta({"type": "thinking_delta", "thinking": part})
                   for part in split(block["thinking"], size)]
        events.append(delta({"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "redacted_thinking":
        events = [start(block)]
    elif kind == "text":
        events = [start({"type": "text", "text": ""})]
        events += [delta({"type": "text_delta", "text": part})
                   for part in split(block["text"], size)]
    else:
        events = [start({"type": "tool_use", "id": block["id"], "name": block["name"],
                         "input": {}})]
        events += [delta({"type": "input_json_delta", "partial_json": part})
                   for part in split(block["input"], size)]
    events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events
