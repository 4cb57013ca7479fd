"""A real OpenAI-compatible HTTP server on loopback, answering from a script.

Tests drive litellm's real HTTP path against it and then assert what was sent::

    with serve([text("hello"), tool_call("read", {"path": "a.txt"})]) as server:
        model = LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1")
        ...
        assert server.bodies[0]["messages"][0]["role"] == "system"

Each POST /v1/chat/completions consumes the next ``Answer`` of the script: a text
or tool-call reply (streamed as SSE fragments when the request asks for
``stream``, plain JSON otherwise), an HTTP failure (``failure(429)``), or a stream
that dies half-way (``cut("partial")``), or a late one (``slow(text("x"), 2)``).
An exhausted script answers 400.
GET /v1/models lists one model. Nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "test-model"


@dataclass(frozen=True)
class Answer:
    """One scripted response. ``tool_calls`` holds (name, arguments JSON text)."""

    text: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()
    reasoning: str = ""
    status: int = 200
    error: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    usage: tuple[int, int] | None = (12, 5)     # (prompt, completion) tokens
    cut_after: int | None = None                # drop the connection after N chunks
    delay: float = 0.0                          # seconds to wait before answering
    fragment: int = 3                           # characters per streamed fragment


def text(content: str, *, reasoning: str = "", usage: tuple[int, int] | None = (12, 5)) -> Answer:
    return Answer(text=content, reasoning=reasoning, usage=usage)


def tool_call(name: str, arguments: dict[str, Any] | str, *, text: str = "") -> Answer:
    """A reply with one tool call; a str ``arguments`` is sent as is (malformed JSON too)."""
    return tool_calls((name, arguments), text=text)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], text: str = "") -> Answer:
    encoded = tuple((name, args if isinstance(args, str) else json.dumps(args))
                    for name, args in calls)
    return Answer(text=text, tool_calls=encoded)


def failure(status: int, message: str = "", *, retry_after: float | None = None) -> Answer:
    headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
    return Answer(status=status, error=message or f"scripted failure {status}", headers=headers)


def cut(content: str, after: int = 2) -> Answer:
    """A streamed text reply whose connection drops after ``after`` chunks."""
    return Answer(text=content, cut_after=after)


def slow(answer: Answer, seconds: float) -> Answer:
    """``answer``, after keeping the client waiting (to provoke its timeout)."""
    return replace(answer, delay=seconds)


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]     # names in lower case
    body: Any


class OpenAIServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Iterable[Answer], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.script: deque[Answer] = deque(script)
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        self.completions = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up is fine
            super().handle_error(request, client_address)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every chat completion request, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def next_answer(self) -> tuple[int, Answer | None]:
        with self.lock:
            self.completions += 1
            return self.completions, (self.script.popleft() if self.script else None)


@contextmanager
def serve(script: Iterable[Answer], port: int = 0) -> Iterator[OpenAIServer]:
    """Run a loopback server for the duration of the block; yields it (``.base_url``);
    on ``port`` when given (a free one by default)."""
    server = OpenAIServer(script, port)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # -- routing ---------------------------------------------------------

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            models = {"object": "list",
                      "data": [{"id": MODEL, "object": "model", "owned_by": "dm_cc-tests"}]}
            self._json(200, models)
        else:
            self._json(404, _error_body(f"no route GET {self.path}", 404))

    def do_POST(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._record(raw.decode("utf-8", "replace"))
            self._json(400, _error_body("request body is not JSON", 400))
            return
        self._record(body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, _error_body(f"no route POST {self.path}", 404))
            return
        number, answer = self.server.next_answer()
        if answer is not None and answer.delay:
            time.sleep(answer.delay)
        if answer is None:
            self._json(400, _error_body("script exhausted", 400))
        elif answer.status != 200:
            self._json(answer.status, _error_body(answer.error, answer.status), answer.headers)
        elif body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(_chunks(answer, number, include_usage), answer.cut_after)
        else:
            self._json(200, _completion(answer, number))

    # -- I/O ----------------------------------------------------------------

    def _record(self, body: Any) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        received = Received(self.command, self.path, headers, body)
        with self.server.lock:
            self.server.requests.append(received)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _json(self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(self, chunks: list[dict[str, Any]], cut_after: int | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
        for sent, event in enumerate(events):
            if cut_after is not None and sent >= cut_after:
                self.wfile.flush()
                self.close_connection = True
                self.connection.close()
                return
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# -- response bodies ---------------------------------------------------------

def _error_body(message: str, status: int) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
             429: "rate_limit_exceeded"}
    return {"error": {"message": message, "type": kinds.get(status, "server_error"),
                      "param": None, "code": str(status)}}


def _usage(answer: Answer) -> dict[str, int] | None:
    if answer.usage is None:
        return None
    prompt, completion = answer.usage
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _split(value: str, size: int) -> list[str]:
    return [value[i:i + size] for i in range(0, len(value), size)] if value else []


def _call_id(number: int, index: int) -> str:
    return f"call_{number}_{index}"


def _chunks(answer: Answer, number: int, include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": part})
               for part in _split(answer.reasoning, answer.fragment)]
    chunks += [chunk({"content": part}) for part in _split(answer.text, answer.fragment)]
    for index, (name, arguments) in enumerate(answer.tool_calls):
        chunks.append(chunk({"tool_calls": [{
            "index": index, "id": _call_id(number, index), "type": "function",
            "function": {"name": name, "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                   for part in _split(arguments, answer.fragment)]
    chunks.append(chunk({}, "tool_calls" if answer.tool_calls else "stop"))
    usage = _usage(answer)
    if include_usage and usage is not None:
        chunks.append({"id": f"chatcmpl-{number}", "object": "chat.completion.chunk",
                       "created": 0, "model": MODEL, "choices": [], "usage": usage})
    return chunks


def _completion(answer: Answer, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
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
