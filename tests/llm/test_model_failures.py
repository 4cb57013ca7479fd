"""When the model fails (issue 24, item 4): each retry said before its wait, a prompt
too long for the context window compacted once and sent again, a refused key naming
the variable it comes from, a refused connection said at once. LiteLLMModel and the
real loop through litellm's real HTTP path, against the loopback OpenAI server."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from support import anthropic_server
from support.model_client import FakeSleep
from support.openai_server import cut, failure, serve, text

from dm_cc.compose import open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.compaction import SUMMARY_PREFIX, SUMMARY_SYSTEM
from dm_cc.core.events import Compacted, Notice
from dm_cc.core.loop import Loop
from dm_cc.llm.base import ContextTooLong, ModelError, Retrying, RetryNotices, TextDelta
from dm_cc.llm.failures import http_status, provider_message
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.session.messages import Message
from dm_cc.tools.base import builtin_tools

pytestmark = pytest.mark.usefixtures("litellm_imported")

TOO_LONG = ("This model's maximum context length is 1000 tokens. However, your messages "
            "resulted in 1500 tokens. Please reduce the length of the messages.")



def model_for(server, model: str = "openai/test-model", **kwargs) -> tuple[LiteLLMModel, FakeSleep]:
    sleep = FakeSleep()
    return LiteLLMModel(model, api_base=server.base_url + "/v1", sleep=sleep, timeout=10,
                        **kwargs), sleep


def complete(model: LiteLLMModel, on_stream=None) -> list:
    events: list = []
    asyncio.run(model.complete("", [Message("user", "hi")], [],
                               on_stream=on_stream or events.append))
    return events


def failed(model: LiteLLMModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        complete(model)
    return caught.value


# -- retries, said -----------------------------------------------------------------

def test_an_overloaded_529_is_retried_and_said_so():
    with serve([failure(529, "Overloaded"), failure(529, "Overloaded"), text("ok")]) as server:
        model, sleep = model_for(server, api_key="sk-test", max_retries=2)
        events = complete(model)
    assert events[:2] == [Retrying("overloaded (529)", 0.5, 2, 3),
                          Retrying("overloaded (529)", 1.0, 3, 3)]
    assert sleep.delays == [0.5, 1.0] and len(server.bodies) == 3


def test_the_last_retry_that_fails_gives_up_with_no_notice_after_it():
    with serve([failure(429, "slow down")] * 2) as server:
        model, _ = model_for(server, api_key="sk-test", max_retries=1)
        events: list = []
        with pytest.raises(ModelError, match="gave up after 2 attempts"):
            complete(model, events.append)
    assert events == [Retrying("rate limited (429)", 0.5, 2, 2)]


def test_a_front_end_that_shows_only_retries_still_gets_a_broken_reply_retried():
    """``dm_cc run`` shows no reply as it streams: a reply broken after its start is
    retried whole (with a plain on_stream it would not be: its start was shown)."""
    heard: list = []
    with serve([failure(429, "slow down"), cut("abcdefghijkl", after=3), text("whole")]) as server:
        model, sleep = model_for(server, api_key="sk-test")
        reply = asyncio.run(model.complete("", [Message("user", "hi")], [],
                                           on_stream=RetryNotices(heard.append)))
    assert reply.text == "whole" and len(server.bodies) == 3
    assert [r.reason for r in heard] == ["rate limited (429)", "the connection broke"]
    assert all(isinstance(r, Retrying) for r in heard) and sleep.delays == [0.5, 1.0]


def test_anthropics_overloaded_529_rate_limit_too_long_and_refused_key(monkeypatch):
    """Over Anthropic's wire format: litellm says 500 of a 529 and quotes the JSON
    body; the person is told 'overloaded (529)' and the body's message."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    script = [failure(529, "Overloaded"), failure(429, "slow down", retry_after=3),
              text("ok"),
              failure(400, "prompt is too long: 208000 tokens > 200000 maximum"),
              failure(401, "invalid x-api-key")]
    sleep = FakeSleep()
    with anthropic_server.serve(script) as server:
        model = LiteLLMModel("anthropic/claude-test", api_base=server.base_url, sleep=sleep,
                             timeout=10)
        events = complete(model)
        too_long, refused = failed(model), failed(model)
    assert events[:2] == [Retrying("overloaded (529)", 0.5, 2, 5),
                          Retrying("rate limited (429)", 3.0, 3, 5)]
    assert isinstance(too_long, ContextTooLong) and too_long.limit == 200_000
    assert str(too_long) == ("model anthropic/claude-test: the prompt is longer than its "
                             "context window (prompt is too long: 208000 tokens > 200000 "
                             "maximum)")
    assert str(refused) == (f"model anthropic/claude-test at {server.base_url}: 401 the API key "
                            "was refused (invalid x-api-key); the key comes from "
                            "ANTHROPIC_API_KEY: check that it is right and may use this model")
    assert sleep.delays == [0.5, 3.0] and len(server.bodies) == 5


def test_the_status_is_the_providers_own_behind_litellms_wrapper():
    class Wrapper(Exception):
        status_code = 500        # litellm's InternalServerError for Anthropic's 529

    class Raw(Exception):
        status_code = 529

    outer = Wrapper("litellm.InternalServerError: AnthropicError - b'{\"type\": \"error\", "
                    "\"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}'")
    outer.__cause__ = Raw("overloaded")
    assert http_status(outer) == 529
    assert provider_message(outer) == "Overloaded"     # not the quoted body


# -- a prompt too long for the context window ----------------------------------------

@pytest.mark.parametrize(("status", "message", "code", "limit"), [
    (400, TOO_LONG, None, 1000),                                     # litellm maps it
    (400, "Your input exceeds the context window of this model.",    # OpenAI's code only
     "context_length_exceeded", None),
    (400, "request (1500 tokens) exceeds the available context size (1024 tokens), try "
          "increasing it", None, 1024),                              # llama.cpp
])
def test_a_prompt_too_long_is_context_too_long_and_not_retried(status, message, code, limit):
    with serve([failure(status, message, error_type=code or ""), text("never")]) as server:
        model, sleep = model_for(server, api_key="sk-test")
        error = failed(model)
    assert isinstance(error, ContextTooLong) and error.limit == limit
    assert str(error).startswith("model openai/test-model: the prompt is longer than its "
                                 "context window (")
    assert len(server.bodies) == 1 and sleep.delays == []


def test_another_bad_request_is_no_context_too_long():
    with serve([failure(400, "tools[0] is invalid")]) as server:
        model, _ = model_for(server, api_key="sk-test")
        assert not isinstance(failed(model), ContextTooLong)


def make_loop(project: Path, model: LiteLLMModel, events: list) -> Loop:
    read_only = [tool for tool in builtin_tools() if tool.name == "read"]
    return open_world(cwd=project).open_loop(HeadlessApprover("deny"), model=model,
                                             tools=read_only, on_event=events.append)


def run(loop: Loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def test_too_long_compacts_once_and_sends_again_then_says_so_plainly(project):
    """Three turns, then the provider refuses the fourth as too long: the older turns
    are summarised (for the window the provider named) and the call made again. Later,
    refused again after compacting: said plainly, not compacted twice."""
    events: list = []
    script = [text("one"), text("two"), text("three"),
              failure(400, TOO_LONG), text("SUMMARY: turn 1 and 2"), text("four"),
              failure(400, TOO_LONG), text("SUMMARY: up to 4"), failure(400, TOO_LONG),
              text("unused")]
    with serve(script) as server:
        model, _ = model_for(server, api_key="sk-test")
        loop = make_loop(project, model, events)
        for prompt in ("turn 1", "turn 2", "turn 3"):
            run(loop, prompt)
        assert run(loop, "turn 4").text == "four"
        with pytest.raises(ContextTooLong) as caught:
            run(loop, "turn 5")
        bodies = server.bodies
    assert len(bodies) == 9
    summary_call, again = bodies[4], bodies[5]
    assert summary_call["messages"][0]["content"] == SUMMARY_SYSTEM
    said = [m["content"] for m in again["messages"][1:]]
    assert said[0].startswith(SUMMARY_PREFIX) and said[-1] == "turn 4"
    assert "turn 1" not in said and "turn 3" in said        # the last two turns kept
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices[:2] == ["the conversation is too long for openai/test-model's context "
                           "window (1000 tokens): compacting it and trying again"] * 2
    assert len([e for e in events if isinstance(e, Compacted)]) == 2
    assert str(caught.value) == (
        "model openai/test-model: the prompt is longer than its context window (This model's "
        "maximum context length is 1000 tokens. However, your messages resulted in 1500 "
        "tokens. Please reduce the length of the messages.), even after compacting the "
        "conversation; start a new session or change to a model with a larger one (/model)")


def test_too_long_with_nothing_older_to_summarise_says_what_to_do(project):
    events: list = []
    with serve([failure(400, TOO_LONG), text("unused")]) as server:
        model, _ = model_for(server, api_key="sk-test")
        loop = make_loop(project, model, events)
        with pytest.raises(ContextTooLong) as caught:
            run(loop, "a first message that is far too long")
    assert len(server.bodies) == 1          # no summary call: there was nothing to summarise
    assert str(caught.value) == (
        "the conversation is too long for openai/test-model's context window (1000 tokens) "
        "and there is nothing older to summarise; start a new session or change to a model "
        "with a larger one (/model)")
    assert not any(isinstance(e, Compacted) for e in events)


# -- a refused key ---------------------------------------------------------------------

def test_a_refused_key_names_the_variable_it_came_from_and_is_not_retried(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with serve([failure(401, "Incorrect API key provided"), failure(403, "not allowed"),
                text("never")]) as server:
        model, sleep = model_for(server)
        refused, denied = str(failed(model)), str(failed(model))
    assert refused == (f"model openai/test-model at {server.base_url}/v1: 401 the API key was "
                       "refused (Incorrect API key provided); the key comes from "
                       "OPENAI_API_KEY: check that it is right and may use this model")
    assert denied.startswith(f"model openai/test-model at {server.base_url}/v1: 403 permission "
                             "denied (not allowed); the key comes from OPENAI_API_KEY")
    assert len(server.bodies) == 2 and sleep.delays == []
    assert server.requests[0].headers["authorization"] == "Bearer sk-wrong"


def test_a_local_server_that_wants_a_key_is_told_of_the_placeholder(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve([failure(401, "missing bearer token")]) as server:
        model, _ = model_for(server)
        error = str(failed(model))
    assert error.endswith("(missing bearer token); dm_cc sent a placeholder key as "
                          "OPENAI_API_KEY is not set: set it to the key this server wants")


@pytest.mark.parametrize(("name", "said"), [
    ("anthropic/claude-x", "ANTHROPIC_API_KEY is not set: set it to your anthropic key"),
    ("gemini/gemini-x", "neither GOOGLE_API_KEY nor GEMINI_API_KEY is set: set it to your "
                        "gemini key"),
])
def test_no_key_at_all_says_which_variable_to_set(monkeypatch, name, said):
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY",
                     "GOOGLE_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with serve([failure(401, "no key")]) as server:
        model, sleep = model_for(server, name)
        error = str(failed(model))
    assert error == f"model {name}: no API key: {said}"
    assert sleep.delays == []


# -- a refused connection, on each provider's path --------------------------------------

@pytest.mark.parametrize("name", ["openai/x", "anthropic/claude-x", "gemini/gemini-x"])
def test_a_refused_connection_is_said_on_every_providers_path(monkeypatch, name):
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, "k")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = FakeSleep()
    model = LiteLLMModel(name, api_base=f"http://127.0.0.1:{port}/v1", sleep=sleep, timeout=5)
    events: list = []
    with pytest.raises(ModelError) as caught:
        complete(model, events.append)
    assert str(caught.value).startswith(f"cannot connect to http://127.0.0.1:{port}/v1: "
                                        f"connection refused (model {name};")
    assert events == [Retrying("connection refused", 0.5, 2, 2)] and sleep.delays == [0.5]
    assert not any(isinstance(e, TextDelta) for e in events)
