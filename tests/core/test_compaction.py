"""Compaction with the real loop, the scripted model and a real session store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.compaction import (
    SUMMARY_PREFIX,
    SUMMARY_SYSTEM,
    compact,
    keep_from,
    model_messages,
    since_compaction,
)
from dm_cc.core.events import Compacted
from dm_cc.core.loop import Loop
from dm_cc.llm.base import ModelError, ModelReply, Usage
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import SessionStore
from dm_cc.tools.base import builtin_tools
from dm_cc.ui.headless import event_json

BIG = 1200          # characters of each prompt and answer: about 300 tokens


def make_loop(project: Path, model: ScriptedModel, events: list | None = None) -> Loop:
    read_only = [tool for tool in builtin_tools() if tool.name == "read"]  # a small prompt
    return open_world(cwd=project).open_loop(
        HeadlessApprover("deny"), model=model, tools=read_only,
        on_event=events.append if events is not None else lambda e: None)


def run(loop: Loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def is_summary_call(system: str) -> bool:
    return system == SUMMARY_SYSTEM


def answering(summary: str = "SUMMARY: the user asked for turns 1 to 4."):
    """A reply function: summarises when asked to, else answers at length."""
    def respond(system, messages, tools):
        if is_summary_call(system):
            return reply(summary)
        return reply(f"answer to {messages[-1].content[:7]} " + "y" * BIG)
    return respond


def prompt(n: int) -> str:
    return f"turn {n} " + "x" * BIG


def seen_after_summary(model: ScriptedModel) -> list[Message]:
    index = next(i for i, (system, _, _) in enumerate(model.calls) if is_summary_call(system))
    return model.calls[index + 1][1]


def reload(loop: Loop):
    return SessionStore(loop.session.path.parent).load(loop.session.info.id)


def test_automatic_compaction_sends_the_summary_and_recent_turns_only(project):
    events: list = []
    # Each message is about 308 tokens; the prompt before any is 300 to 800. The 6th
    # call would pass 80% of 4,600 tokens; the 5th would not.
    model = ScriptedModel([answering()] * 20, context_window=4600)
    loop = make_loop(project, model, events)
    assert 300 < loop.replies.tokens() < 800
    for n in range(1, 7):
        run(loop, prompt(n))
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert len(compacted) == 1 and compacted[0].automatic
    event = compacted[0]
    assert event.summarised == 8 and event.after_tokens < event.before_tokens
    assert event.before_tokens > 0.8 * 4600
    # the summariser got the older turns as a transcript, and no tools
    summary_call = next(c for c in model.calls if is_summary_call(c[0]))
    assert summary_call[2] == [] and len(summary_call[1]) == 1
    transcript = summary_call[1][0].content
    assert "turn 1" in transcript and "turn 4" in transcript and "turn 5" not in transcript
    # the next call: the summary, then turns 5 and 6 verbatim
    seen = seen_after_summary(model)
    assert seen[0].compaction and seen[0].content.startswith(SUMMARY_PREFIX)
    assert "SUMMARY: the user asked" in seen[0].content
    assert [m.content[:6] for m in seen[1:]] == ["turn 5", "answer", "turn 6"]
    # the session file still holds everything, the summary appended after turn 6's prompt
    stored = reload(loop).messages
    assert len(stored) == 6 * 2 + 1
    assert [m.content[:6] for m in stored if m.role == "user" and not m.synthetic] == \
        [f"turn {n}" for n in range(1, 7)]
    assert stored[11].compaction and stored[11].kept_from == stored[8].id


def test_the_providers_token_count_is_preferred_to_the_estimate(project):
    events: list = []
    model = ScriptedModel([ModelReply(text="short", usage=Usage(prompt_tokens=90_000)),
                           ModelReply(text="short", usage=Usage(prompt_tokens=91_000)),
                           reply("S"), reply("short again")], context_window=100_000)
    loop = make_loop(project, model, events)
    run(loop, "one")
    run(loop, "two")     # over 80%, but the last two turns are kept whole: nothing to do
    assert not any(isinstance(e, Compacted) for e in events)
    run(loop, "three")   # compacts first: the last call reported 91,000 prompt tokens
    assert [c[0] for c in model.calls].count(SUMMARY_SYSTEM) == 1
    assert isinstance(events[-2], Compacted) and events[-2].before_tokens > 91_000
    assert events[-2].summarised == 2      # "one" and its answer


def test_manual_compact_keeps_the_last_two_turns(project):
    events: list = []
    model = ScriptedModel([answering("S1")] * 10)   # context window unknown
    loop = make_loop(project, model, events)
    for n in range(1, 4):
        run(loop, prompt(n))
    done = asyncio.run(loop.replies.compact())
    assert done is not None and not done.automatic and done.summarised == 2
    assert events[-1] == done
    assert [m.content[:6] for m in model_messages(loop.session.messages)] == \
        [SUMMARY_PREFIX[:6], "turn 2", "answer", "turn 3", "answer"]
    run(loop, prompt(4))
    assert [m.content[:6] for m in model.calls[-1][1]][-2:] == ["answer", "turn 4"]
    assert model.calls[-1][1][0].compaction


def test_compacting_again_summarises_the_summary_and_drops_it(project):
    model = ScriptedModel([answering("S1")] * 8 + [answering("S2")] * 8)
    loop = make_loop(project, model)
    for n in range(1, 5):
        run(loop, prompt(n))
    asyncio.run(loop.replies.compact())
    for n in range(5, 7):
        run(loop, prompt(n))
    script = model._script
    script.items[script.played:] = [answering("S2")] * 4
    second = asyncio.run(loop.replies.compact())
    assert second is not None and second.summarised == 5   # S1, turns 3 and 4
    window = model_messages(loop.session.messages)
    assert [m.content[:6] for m in window[1:]] == ["turn 5", "answer", "turn 6", "answer"]
    assert "S2" in window[0].content and sum(m.compaction for m in window) == 1
    transcript = model.calls[-1][1][0].content
    assert "[summary of the conversation before]\nThe earlier part" in transcript


def test_nothing_to_compact_makes_no_model_call(project):
    model = ScriptedModel([answering()] * 4)
    loop = make_loop(project, model)
    run(loop, "only one turn")
    assert asyncio.run(loop.replies.compact()) is None
    assert len(model.calls) == 1


def test_a_compaction_survives_reload_and_a_resumed_loop_honours_it(project):
    model = ScriptedModel([answering("S1")] * 10)
    loop = make_loop(project, model)
    for n in range(1, 4):
        run(loop, prompt(n))
    asyncio.run(loop.replies.compact())
    stored = reload(loop)
    summary = [m for m in stored.messages if m.compaction]
    assert len(summary) == 1 and summary[0].synthetic and summary[0].kept_from
    assert [m.id for m in model_messages(stored.messages)] == \
        [m.id for m in model_messages(loop.session.messages)]
    resumed_model = ScriptedModel([reply("resumed")])
    resumed = open_world(Options(resume=stored.info.id), cwd=project).open_loop(
        HeadlessApprover("deny"), model=resumed_model, tools=loop.rt.tools)
    run(resumed, "go on")
    seen = resumed_model.calls[0][1]
    assert seen[0].compaction and "S1" in seen[0].content
    assert [m.content[:6] for m in seen[1:]] == ["turn 2", "answer", "turn 3", "answer", "go on"]


def fail(system, messages, tools):
    raise ModelError("model scripted at its default endpoint: 500 overloaded")


@pytest.mark.parametrize("failure", [fail, reply("   ")], ids=["error", "empty summary"])
def test_a_failed_manual_compaction_leaves_the_history_unchanged(project, failure):
    model = ScriptedModel([answering()] * 3 + [failure])
    loop = make_loop(project, model)
    for n in range(1, 4):
        run(loop, prompt(n))
    before = [m.id for m in loop.session.messages]
    with pytest.raises(ModelError):
        asyncio.run(loop.replies.compact())
    assert [m.id for m in loop.session.messages] == before
    assert [m.id for m in reload(loop).messages] == before


def test_a_failed_automatic_compaction_ends_the_turn_with_the_error(project):
    script = [answering()] * 5 + [fail]
    model = ScriptedModel(script, context_window=4600)   # see the first test
    loop = make_loop(project, model)
    for n in range(1, 6):
        run(loop, prompt(n))
    with pytest.raises(ModelError, match="overloaded"):
        run(loop, prompt(6))
    stored = reload(loop).messages
    assert not any(m.compaction for m in stored) and stored[-1].content.startswith("turn 6")
    assert len(model_messages(stored)) == 11


def test_a_long_turn_is_split_between_a_tool_call_and_the_next_not_inside_one(project):
    # Each read costs about 516 tokens: the 5th call would pass 80% of 3,000 tokens,
    # and only the last call and its result fit in the quarter of it that is kept.
    for n in range(5):
        (project / f"f{n}.txt").write_text(f"file {n}\n" + "z" * 2000 + "\n")
    script = [call("read", path=f"f{n}.txt") for n in range(4)]
    model = ScriptedModel([*script, reply("S"), call("read", path="f4.txt"), reply("done")],
                          context_window=3000)
    events: list = []
    loop = make_loop(project, model, events)
    assert run(loop, "read them all").text == "done"
    assert any(isinstance(e, Compacted) for e in events)
    seen = seen_after_summary(model)
    assert seen[0].compaction and [m.role for m in seen[1:]] == ["assistant", "tool"]
    assert "file 3" in seen[2].content
    calls = {c.id for m in seen if m.role == "assistant" for c in m.tool_calls}
    results = [m.tool_call_id for m in seen if m.role == "tool"]
    assert results and set(results) <= calls and len(calls) == len(results)


def test_keep_from_never_starts_at_a_tool_result():
    asked = ToolCall("c1", "read", {"path": "a"})
    window = [Message("user", "go"), Message("assistant", tool_calls=(asked,)),
              Message("tool", "r" * 4000, tool_call_id="c1", tool_name="read"),
              Message("assistant", "done")]
    assert keep_from(window, budget=10_000) == 0        # one turn, it fits: nothing to do
    assert keep_from(window, budget=50) == 3            # not 2: the result needs its call
    assert keep_from(window, budget=0) == 4             # nothing fits: keep nothing


def test_since_compaction_without_a_summary_is_everything():
    messages = [Message("user", "a"), Message("assistant", "b")]
    assert since_compaction(messages) == messages


def test_a_summary_whose_kept_message_is_missing_keeps_nothing_before_it():
    summary = Message("user", "S", synthetic=True, compaction=True, kept_from="msg_gone")
    messages = [Message("user", "a"), summary, Message("user", "b")]
    assert [m.content for m in since_compaction(messages)] == ["S", "b"]


def test_compact_offers_no_tools_and_returns_nothing_to_append_on_its_own():
    model = ScriptedModel([reply("the summary")])
    window = [Message("user", "one"), Message("assistant", "1"),
              Message("user", "two"), Message("assistant", "2"),
              Message("user", "three")]
    done = asyncio.run(compact(model, window, agent="plan", keep_tokens=1000))
    assert done is not None and done.summarised == 2
    assert done.message.agent == "plan" and done.message.kept_from == window[2].id
    assert model.calls[0][2] == []


def test_the_compacted_event_as_json():
    assert event_json(Compacted(9000, 1200, 14, True)) == {
        "type": "compacted", "before_tokens": 9000, "after_tokens": 1200, "summarised": 14,
        "automatic": True}
