"""Prompt caching: Claude's ``cache_control`` breakpoints as litellm puts them on the
Anthropic wire, none on OpenAI's, and cache reads and writes counted and priced."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from support import anthropic_server, gemini_server, openai_server
from support.model_server import text, tool_calls

from dm_cc.llm.base import ToolSpec
from dm_cc.llm.litellm_model import LiteLLMModel, _import_litellm
from dm_cc.llm.openai_format import (
    MAX_BREAKPOINTS,
    is_claude,
    to_openai_messages,
    with_cache_breakpoints,
)
from dm_cc.session.messages import Message, ToolCall

pytestmark = pytest.mark.usefixtures("litellm_imported")

CLAUDE = "anthropic/claude-sonnet-4-5"
TOOLS = [ToolSpec(name, f"The {name} tool.", {"type": "object", "properties": {}})
         for name in ("read", "grep", "bash")]



@pytest.fixture(autouse=True)
def dummy_keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")


def marks(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where ``cache_control`` sits in a JSON body: the path of each object carrying it."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        if "cache_control" in value:
            assert value["cache_control"] == {"type": "ephemeral"}
            found.append(path)
        for key, item in value.items():
            found += marks(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += marks(item, (*path, index))
    return found


def unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def last_block(body: dict[str, Any], message: int) -> tuple[Any, ...]:
    index = message % len(body["messages"])
    return ("messages", index, "content", len(body["messages"][index]["content"]) - 1)


def session(model: LiteLLMModel, prompts: list[str], tools=TOOLS) -> list[Message]:
    """A conversation as the loop grows it: each reply appended, each of its calls
    answered, the next prompt after a reply without calls."""
    messages: list[Message] = []
    for prompt in prompts:
        messages.append(Message("user", prompt))
        while True:
            reply = asyncio.run(model.complete("You are a careful coding assistant.", messages,
                                               tools))
            messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            if not reply.tool_calls:
                break
            messages += [Message("tool", f"contents of {call.arguments}", tool_call_id=call.id,
                                 tool_name=call.name) for call in reply.tool_calls]
    return messages


def test_each_request_reads_the_previous_ones_whole_prefix_within_four_breakpoints():
    many = [("read", {"path": f"src/m{i}.py"}) for i in range(25)]    # more than 20 blocks
    script = [replace(tool_calls(*many), fragment=100), tool_calls(("grep", {"pattern": "x"}), ("bash", {})),
              text("First done."), tool_calls(("read", {"path": "a"})), text("Second done.")]
    with anthropic_server.serve(script) as server:
        model = LiteLLMModel(CLAUDE, api_base=server.base_url)
        session(model, ["look around", "and now?"])
    bodies = server.bodies
    assert len(bodies) == 5
    first = bodies[0]
    assert marks(first) == [("messages", 0, "content", 0), ("tools", 2), ("system", 0)]
    for previous, body in zip(bodies, bodies[1:], strict=False):
        found = marks(body)
        assert len(found) == MAX_BREAKPOINTS
        ended = len(previous["messages"]) - 1       # the previous request's last message
        assert set(found) == {("system", 0), ("tools", len(TOOLS) - 1),
                              last_block(body, -1), last_block(body, ended)}
        # ... and what precedes that breakpoint is the previous request, byte for byte
        assert unmarked(body["messages"][:ended + 1]) == unmarked(previous["messages"])
        assert unmarked(body["system"]) == unmarked(previous["system"])
        assert unmarked(body["tools"]) == unmarked(previous["tools"])
    # the tail after a turn of 25 parallel calls: one user message of 25 tool results
    second = bodies[1]["messages"][-1]
    assert [block["type"] for block in second["content"]] == ["tool_result"] * 25
    assert list(second["content"][-1]) == ["type", "tool_use_id", "content", "cache_control"]
    # a new prompt after a final answer: its text block carries the breakpoint
    assert bodies[3]["messages"][-1]["content"] == [
        {"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}]


def test_without_tools_or_system_fewer_breakpoints_and_the_input_is_not_changed():
    messages = to_openai_messages("", [Message("user", "hi")])
    marked = with_cache_breakpoints(messages, None)
    assert marked == {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]}
    assert messages == [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "read"}}]
    marked = with_cache_breakpoints(to_openai_messages("sys", []), tools)
    assert marked["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert marked["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in tools[0]


def test_an_empty_user_message_gets_no_breakpoint_a_tool_result_always_does():
    call = ToolCall(id="c1", name="read", arguments={})
    history = [Message("user", "go"), Message("assistant", "", tool_calls=(call,)),
               Message("tool", "", tool_call_id="c1", tool_name="read"),
               Message("assistant", "ok"), Message("user", "")]
    marked = with_cache_breakpoints(to_openai_messages("sys", history), None)["messages"]
    # the system prompt, the first prompt, the tool result; not the empty last prompt
    assert marks(marked) == [(0, "content", 0), (1, "content", 0), (3,)]
    assert marked[-1] == {"role": "user", "content": ""}


def test_the_cache_counts_come_from_anthropics_usage_and_are_priced_as_such():
    with anthropic_server.serve([text("ok", usage=(12, 5), cache=(100, 20))]) as server:
        model = LiteLLMModel(CLAUDE, api_base=server.base_url)
        reply = asyncio.run(model.complete("sys", [Message("user", "hi")], TOOLS))
    usage = reply.usage
    # litellm counts every prompt token in prompt_tokens: 12 fresh, 100 read, 20 written
    assert (usage.prompt_tokens, usage.completion_tokens) == (132, 5)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (100, 20)
    price = _import_litellm().get_model_info(CLAUDE)
    assert price["cache_read_input_token_cost"] < price["input_cost_per_token"] \
        < price["cache_creation_input_token_cost"]
    expected = (12 * price["input_cost_per_token"] + 5 * price["output_cost_per_token"]
                + 100 * price["cache_read_input_token_cost"]
                + 20 * price["cache_creation_input_token_cost"])
    assert usage.cost == pytest.approx(expected)


def test_openai_requests_carry_no_breakpoints():
    script = [tool_calls(("read", {"path": "a"})), text("ok", usage=(2000, 5), cache=(1536, 0))]
    with openai_server.serve(script) as server:
        model = LiteLLMModel("openai/gpt-4o", api_base=server.base_url + "/v1", api_key="sk-t")
        messages = session(model, ["hi"])
    assert len(messages) == 4
    assert all(marks(body) == [] for body in server.bodies)
    assert isinstance(server.bodies[0]["messages"][0]["content"], str)   # the system prompt


def test_openai_cached_tokens_are_read_tokens_at_their_price():
    with openai_server.serve([text("ok", usage=(2000, 5), cache=(1536, 0))]) as server:
        model = LiteLLMModel("openai/gpt-4o", api_base=server.base_url + "/v1", api_key="sk-t")
        reply = asyncio.run(model.complete("sys", [Message("user", "hi")], TOOLS))
    usage = reply.usage
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == \
        (2000, 1536, 0)
    price = _import_litellm().get_model_info("gpt-4o")
    expected = (464 * price["input_cost_per_token"] + 5 * price["output_cost_per_token"]
                + 1536 * price["cache_read_input_token_cost"])
    assert usage.cost == pytest.approx(expected)


def test_gemini_gets_no_breakpoints_and_its_implicit_cache_reads_are_counted(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "dummy-gemini-key")
    with gemini_server.serve([text("ok", usage=(3000, 5), cache=(2048, 0))]) as server:
        model = LiteLLMModel("gemini/gemini-2.5-flash", api_base=server.base_url)
        reply = asyncio.run(model.complete("sys", [Message("user", "hi")], TOOLS))
    assert marks(server.bodies) == []
    assert (reply.usage.prompt_tokens, reply.usage.cache_read_tokens,
            reply.usage.cache_write_tokens) == (3000, 2048, 0)


@pytest.mark.parametrize(("model", "marked"), [
    ("anthropic/claude-sonnet-4-5", True), ("claude-sonnet-4-5", True),
    ("anthropic/claude-test", True),
    ("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
    ("bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0", True),
    ("vertex_ai/claude-sonnet-4-5@20250929", True),
    ("bedrock/amazon.nova-pro-v1:0", False), ("vertex_ai/gemini-2.5-pro", False),
    ("openai/gpt-4o", False), ("gpt-4o", False), ("gemini/gemini-2.5-pro", False),
    ("openai/claude-via-a-proxy", False), ("openrouter/anthropic/claude-sonnet-4.5", False),
    ("ollama/llama3", False), ("no-such-provider/x", False),
])
def test_which_models_get_breakpoints(model, marked):
    assert LiteLLMModel(model).marks_cache_breakpoints is marked


def test_the_provider_rule_itself():
    assert is_claude("anthropic", "anything")
    assert is_claude("bedrock", "eu.anthropic.Claude-3-haiku")
    assert not is_claude("openai", "claude-sonnet-4-5")


def test_on_bedrock_litellm_makes_the_same_breakpoints_cache_points():
    """No Bedrock server here (its event stream is signed binary): litellm's own
    Converse transformation of the marked request, which is what would be sent."""
    from litellm.llms.bedrock.chat.converse_transformation import AmazonConverseConfig

    call = ToolCall(id="c1", name="read", arguments={})
    history = [Message("user", "hi"), Message("assistant", "", tool_calls=(call,)),
               Message("tool", "text", tool_call_id="c1", tool_name="read")]
    tools = [{"type": "function", "function": {"name": "read", "description": "Read.",
                                               "parameters": {"type": "object"}}}]
    marked = with_cache_breakpoints(to_openai_messages("sys", history), tools)
    body = AmazonConverseConfig()._transform_request(
        model="us.anthropic.claude-sonnet-4-5-20250929-v1:0", messages=marked["messages"],
        optional_params={"tools": marked["tools"]}, litellm_params={}, headers={})
    point = {"cachePoint": {"type": "default"}}
    assert body["system"][-1] == point and body["toolConfig"]["tools"][-1] == point
    assert [m["content"][-1] == point for m in body["messages"]] == [True, False, True]
