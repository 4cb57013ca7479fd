"""The loop gives tools an undo step of the session the person talks to, at the turn
of its last user message; ``Loop.undo`` and ``Loop.rewind`` (the REPL's /undo and
/rewind) through the real world, tools and stores."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, reply

ALLOW_EDITS = ("rules:\n  - {permission: edit, pattern: '**', action: allow}\n"
               "agents:\n  general:\n    rules: [{permission: edit, pattern: '**', "
               "action: allow}]\n")


def make_loop(project: Path, model: ScriptedModel) -> Loop:
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(ALLOW_EDITS)
    trust_project(project)
    return open_world(cwd=project).open_loop(HeadlessApprover("deny"), model=model)


def run(loop: Loop, prompt: str) -> None:
    asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def test_a_step_belongs_to_the_turn_of_the_last_user_message(project):
    (project / "a.txt").write_text("0\n")
    model = ScriptedModel([reply("hi"),
                           call("edit", path="a.txt", old_string="0", new_string="1"),
                           reply("done")])
    loop = make_loop(project, model)
    run(loop, "hello")
    run(loop, "change a")
    [step] = loop.rt.undo.steps(loop.session.info.id)
    assert step.turn == 2 and loop.session.messages[2].content == "change a"


def test_a_subagents_change_is_a_step_of_the_parents_session(project):
    model = ScriptedModel(
        [call("task", description="write", prompt="write b", subagent_type="general"),
         reply("written")],
        tasks={"write b": [call("write", path="b.txt", content="b\n"), reply("ok")]})
    loop = make_loop(project, model)
    run(loop, "delegate")
    assert (project / "b.txt").read_text() == "b\n"
    [step] = loop.rt.undo.steps(loop.session.info.id)
    assert step.paths == ("b.txt",) and step.turn == 0
    result = loop.undo()
    assert result.ok and not (project / "b.txt").exists()
    told = loop.session.messages[-1]
    assert told.synthetic and "step 1 (write b.txt)" in told.content


def test_rewind_undoes_the_steps_from_that_message_on_and_cuts_the_history(project):
    (project / "a.txt").write_text("0\n")
    model = ScriptedModel([call("edit", path="a.txt", old_string="0", new_string="1"),
                           reply("one"),
                           call("edit", path="a.txt", old_string="1", new_string="2"),
                           reply("two")])
    loop = make_loop(project, model)
    run(loop, "first")
    second = len(loop.session.messages)
    run(loop, "second")
    result = loop.rewind(second)
    assert result is not None and result.ok and [s.number for s in result.undone] == [2]
    assert (project / "a.txt").read_text() == "1\n"
    assert [m.content for m in loop.session.messages][-1] == "one"
    assert len(open_world(cwd=project).sessions.load(loop.session.info.id).messages) == second
    (project / "a.txt").write_text("mine\n")
    refused = loop.rewind(0)
    assert refused is not None and not refused.ok
    assert len(loop.session.messages) == second          # neither files nor history
