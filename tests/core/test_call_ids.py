"""Call ids: dm_cc gives every call an id of its own, unique in the session tree, and
keeps the model's only for the wire. A model that numbers its calls from 1 again
(a new model after /model, a subagent's model of its own) must not make one call's
result, screen line or subagent stand for another's (issue 23, item 8)."""

from __future__ import annotations

import asyncio

from support.trust import trust_project

from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.llm.openai_format import to_openai_messages
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.session.messages import Message, ToolCall


def run(loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def test_a_model_that_numbers_its_calls_from_1_again_shares_no_id(project):
    (project / "a.txt").write_text("A\n")
    (project / "b.txt").write_text("B\n")
    world = open_world(Options(), cwd=project)
    loop = world.open_loop(HeadlessApprover("deny"),
                           model=ScriptedModel([call("read", path="a.txt"), reply("one")]))
    run(loop, "read a")
    loop.rt.model = ScriptedModel([call("read", path="b.txt"), reply("two")])   # /model
    run(loop, "read b")
    calls = [c for m in loop.session.messages for c in m.tool_calls]
    results = [m for m in loop.session.messages if m.role == "tool"]
    assert [c.wire_id for c in calls] == ["call_1", "call_1"]    # the models' own, twice
    assert len({c.id for c in calls}) == 2 and "call_1" not in {c.id for c in calls}
    assert [(r.tool_call_id, r.content.strip()[-1]) for r in results] \
        == [(calls[0].id, "A"), (calls[1].id, "B")]
    # the wire: the model's own id while it is unique in the conversation; a repeated
    # one goes by dm_cc's (providers refuse two calls with one id), its result too
    wire = to_openai_messages("", loop.session.messages)
    said = [c["id"] for m in wire if m["role"] == "assistant" for c in m.get("tool_calls", ())]
    answered = [m["tool_call_id"] for m in wire if m["role"] == "tool"]
    assert said == answered == ["call_1", calls[1].id]
    # the saved session reads back with both ids
    again = world.sessions.load(loop.session.info.id)
    assert [c for m in again.messages for c in m.tool_calls] == calls


def test_the_wire_keeps_ids_of_sessions_saved_before_dm_cc_had_its_own():
    old = [Message("assistant", tool_calls=(ToolCall("toolu_1", "read", {"path": "a"}),)),
           Message("tool", "A", tool_call_id="toolu_1", tool_name="read")]
    wire = to_openai_messages("", old)
    assert wire[0]["tool_calls"][0]["id"] == wire[1]["tool_call_id"] == "toolu_1"
    assert Message.from_json({**old[0].to_json(), "tool_calls": [
        {"id": "toolu_1", "name": "read", "arguments": {}, "later_field": 1}]}).tool_calls[0] \
        == ToolCall("toolu_1", "read", {})


def test_a_subagent_whose_model_numbers_from_1_keeps_its_calls_apart(project):
    """A subagent with a model of its own numbers its calls from 1 too: its task call
    and its own first call must not share an id (the screen hid one for the other)."""
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "agents").mkdir()
    (project / ".dm_cc" / "agents" / "finder.md").write_text(
        "---\ndescription: finds\nmode: subagent\nmodel: scripted-child\n---\nFind.\n")
    trust_project(project)
    (project / "a.txt").write_text("A\n")
    child = ScriptedModel([call("read", path="a.txt"), reply("found")])
    world = open_world(Options(), cwd=project)
    loop = world.open_loop(HeadlessApprover("deny"), model=ScriptedModel([
        call("task", description="find", prompt="find a", subagent_type="finder"),
        reply("done")]))
    loop.rt.models = lambda name: child
    events: list = []
    loop.rt.on_event = events.append
    loop.subagents.on_event = events.append
    run(loop, "delegate")
    started = next(e for e in events if type(e).__name__ == "TaskStarted")
    inner = [e.event for e in events if type(e).__name__ == "InTask"
             and type(e.event).__name__ == "ToolFinished"]
    assert inner and inner[0].call.wire_id == "call_1"
    assert started.call_id != inner[0].call.id
    assert loop.session.messages[1].tool_calls[0].wire_id == "call_1"
