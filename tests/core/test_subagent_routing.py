"""Routing by task type: the build agent's prompt and each subagent's description
lead the model to delegate exploration to explore, review to the reviewer and
planning to the plan agent, and a subagent the person names is the one started.

The scripted model here "follows the description": it reads the task tool's
description as sent and picks the subagent whose description the guidance points
at, so a description that loses its cue, or a run that starts another agent than
the one picked, fails."""

from __future__ import annotations

import asyncio
import re

import pytest
from support.trust import trust_project

from dm_cc.agents import mentioned
from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.events import AgentSwitched, TaskStarted
from dm_cc.llm import ModelReply, ToolSpec
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.session import Message, ToolCall


def open_loop(project, model, agent: str = "build", events: list | None = None):
    (project / ".dm_cc").mkdir(exist_ok=True)
    trust_project(project)
    return open_world(Options(agent=agent), cwd=project).open_loop(
        HeadlessApprover("deny"), model=model,
        on_event=events.append if events is not None else lambda event: None)


def listed(tools: list[ToolSpec]) -> dict[str, str]:
    """The subagents the task tool's description offers, name -> description."""
    task = next(spec for spec in tools if spec.name == "task")
    return dict(re.findall(r"^- ([a-z0-9_-]+): (.*)$", task.description, re.M))


def follower(cue: str, prompt: str):
    """A model that delegates ``prompt`` to the one listed subagent whose description
    says it is for ``cue`` (and fails the test if none or several do)."""
    def play(system: str, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        chosen = [name for name, text in listed(tools).items() if cue in text]
        assert len(chosen) == 1, f"{cue!r} picks {chosen} among {listed(tools)}"
        return call("task", description=prompt[:30], prompt=prompt, subagent_type=chosen[0])
    return play


def run(loop, prompt: str, task=None):
    return asyncio.run(asyncio.wait_for(loop.run(prompt, task=task), timeout=30))


def test_the_prompt_and_the_task_tool_tell_the_model_where_each_kind_of_work_goes(project):
    loop = open_loop(project, ScriptedModel([]))
    _agent, system, specs = loop.replies.prompt()
    # the build agent's system prompt, as sent: exploration, review, planning, a named agent
    assert re.search(r"exploration.*to explore", system, re.S)
    assert re.search(r"review.*to the reviewer", system, re.S)
    assert re.search(r"only for a plan, call plan_enter", system)
    assert 'When the user names a subagent ("use the reviewer to' in system
    offered = listed(specs)
    assert set(offered) == {"explore", "general", "reviewer"}
    assert "where something is defined or used" in offered["explore"]
    assert "review a diff" in offered["reviewer"] and "Read-only" in offered["reviewer"]
    assert "edit files and run commands" in offered["general"]
    task = next(spec for spec in specs if spec.name == "task")
    assert "when the user names one" in task.description
    # the plan agent is pointed at the subagents it may start, and offered only those
    _agent, system, specs = open_loop(project, ScriptedModel([]), "plan").replies.prompt()
    assert "explore subagent" in system and "reviewer" in system
    assert set(listed(specs)) == {"explore", "reviewer"}


@pytest.mark.parametrize(("request_", "cue", "agent"), [
    ("where is the login handled?", "where something is defined", "explore"),
    ("review my last change", "review a diff", "reviewer"),
])
def test_a_routed_run_starts_the_agent_the_description_points_to(project, request_, cue, agent):
    (project / "auth.py").write_text("def login(): pass\n")
    model = ScriptedModel([follower(cue, f"{request_} (delegated)"), reply("done")],
                          tasks={"(delegated)": [reply("found it")]})
    events: list = []
    loop = open_loop(project, model, events=events)
    assert run(loop, request_).text == "done"
    assert [e.agent for e in events if isinstance(e, TaskStarted)] == [agent]
    child_system, child_messages, child_tools = model.calls[1]
    assert child_messages[0].content.endswith("(delegated)")
    assert f"You are the {agent} subagent" in child_system
    assert not {"write", "edit"} & set(child_tools)      # both are read-only by construction
    tool = next(m for m in loop.session.messages if m.role == "tool")
    assert "<task_result>\nfound it\n</task_result>" in tool.content


def test_planning_only_work_goes_to_the_plan_agent(project):
    model = ScriptedModel([call("plan_enter"), reply("planning")])
    events: list = []
    loop = open_loop(project, model, events=events)
    run(loop, "only plan how to add caching, change nothing")
    assert [e.agent for e in events if isinstance(e, AgentSwitched)] == ["plan"]
    assert loop.agent.name == "plan"


def named_by_the_person(system: str, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
    """A model that starts the subagent the person names ("use the NAME to …"), when
    the task tool offers it."""
    name = re.search(r"use the (\w+) to (.*)", messages[-1].content)
    assert name is not None and name.group(1) in listed(tools)
    return call("task", description="as asked", prompt=f"Task: {name.group(2)}",
                subagent_type=name.group(1))


def test_a_subagent_named_in_words_is_the_one_started(project):
    model = ScriptedModel([named_by_the_person, reply("reviewed")],
                          tasks={"Task: check auth.py": [reply("no findings")]})
    events: list = []
    loop = open_loop(project, model, events=events)
    assert run(loop, "use the reviewer to check auth.py for bugs").text == "reviewed"
    assert [e.agent for e in events if isinstance(e, TaskStarted)] == ["reviewer"]
    assert "You are the reviewer subagent" in model.calls[1][0]


def test_a_subagent_named_with_at_is_started_before_the_model_is_asked(project):
    model = ScriptedModel([reply("no findings"), reply("The reviewer found nothing.")])
    events: list = []
    loop = open_loop(project, model, events=events)
    prompt = "@reviewer check the staged change"
    named = mentioned(loop.rt.agents, prompt)
    assert named == ("reviewer", "check the staged change")
    assert run(loop, prompt, named).text == "The reviewer found nothing."
    assert [e.agent for e in events if isinstance(e, TaskStarted)] == ["reviewer"]
    first_system, first_messages, _tools = model.calls[0]   # the child, before the model
    assert "You are the reviewer subagent" in first_system
    assert [m.content for m in first_messages] == ["check the staged change"]
    (asked,) = [m for m in loop.session.messages if m.tool_calls]
    assert isinstance(asked.tool_calls[0], ToolCall) and asked.synthetic
