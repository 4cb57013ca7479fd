"""Thinking per provider, through litellm's real provider code against loopback
servers: a Claude's signed thinking blocks assembled from the stream, kept with the
reply and sent back unchanged while it thinks; nothing of any reasoning sent to an
OpenAI-format model; ``--thinking BUDGET`` as each provider takes it."""

from __future__ import annotations

import asyncio

import pytest
from support import anthropic_server, openai_server
from support.model_client import READ
from support.model_server import text, tool_call, tool_calls

from dm_cc.core.compaction import model_messages
from dm_cc.llm.base import ModelReply, ReasoningDelta
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.llm.openai_format import to_openai_messages
from dm_cc.llm.thinking import plan_thinking, thinking_effort
from dm_cc.session.messages import Message, ToolCall

pytestmark = pytest.mark.usefixtures("litellm_imported")

CLAUDE = "anthropic/claude-sonnet-4-5"
SIGNED = {"type": "thinking", "thinking": "I should read a.txt first.", "signature": "sig-A=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}



@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")


def claude(server, thinking: int = 2000) -> LiteLLMModel:
    return LiteLLMModel(CLAUDE, api_base=server.base_url, thinking=thinking, timeout=10)


def complete(model: LiteLLMModel, messages: list[Message], **kwargs) -> tuple[ModelReply, list]:
    events: list = []
    reply = asyncio.run(model.complete("You are terse.", messages, [READ],
                                       on_stream=events.append, **kwargs))
    return reply, events


def recorded(reply: ModelReply) -> Message:
    """The reply as the loop appends it to the session."""
    return Message("assistant", reply.text, tool_calls=reply.tool_calls,
                   reasoning=reply.reasoning, reasoning_blocks=reply.reasoning_blocks)


def results(reply: ModelReply, content: str = "a") -> list[Message]:
    return [Message("tool", content, tool_call_id=call.id, tool_name=call.name)
            for call in reply.tool_calls]


def tool_call_of(name: str, arguments: dict) -> tuple[ToolCall, ...]:
    return (ToolCall("call_1", name, arguments).with_own_id(),)


def assistant_content(body: dict, index: int = 0) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "assistant"][index]["content"]


# ---------------------------------------------------------------- Claude (Anthropic)

def test_a_tool_turn_sends_its_signed_and_redacted_thinking_back_unchanged_before_tool_use():
    script = [tool_calls(("read", {"path": "a.txt"}), reasoning=SIGNED["thinking"],
                         signature=SIGNED["signature"], redacted=REDACTED["data"]),
              text("It says a.")]
    prompt = [Message("user", "what is in a.txt?")]
    with anthropic_server.serve(script) as server:
        model = claude(server)
        first, events = complete(model, prompt, temperature=0.2)
        history = [*prompt, recorded(first), *results(first)]
        second, _ = complete(model, history, temperature=0.2)
    assert first.reasoning_blocks == (SIGNED, REDACTED)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == SIGNED["thinking"]
    assert second.text == "It says a."
    for body in server.bodies:   # thinking on, within max_tokens; Anthropic takes no temperature
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
        assert body["max_tokens"] > 2000 and "temperature" not in body
    sent = assistant_content(server.bodies[1])
    assert sent[:2] == [SIGNED, REDACTED]          # first, as they came, text and signature
    assert [block["type"] for block in sent[2:]] == ["tool_use"]
    assert sent[2]["id"] == anthropic_server.tool_use_id(1, 0)
    user = server.bodies[1]["messages"][-1]["content"]
    assert user[0]["type"] == "tool_result" and user[0]["tool_use_id"] == sent[2]["id"]


def test_interleaved_thinking_blocks_are_each_closed_by_their_signature():
    script = [tool_calls(("read", {"path": "a.txt"}), ("read", {"path": "b.txt"}),
                         text="Reading both.", reasoning="First a.", signature="sig-1",
                         redacted="opaque", interleaved=(("Then b.", "sig-2"),)),
              text("Both read.")]
    prompt = [Message("user", "read a and b")]
    with anthropic_server.serve(script) as server:
        model = claude(server)
        first, events = complete(model, prompt)
        complete(model, [*prompt, recorded(first), *results(first)])
    blocks = ({"type": "thinking", "thinking": "First a.", "signature": "sig-1"},
              {"type": "redacted_thinking", "data": "opaque"},
              {"type": "thinking", "thinking": "Then b.", "signature": "sig-2"})
    assert first.reasoning_blocks == blocks
    assert first.reasoning == "First a.\n\nThen b."      # shown apart
    assert [c.arguments for c in first.tool_calls] == [{"path": "a.txt"}, {"path": "b.txt"}]
    sent = assistant_content(server.bodies[1])
    assert sent[:3] == list(blocks)
    assert [block["type"] for block in sent[3:]] == ["text", "tool_use", "tool_use"]


def test_a_block_whose_signature_never_came_is_not_kept():
    from dm_cc.llm.litellm_model import _Assembly

    class Delta:
        def __init__(self, blocks):
            self.thinking_blocks, self.reasoning_content = blocks, None

    class Chunk:
        def __init__(self, blocks):
            self.choices = [type("Choice", (), {"delta": Delta(blocks)})()]

    assembly = _Assembly(signed_thinking=True)
    for blocks in ([{"type": "thinking", "thinking": "a"}],
                   [{"type": "thinking", "thinking": "", "signature": "s"}],
                   [{"type": "thinking", "thinking": "cut off"}]):
        assembly.add(Chunk(blocks))
    assert assembly.reply(0).reasoning_blocks == (
        {"type": "thinking", "thinking": "a", "signature": "s"},)
    unsigned = _Assembly()        # not a Claude: nothing kept
    unsigned.add(Chunk([{"type": "thinking", "thinking": "x", "signature": "s"}]))
    assert unsigned.reply(0).reasoning_blocks == ()


def test_with_thinking_off_a_claude_is_sent_no_thinking_and_no_blocks():
    history = [Message("user", "hi"),
               Message("assistant", "hello", reasoning="hm", reasoning_blocks=(SIGNED,)),
               Message("user", "again")]
    with anthropic_server.serve([text("ok")]) as server:
        reply, _ = complete(claude(server, thinking=0), history, temperature=0.3)
    body = server.bodies[0]
    assert reply.text == "ok" and reply.notices == ()
    assert "thinking" not in body and body["temperature"] == 0.3
    assert assistant_content(body) == [{"type": "text", "text": "hello"}]


def test_a_tool_turn_made_without_thinking_goes_on_without_it_then_thinks_again():
    """Thinking turned on (or a switch from another model) while a reply's calls
    wait: Anthropic refuses thinking on the request that goes on from them."""
    call_reply = ModelReply(tool_calls=tool_call_of("read", {"path": "a.txt"}))
    history = [Message("user", "read a"), recorded(call_reply), *results(call_reply)]
    with anthropic_server.serve([text("it says a"), text("ok")]) as server:
        model = claude(server)
        complete(model, history)
        complete(model, [*history, Message("assistant", "it says a"), Message("user", "more")])
    assert "thinking" not in server.bodies[0]
    assert server.bodies[1]["thinking"]["type"] == "enabled"


def test_a_turn_that_began_thinking_goes_on_thinking_after_replies_without_blocks():
    """Claude thinks once a turn: its later tool calls in the turn carry no blocks,
    and the turn's requests keep thinking on (a turn is thought in one mode), the
    turn's first blocks sent back."""
    first = ModelReply(tool_calls=tool_call_of("read", {"path": "a.txt"}),
                       reasoning_blocks=(SIGNED,))
    second = ModelReply(tool_calls=tool_call_of("read", {"path": "b.txt"}))
    history = [Message("user", "read a then b"), recorded(first), *results(first),
               recorded(second), *results(second)]
    with anthropic_server.serve([text("done")]) as server:
        complete(claude(server), history)
    assert server.bodies[0]["thinking"]["type"] == "enabled"
    sent = [block for message in server.bodies[0]["messages"] if message["role"] == "assistant"
            for block in message["content"] if block["type"] == "thinking"]
    assert sent == [SIGNED]


def test_kept_blocks_survive_compaction_and_go_back_as_stored():
    kept = Message("assistant", "", tool_calls=tool_call_of("read", {"path": "a"}),
                   reasoning_blocks=(SIGNED, REDACTED))
    summary = Message("user", "[dm_cc: conversation compacted] …", synthetic=True,
                      compaction=True, kept_from=kept.id)
    session = [Message("user", "old"), Message("assistant", "old answer", reasoning_blocks=(
        {"type": "thinking", "thinking": "old", "signature": "old-sig"},)),
        kept, Message("tool", "a", tool_call_id=kept.tool_calls[0].id, tool_name="read"),
        summary]
    wire = to_openai_messages("", model_messages(session), thinking_blocks=True)
    assistants = [m for m in wire if m["role"] == "assistant"]
    assert len(assistants) == 1 and assistants[0]["thinking_blocks"] == [SIGNED, REDACTED]
    assert "thinking_blocks" not in to_openai_messages("", model_messages(session))[1]


# ---------------------------------------------------------------- OpenAI format

def test_an_openai_model_after_claude_is_sent_no_thinking_blocks_and_no_reasoning():
    """A session that switched /model from Claude; and DeepSeek-style reasoning_content
    of the model's own first reply: neither goes back."""
    script = [tool_call("read", {"path": "a.txt"}, reasoning="the reasoning_content"),
              text("done")]
    claude_turn = [Message("user", "hi"),
                   Message("assistant", "hello", reasoning="thought", reasoning_blocks=(SIGNED,)),
                   Message("user", "read a.txt")]
    with openai_server.serve(script) as server:
        model = LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1",
                             api_key="sk-test", thinking=8000, timeout=10)
        first, _ = complete(model, claude_turn)
        second, _ = complete(model, [*claude_turn, recorded(first), *results(first)])
    assert first.reasoning == "the reasoning_content" and first.reasoning_blocks == ()
    assert second.text == "done"
    for body in server.bodies:
        for message in body["messages"]:
            assert set(message) <= {"role", "content", "tool_calls", "tool_call_id"}, message
        assert "thinking" not in body and "reasoning_effort" not in body
    assert [m.get("tool_calls") is not None for m in server.bodies[1]["messages"]
            if m["role"] == "assistant"] == [False, True]
    assert first.notices == ("thinking is not supported by openai/test-model: "
                             "--thinking has no effect",)
    assert second.notices == ()        # said once


def test_an_openai_reasoning_model_gets_an_effort_for_the_budget():
    with openai_server.serve([text("ok"), text("ok")]) as server:
        for budget in (2000, 30000):
            model = LiteLLMModel("openai/o3-mini", api_base=server.base_url + "/v1",
                                 api_key="sk-test", thinking=budget, timeout=10)
            reply, _ = complete(model, [Message("user", "hi")], temperature=0.2)
            assert reply.notices == ()
    assert [body["reasoning_effort"] for body in server.bodies] == ["low", "high"]
    assert "thinking" not in server.bodies[0]
    assert [thinking_effort(n) for n in (1024, 4000, 8000, 16000, 16001)] == \
        ["low", "low", "medium", "medium", "high"]


# ---------------------------------------------------------------- the budget, per provider

def test_the_budget_becomes_each_providers_own_parameter(litellm_imported):
    litellm = litellm_imported
    plan = plan_thinking(litellm, CLAUDE, 8000)
    assert plan.signed and plan.notice is None
    assert plan.params == {"thinking": {"type": "enabled", "budget_tokens": 8000},
                           "max_tokens": 8000 + 16384}      # the budget and the answer
    bedrock = plan_thinking(litellm, "bedrock/anthropic.claude-3-7-sonnet-20250219-v1:0", 4000)
    assert bedrock.signed and bedrock.params["thinking"]["budget_tokens"] == 4000
    gemini = plan_thinking(litellm, "gemini/gemini-2.5-flash", 3000)
    assert not gemini.signed and gemini.params == {
        "thinking": {"type": "enabled", "budget_tokens": 3000}}
    # which litellm's Gemini code makes thinkingConfig of
    assert litellm.get_optional_params(model="gemini-2.5-flash", custom_llm_provider="gemini",
                                       **gemini.params)["thinkingConfig"] == {
        "includeThoughts": True, "thinkingBudget": 3000}
    assert plan_thinking(litellm, "openai/gpt-5", 8000).params == {"reasoning_effort": "medium"}
    assert plan_thinking(litellm, CLAUDE, 0).params == {}


def test_a_budget_the_model_cannot_take_is_cut_and_said(litellm_imported):
    small = plan_thinking(litellm_imported, CLAUDE, 500)
    assert small.params["thinking"]["budget_tokens"] == 1024
    assert small.notice == ("thinking budget 500 tokens is less than "
                            "anthropic/claude-sonnet-4-5 takes: thinking with 1024")
    big = plan_thinking(litellm_imported, CLAUDE, 100_000)     # it writes 64000 at most
    assert big.params["thinking"]["budget_tokens"] == 64000 - 16384
    assert big.params["max_tokens"] == 64000
    assert big.notice == ("thinking budget 100000 tokens is more than anthropic/claude-sonnet-"
                          "4-5 can write in a reply (64000, 16384 of them kept for its "
                          "answer): thinking with 47616")


@pytest.mark.parametrize(("model", "notice"), [
    ("openai/gpt-4o", "thinking is not supported by openai/gpt-4o: --thinking has no effect"),
    ("anthropic/claude-3-5-haiku-20241022", "thinking is not supported by "
     "anthropic/claude-3-5-haiku-20241022: --thinking has no effect"),
    ("deepseek/deepseek-reasoner", "deepseek/deepseek-reasoner reasons on its own: "
     "--thinking does not change it"),
    ("no-such-provider/x", "thinking is not supported by no-such-provider/x: "
     "--thinking has no effect"),
])
def test_a_model_without_thinking_is_told_so_and_sent_nothing(litellm_imported, model, notice):
    plan = plan_thinking(litellm_imported, model, 8000)
    assert plan.params == {} and plan.notice == notice


def test_deepseeks_reasoning_goes_back_for_the_turns_that_called_tools_a_space_if_none():
    """reasoning_content, for DeepSeek's thinking mode: each assistant message between
    two user messages where a tool was called (a synthetic call of ``@reviewer`` has no
    reasoning: a space, which DeepSeek takes, where it refuses a missing one); a turn
    without calls, and the turn under way before it calls, send none."""
    call = ToolCall(id="c1", name="task", arguments={})
    history = [Message("user", "hi"), Message("assistant", "hello", reasoning="greet"),
               Message("user", "@reviewer look"),
               Message("assistant", "", tool_calls=(call,), synthetic=True),
               Message("tool", "fine", tool_call_id="c1", tool_name="task"),
               Message("assistant", "It is fine.", reasoning="summed up"),
               Message("user", "thanks"), Message("assistant", "", reasoning="no call yet")]
    sent = to_openai_messages("", history, reasoning_content=True)
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == [
        None, " ", "summed up", None]
    assert all("reasoning_content" not in m for m in to_openai_messages("", history))
