"""A real model server on loopback, answering from a script, in one of several wire
formats (OpenAI Chat Completions, Anthropic Messages, Gemini generateContent).

Tests drive litellm's real provider code against it and then assert what was sent::

    with serve([text("hello"), tool_call("read", {"path": "a.txt"})], wire=OPENAI) as server:
        model = LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1")
        ...
        assert server.bodies[0]["messages"][0]["role"] == "system"

The script is the same whatever the format: each completion request consumes the
next :class:`Answer` — a reply (text, tool calls, reasoning, usage), an HTTP failure
(``failure(429)``), a stream that dies half-way (``cut("partial")``), or a late one
(``slow(text("x"), 2)``). A :class:`Wire` turns an answer into its format's bytes
(one module per format: ``openai_server``, ``anthropic_server``, ``gemini_server``).
An exhausted script answers 400. Nothing listens beyond 127.0.0.1.
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
from typing import Any, Protocol

MODEL = "test-model"


@dataclass(frozen=True)
class Answer:
    """One scripted response. ``tool_calls`` holds (name, arguments JSON text).

    ``reasoning``: what the model thought, in each format's own form (OpenAI-style
    ``reasoning_content``, an Anthropic ``thinking`` block signed ``signature``, a
    Gemini ``thought`` part); ``redacted``: an Anthropic ``redacted_thinking`` block's
    opaque data; ``interleaved``: further signed thinking blocks (text, signature) of
    the same answer, the i-th before the i-th tool call (Claude's interleaved
    thinking; Anthropic only). ``cache``: (read, written) prompt tokens, for formats
    that say. ``interleave``: stream the calls' argument fragments in turn (call 0,
    call 1, call 0, …) after all their headers, as some OpenAI-compatible servers do.
    ``reasoning_field``: the OpenAI-format field the reasoning goes in (DeepSeek's
    ``reasoning_content``; OpenRouter, recent vLLM and Ollama say ``reasoning``)."""

    text: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()
    reasoning: str = ""
    signature: str = ""
    redacted: str = ""
    interleaved: tuple[tuple[str, str], ...] = ()
    status: int = 200
    error: str = ""
    error_type: str = ""                        # the format's error kind; "" for its usual one
    headers: tuple[tuple[str, str], ...] = ()
    usage: tuple[int, int] | None = (12, 5)     # (prompt, completion) tokens
    cache: tuple[int, int] = (0, 0)             # (read, written) prompt tokens
    cut_after: int | None = None                # drop the connection after N events
    delay: float = 0.0                          # seconds to wait before answering
    fragment: int = 3                           # characters per streamed fragment
    interleave: bool = False                    # tool-call fragments in turn, see above
    reasoning_field: str = "reasoning_content"  # OpenAI format only, see above


def text(content: str, *, reasoning: str = "", signature: str = "", redacted: str = "",
         usage: tuple[int, int] | None = (12, 5), cache: tuple[int, int] = (0, 0)) -> Answer:
    return Answer(text=content, reasoning=reasoning, signature=signature, redacted=redacted,
                  usage=usage, cache=cache)


def tool_call(name: str, arguments: dict[str, Any] | str, *, text: str = "",
              reasoning: str = "", signature: str = "") -> Answer:
    """A reply with one tool call; a str ``arguments`` is sent as is (malformed JSON too)."""
    return tool_calls((name, arguments), text=text, reasoning=reasoning, signature=signature)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], text: str = "", reasoning: str = "",
               signature: str = "", redacted: str = "",
               interleaved: tuple[tuple[str, str], ...] = (),
               cache: tuple[int, int] = (0, 0), interleave: bool = False) -> Answer:
    encoded = tuple((name, args if isinstance(args, str) else json.dumps(args))
                    for name, args in calls)
    return Answer(text=text, tool_calls=encoded, reasoning=reasoning, signature=signature,
                  redacted=redacted, interleaved=interleaved, cache=cache, interleave=interleave)


def failure(status: int, message: str = "", *, retry_after: float | None = None,
            error_type: str = "") -> Answer:
    headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
    return Answer(status=status, error=message or f"scripted failure {status}", headers=headers,
                  error_type=error_type)


def cut(content: str, after: int = 2) -> Answer:
    """A streamed text reply whose connection drops after ``after`` events."""
    return Answer(text=content, cut_after=after)


def slow(answer: Answer, seconds: float) -> Answer:
    """``answer``, after keeping the client waiting (to provoke its timeout)."""
    return replace(answer, delay=seconds)


def split(value: str, size: int) -> list[str]:
    """``value`` in pieces of ``size`` characters, as a server streams it."""
    return [value[i:i + size] for i in range(0, len(value), size)] if value else []


class Wire(Protocol):
    """One wire format: which requests are completions, and the bytes of an answer."""

    def is_completion(self, method: str, path: str) -> bool: ...

    def streams(self, path: str, body: Any) -> bool:
        """Whether the request asks for a streamed answer."""
        ...

    def events(self, answer: Answer, number: int, body: Any) -> list[str]:
        """A streamed answer: the SSE text of each event, in order."""
        ...

    def completion(self, answer: Answer, number: int, body: Any) -> Any:
        """A whole answer's JSON body."""
        ...

    def error(self, answer: Answer) -> Any:
        """A failure's JSON body, as the provider words it."""
        ...

    def get(self, path: str) -> Any | None:
        """A GET's JSON answer (e.g. the model list); None: 404."""
        ...


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]     # names in lower case
    body: Any


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Iterable[Answer], wire: Wire, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.script: deque[Answer] = deque(script)
        self.wire = wire
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
    def bodies(self) -> list[Any]:
        """The JSON bodies of every completion request, in order."""
        return [r.body for r in self.requests if self.wire.is_completion(r.method, r.path)]

    @property
    def completion_requests(self) -> list[Received]:
        return [r for r in self.requests if self.wire.is_completion(r.method, r.path)]

    def next_answer(self) -> tuple[int, Answer | None]:
        with self.lock:
            self.completions += 1
            return self.completions, (self.script.popleft() if self.script else None)


@contextmanager
def serve(script: Iterable[Answer], wire: Wire, port: int = 0) -> Iterator[ModelServer]:
    """Run a loopback server for the duration of the block; yields it (``.base_url``);
    on ``port`` when given (a free one by default)."""
    server = ModelServer(script, wire, port)
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
    server: ModelServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        self._record(None)
        payload = self.server.wire.get(self.path)
        if payload is None:
            self._json(404, {"error": {"message": f"no route GET {self.path}"}})
        else:
            self._json(200, payload)

    def do_POST(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._record(raw.decode("utf-8", "replace"))
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        self._record(body)
        wire = self.server.wire
        if not wire.is_completion("POST", self.path):
            self._json(404, {"error": {"message": f"no route POST {self.path}"}})
            return
        number, answer = self.server.next_answer()
        if answer is not None and answer.delay:
            time.sleep(answer.delay)
        if answer is None:
            answer = failure(400, "script exhausted")
        if answer.status != 200:
            self._json(answer.status, wire.error(answer), answer.headers)
        elif wire.streams(self.path, body):
            self._stream(wire.events(answer, number, body), answer.cut_after)
        else:
            self._json(200, wire.completion(answer, number, body))

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

    def _stream(self, events: list[str], cut_after: int | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
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
