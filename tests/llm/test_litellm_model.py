"""LiteLLMModel through litellm's real HTTP path, against a loopback OpenAI server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import socket
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from support.model_client import BASH, READ, FakeSleep
from support.openai_server import cut, failure, serve, slow, text, tool_call, tool_calls

from dm_cc.llm.base import ModelError, ModelReply, ReasoningDelta, Retrying, TextDelta
from dm_cc.llm.failures import unreachable
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.session.messages import Message, ToolCall

pytestmark = pytest.mark.usefixtures("litellm_imported")




def model_for(server, **kwargs) -> tuple[LiteLLMModel, FakeSleep]:
    sleep = FakeSleep()
    kwargs.setdefault("api_key", "sk-test")
    return LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1", sleep=sleep,
                        timeout=10, **kwargs), sleep


def complete(model: LiteLLMModel, messages=None, tools=(), system="You are terse.",
             **kwargs) -> tuple[ModelReply, list]:
    events: list = []
    messages = messages or [Message("user", "hi")]
    reply = asyncio.run(model.complete(system, messages, tools, on_stream=events.append, **kwargs))
    return reply, events


def test_text_and_reasoning_stream_in_deltas_and_usage_is_filled():
    with serve([text("Hello, streaming world!", reasoning="think first", usage=(21, 8))]) as server:
        model, _ = model_for(server)
        reply, events = complete(model)
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    thoughts = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert len(texts) > 3 and "".join(texts) == "Hello, streaming world!"
    assert len(thoughts) > 1 and "".join(thoughts) == "think first"
    assert reply.text == "Hello, streaming world!" and reply.reasoning == "think first"
    assert reply.tool_calls == ()
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (21, 8)
    assert reply.usage.cost == 0.0      # litellm has no price for test-model; no crash


def test_known_model_gets_a_cost():
    with serve([text("ok", usage=(1000, 100))]) as server:
        model = LiteLLMModel("openai/gpt-4o", api_base=server.base_url + "/v1", api_key="sk-test")
        reply, _ = complete(model)
    assert reply.usage.cost > 0


def test_missing_usage_leaves_zeros():
    with serve([text("ok", usage=None)]) as server:
        model, _ = model_for(server)
        reply, _ = complete(model)
    assert reply.text == "ok"
    assert reply.usage.cost == 0.0


def test_two_tool_calls_are_assembled_from_fragments():
    script = [tool_calls(("read", {"path": "src/app.py"}),
                         ("bash", {"command": "ls -la && echo 'done'"}), text="Looking.")]
    with serve(script) as server:
        model, _ = model_for(server)
        reply, events = complete(model, tools=[READ, BASH])
    assert reply.text == "Looking."
    assert reply.tool_calls == (
        ToolCall("call_1_0", "read", {"path": "src/app.py"}, '{"path": "src/app.py"}'),
        ToolCall("call_1_1", "bash", {"command": "ls -la && echo 'done'"},
                 '{"command": "ls -la && echo \'done\'"}'),
    )
    assert [e.text for e in events] and all(isinstance(e, TextDelta) for e in events)


def test_malformed_or_non_object_arguments_become_none_with_raw_text():
    script = [tool_calls(("bash", '{"command": "ls'), ("read", "[1, 2]"), ("list", ""))]
    with serve(script) as server:
        model, _ = model_for(server)
        reply, _ = complete(model, tools=[READ, BASH])
    bad, listed, empty = reply.tool_calls
    assert (bad.name, bad.arguments, bad.raw_arguments) == ("bash", None, '{"command": "ls')
    assert (listed.arguments, listed.raw_arguments) == (None, "[1, 2]")
    assert empty.arguments == {}


def test_request_carries_tools_and_converted_history():
    history = [
        Message("user", "look at a.py"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "read", {"path": "a.py"}),
                                             ToolCall("c2", "bash", None, '{"command"'))),
        Message("tool", "print('hi')", tool_call_id="c1", tool_name="read"),
        Message("tool", "arguments are not valid JSON", tool_call_id="c2", tool_name="bash",
                is_error=True),
        Message("assistant", "It prints hi.", reasoning="easy"),
        Message("user", "now plan", synthetic=True, agent="plan"),
    ]
    with serve([tool_call("read", {"path": "b.py"})]) as server:
        model, _ = model_for(server)
        complete(model, history, tools=[READ, BASH], temperature=0.2)
    (body,) = server.bodies
    assert body["model"] == "test-model"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.2
    assert body["tools"] == [
        {"type": "function", "function": {"name": "read", "description": "Read a file.",
                                          "parameters": READ.parameters}},
        {"type": "function", "function": {"name": "bash", "description": "Run a command.",
                                          "parameters": BASH.parameters}},
    ]
    # litellm leaves out the None content of an assistant message that only calls tools
    messages = [{k: v for k, v in m.items() if not (k == "content" and v is None)}
                for m in body["messages"]]
    assert messages == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "look at a.py"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "read", "arguments": '{"path": "a.py"}'}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "print('hi')"},
        {"role": "tool", "tool_call_id": "c2", "content": "arguments are not valid JSON"},
        {"role": "assistant", "content": "It prints hi."},
        {"role": "user", "content": "now plan"},
    ]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


def test_no_tools_means_no_tools_key():
    with serve([text("ok")]) as server:
        model, _ = model_for(server)
        complete(model, system="")
    (body,) = server.bodies
    assert "tools" not in body and "temperature" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_local_server_without_key_gets_a_dummy_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve([text("ok")]) as server:
        model, _ = model_for(server, api_key=None)
        reply, _ = complete(model)
    assert reply.text == "ok"
    assert server.requests[0].headers["authorization"] == "Bearer sk-dummy"


def test_rate_limit_and_server_errors_are_retried_with_backoff_each_retry_said_first():
    script = [failure(429, "slow down"), failure(502, "bad gateway"), text("finally")]
    with serve(script) as server:
        model, sleep = model_for(server)
        reply, events = complete(model)
    assert reply.text == "finally"
    assert events[:2] == [Retrying("rate limited (429)", 0.5, 2, 5),
                          Retrying("server error (502)", 1.0, 3, 5)]
    assert "".join(e.text for e in events[2:]) == "finally"     # a retry notice is no output
    assert len(server.bodies) == 3
    assert sleep.delays == [0.5, 1.0]


def test_retry_after_header_is_honoured_in_seconds_or_as_a_date_and_capped():
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    script = [failure(429, "slow down", retry_after=7), failure(429, retry_after=soon),
              failure(429, retry_after=3600), failure(429, retry_after="whenever"), text("ok")]
    with serve(script) as server:
        model, sleep = model_for(server)
        _, events = complete(model)
    seven, dated, capped, unread = sleep.delays
    assert (seven, capped, unread) == (7.0, 60.0, 4.0)      # unreadable: the backoff's own
    assert 17 < dated <= 20
    assert [e.delay for e in events if isinstance(e, Retrying)] == sleep.delays


def test_retries_give_up_with_a_model_error():
    with serve([failure(500, "boom")] * 3) as server:
        model, sleep = model_for(server, max_retries=2)
        with pytest.raises(ModelError) as caught:
            complete(model)
    assert len(server.bodies) == 3 and sleep.delays == [0.5, 1.0]
    assert "500" in str(caught.value) and "boom" in str(caught.value)
    assert "after 3 attempts" in str(caught.value)


@pytest.mark.parametrize(("status", "message"), [(401, "Incorrect API key provided"),
                                                 (400, "tools[0] is invalid"),
                                                 (404, "model test-model does not exist")])
def test_client_errors_fail_at_once_with_a_clear_message(status, message):
    with serve([failure(status, message), text("never")]) as server:
        model, sleep = model_for(server)
        with pytest.raises(ModelError) as caught:
            complete(model)
    assert len(server.bodies) == 1 and sleep.delays == []
    error = str(caught.value)
    assert "\n" not in error
    assert "openai/test-model" in error and server.base_url + "/v1" in error
    assert str(status) in error and message in error
    assert "OpenAIException" not in error and "litellm." not in error


def test_broken_stream_after_output_was_shown_is_not_retried():
    with serve([cut("abcdefghijkl", after=3), text("again")]) as server:
        model, sleep = model_for(server)
        events: list = []
        with pytest.raises(ModelError) as caught:
            asyncio.run(model.complete("", [Message("user", "hi")], [], on_stream=events.append))
    assert "".join(e.text for e in events) == "abcdef"
    assert len(server.bodies) == 1 and sleep.delays == []
    assert "not retried" in str(caught.value)


def test_broken_stream_with_nothing_shown_is_retried():
    with serve([cut("abcdefghijkl", after=3), text("again")]) as server:
        model, sleep = model_for(server)
        reply = asyncio.run(model.complete("", [Message("user", "hi")], []))
    assert reply.text == "again" and len(server.bodies) == 2 and sleep.delays == [0.5]


def test_a_refused_connection_is_tried_once_more_then_said_plainly():
    with socket.socket() as probe:      # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = FakeSleep()
    model = LiteLLMModel("openai/test-model", api_base=f"http://127.0.0.1:{port}/v1",
                         api_key="sk-test", timeout=5, sleep=sleep)    # 4 retries for the rest
    with pytest.raises(ModelError) as caught:
        complete(model)
    assert sleep.delays == [0.5]        # not 0.5 + 1 + 2 + 4 s of backoff for nothing
    assert str(caught.value) == (f"cannot connect to http://127.0.0.1:{port}/v1: connection "
                                 "refused (model openai/test-model; is the server running, "
                                 "and is --api-base right?)")
    assert "500" not in str(caught.value)
    model.max_retries = 0               # no retries asked for: none
    sleep.delays.clear()
    with pytest.raises(ModelError, match="connection refused"):
        complete(model)
    assert sleep.delays == []


def test_an_unreachable_endpoint_is_found_behind_the_wrappers_of_its_error():
    def wrapped(inner: BaseException) -> Exception:
        outer = RuntimeError("litellm.InternalServerError: Connection error.")
        middle = ConnectionError("Cannot connect to host")
        middle.__context__ = inner
        outer.__cause__ = middle
        return outer

    assert unreachable(wrapped(ConnectionRefusedError(111, "refused"))) == "connection refused"
    assert unreachable(wrapped(socket.gaierror(-2, "Name or service not known"))) \
        == "its host name is not known"
    assert unreachable(wrapped(TimeoutError())) is None     # a timeout is retried as before
    looped = RuntimeError("a")
    looped.__context__ = RuntimeError("b")
    looped.__context__.__context__ = looped
    assert unreachable(looped) is None


def test_a_server_that_starts_while_refused_is_reached_on_the_second_try():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = []

    class StartOnSleep(FakeSleep):      # the server comes up during the pause
        async def __call__(self, delay: float) -> None:
            await super().__call__(delay)
            started.append(serve([text("up now")], port=port))
            started[0].__enter__()

    model = LiteLLMModel("openai/test-model", api_base=f"http://127.0.0.1:{port}/v1",
                         api_key="sk-test", timeout=5, sleep=StartOnSleep())
    try:
        reply, _ = complete(model)
    finally:
        for server in started:
            server.__exit__(None, None, None)
    assert reply.text == "up now"


def test_an_exception_from_on_stream_propagates_unchanged():
    class Stop(Exception):
        pass

    def on_stream(event):
        raise Stop

    with serve([text("hello there"), text("unused")]) as server:
        model, sleep = model_for(server)
        with pytest.raises(Stop):
            asyncio.run(model.complete("", [Message("user", "hi")], [], on_stream=on_stream))
    assert len(server.bodies) == 1 and sleep.delays == []


def test_a_timeout_is_retried():
    with serve([slow(text("late"), 1.5), text("in time")]) as server:
        model, sleep = model_for(server)
        model.timeout = 0.3
        reply, _ = complete(model)
    assert reply.text == "in time" and sleep.delays == [0.5]


def test_loopback_server_also_answers_plain_json_and_lists_models():
    with serve([tool_call("read", {"path": "a"})]) as server:
        listed = json.load(urllib.request.urlopen(server.base_url + "/v1/models", timeout=5))
        request = urllib.request.Request(
            server.base_url + "/v1/chat/completions", method="POST",
            data=json.dumps({"model": "test-model", "messages": []}).encode(),
            headers={"Content-Type": "application/json"})
        answer = json.load(urllib.request.urlopen(request, timeout=5))
    assert listed["data"][0]["id"] == "test-model"
    message = answer["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path": "a"}'}
    assert answer["usage"]["total_tokens"] == 17
    assert [r.method for r in server.requests] == ["GET", "POST"]


def test_context_window_from_litellms_model_map_else_unknown():
    # litellm_imported (above) loaded litellm with LITELLM_LOCAL_MODEL_COST_MAP=True:
    # the model map shipped with litellm, no download.
    assert LiteLLMModel("openai/gpt-4o").context_window == 128_000
    assert LiteLLMModel("openai/no-such-local-model", api_base="http://127.0.0.1:9/v1"
                        ).context_window is None
    assert LiteLLMModel("openai/no-such-local-model", context_window=32_768
                        ).context_window == 32_768
