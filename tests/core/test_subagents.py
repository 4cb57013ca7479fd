"""Subagents through the real loop: the task tool, child sessions, rights bounded by
the parent, asks that reach the same approver, parallel and background children."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from support.trust import trust_project

from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover, ScriptedApprover
from dm_cc.core.events import InTask, TaskFinished, TaskStarted, ToolDecided
from dm_cc.core.loop import Loop
from dm_cc.llm.base import ModelError
from dm_cc.llm.scripted import Delayed, ScriptedModel, call, calls, reply
from dm_cc.session.messages import Message


def task(prompt: str, agent: str = "explore", **extra) -> tuple[str, dict]:
    return ("task", {"description": prompt[:20], "prompt": prompt, "subagent_type": agent,
                     **extra})


def make_loop(project: Path, model, approver=None, *, agent: str = "build",
              events: list | None = None, policy: str | None = None, depth: int = 3,
              wait_background: bool = True) -> Loop:
    (project / ".dm_cc").mkdir(exist_ok=True)
    if policy is not None:
        (project / ".dm_cc" / "policy.yaml").write_text(policy)
    (project / ".dm_cc" / "config.yaml").write_text(f"max_task_depth: {depth}\n")
    trust_project(project)
    world = open_world(Options(agent=agent), cwd=project)
    return world.open_loop(approver or HeadlessApprover("deny"), model=model,
                           on_event=events.append if events is not None else lambda e: None,
                           wait_background=wait_background)


def run(loop: Loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def results(loop: Loop) -> list[Message]:
    return [m for m in loop.session.messages if m.role == "tool"]


def children(loop: Loop) -> list:
    return [info for info in open_world(cwd=loop.rt.where.root).sessions.list()
            if info.parent_id == loop.session.info.id]


class Meter:
    """The scripted model, counting how many of its calls are in flight at once."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner, self.name, self.context_window = inner, inner.name, None
        self.now = self.most = 0

    async def complete(self, *args, **kwargs):
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await self.inner.complete(*args, **kwargs)
        finally:
            self.now -= 1


def test_two_children_run_at_once_see_only_their_prompt_and_report_back(project):
    (project / "auth.py").write_text("def login(): pass\n")
    scripted = ScriptedModel(
        [calls(task("find the auth code"), task("list the tests", "general")), reply("both")],
        tasks={"find the auth code": [Delayed(call("grep", pattern="login"), 0.3),
                                      Delayed(reply("auth.py:1"), 0.3)],
               "list the tests": [Delayed(reply("no tests"), 0.3)]})
    model = Meter(scripted)
    loop = make_loop(project, model)
    loop.session.append(Message("user", "an earlier secret turn", agent="build"))
    result = run(loop, "look around")
    assert result.text == "both"
    assert model.most == 2                          # both children were at the model at once
    first_requests = [seen for _system, seen, _tools in scripted.calls
                      if seen and seen[0].content in ("find the auth code", "list the tests")
                      and len(seen) == 1]
    assert sorted(m[0].content for m in first_requests) == ["find the auth code",
                                                            "list the tests"]
    explore_out, general_out = (m.content for m in results(loop))
    assert "<task_result>\nauth.py:1\n</task_result>" in explore_out
    assert "<task_result>\nno tests\n</task_result>" in general_out
    kids = children(loop)
    assert sorted(k.title for k in kids) == ["find the auth code (@explore)",
                                             "list the tests (@general)"]
    assert {k.agent for k in kids} == {"explore", "general"}
    ids = {re.search(r"task_id: (\S+)", m.content).group(1) for m in results(loop)}
    assert ids == {k.id for k in kids}


def test_the_child_has_its_agents_prompt_and_tools(project):
    scripted = ScriptedModel([calls(task("look")), reply("ok")], tasks={"look": [reply("seen")]})
    run(make_loop(project, scripted), "go")
    system, _seen, tools = next(c for c in scripted.calls if c[1][0].content == "look")
    assert "explore subagent" in system
    assert "read" in tools and "grep" in tools
    assert not {"write", "edit", "todo", "task", "webfetch", "plan_enter"} & set(tools)


def test_the_task_description_lists_only_the_subagents_the_caller_may_start(project):
    def description(agent: str) -> str:
        _agent, _system, specs = make_loop(project, ScriptedModel([]), agent=agent).replies.prompt()
        return next(spec.description for spec in specs if spec.name == "task")

    build = description("build")
    assert all(f"- {name}:" in build for name in ("explore", "general", "reviewer"))
    plan = description("plan")
    assert "- explore:" in plan and "- reviewer:" in plan and "- general:" not in plan


def test_an_unknown_subagent_is_an_error_naming_the_valid_ones(project):
    model = ScriptedModel([calls(task("x", "wizard")), reply("ok")])
    loop = make_loop(project, model, agent="plan")
    run(loop, "go")
    out = results(loop)[0]
    assert out.is_error
    assert "no subagent 'wizard'" in out.content and "valid: explore, reviewer" in out.content


def test_a_subagent_the_caller_may_not_start_is_denied_by_its_rule(project):
    events: list = []
    loop = make_loop(project, ScriptedModel([calls(task("x", "general")), reply("ok")]),
                     agent="plan", events=events)
    run(loop, "go")
    decided = next(e for e in events if isinstance(e, ToolDecided))
    assert decided.decision.action == "deny"
    assert decided.decision.deciding[0].rule.source == "builtin:plan"
    assert not children(loop)


def test_a_plan_session_starts_no_agent_that_may_do_more_whatever_the_policy(project):
    policy = "rules:\n  - {permission: edit, pattern: '**', action: allow}\n" \
             "agents:\n  plan:\n    rules: [{permission: task, pattern: general, action: allow}]\n"
    events: list = []
    scripted = ScriptedModel([calls(task("write it", "general")), reply("ok")],
                             tasks={"write it": [call("write", path="x.txt", content="x"),
                                                 reply("wrote")]})
    loop = make_loop(project, scripted, agent="plan", policy=policy, events=events)
    run(loop, "go")
    assert not (project / "x.txt").exists()
    assert scripted.remaining == 2   # the child's two replies: no child ran
    [decided] = [e for e in events if isinstance(e, ToolDecided)]
    assert decided.decision.action == "deny"
    assert decided.decision.deciding[0].rule.source == "builtin:plan"


def test_a_general_child_of_a_restricted_session_cannot_write(project):
    policy = ("rules:\n  - {permission: edit, pattern: '**', action: allow}\n"
              "agents:\n  build:\n    rules:\n"
              "      - {permission: edit, pattern: '*', action: deny, reason: 'review only'}\n"
              "      - {permission: bash, pattern: '*', action: deny, reason: 'review only'}\n")
    events: list = []
    scripted = ScriptedModel([calls(task("write it", "general")), reply("ok")],
                             tasks={"write it": [call("write", path="x.txt", content="x"),
                                                 call("bash", command="touch y.txt"),
                                                 reply("could not")]})
    loop = make_loop(project, scripted, policy=policy, events=events)
    run(loop, "go")
    assert not (project / "x.txt").exists() and not (project / "y.txt").exists()
    inner = [e.event for e in events if isinstance(e, InTask) and isinstance(e.event, ToolDecided)]
    assert [e.decision.action for e in inner] == ["deny", "deny"]
    assert "build agent that started it" in (inner[0].decision.deciding[0].note or "")


def test_a_childs_ask_goes_to_the_same_approver_named_by_its_label(project):
    approver = ScriptedApprover(["once"])
    scripted = ScriptedModel([calls(task("make a file", "general")), reply("ok")],
                             tasks={"make a file": [call("write", path="n.txt", content="n"),
                                                    reply("made")]})
    loop = make_loop(project, scripted, approver)
    run(loop, "go")
    assert (project / "n.txt").read_text() == "n"
    assert [r.asker for r in approver.asked] == ["general #1"]
    assert approver.asked[0].agent == "general"


def test_a_childs_call_counts_while_it_runs_and_once_when_it_ends(project):
    events: list = []
    seen: list[int] = []

    class Looking(ScriptedApprover):     # looks at /tasks' count while the call waits for it
        async def approve(self, request):
            seen.extend(work.tools for work in loop.subagents.running.values())
            return await super().approve(request)

    scripted = ScriptedModel([calls(task("make a file", "general")), reply("ok")],
                             tasks={"make a file": [call("write", path="n.txt", content="n"),
                                                    reply("made")]})
    loop = make_loop(project, scripted, Looking(["once"]), events=events)
    run(loop, "go")
    assert seen == [1]                  # the running call counts: not "0 tools"
    finished = next(e for e in events if isinstance(e, TaskFinished))
    assert finished.tools == 1          # and once, when it has ended


def test_a_childs_ask_is_answered_headless_and_the_run_ends(project):
    scripted = ScriptedModel([calls(task("make a file", "general")), reply("parent done")],
                             tasks={"make a file": [call("write", path="n.txt", content="n"),
                                                    reply("I was not allowed")]})
    loop = make_loop(project, scripted, HeadlessApprover("deny"))
    result = run(loop, "go")
    assert result.text == "parent done" and not (project / "n.txt").exists()
    assert "I was not allowed" in results(loop)[0].content


def test_rejecting_a_childs_call_without_feedback_stops_the_parents_turn(project):
    scripted = ScriptedModel([calls(task("make a file", "general")), reply("never")],
                             tasks={"make a file": [call("write", path="n.txt", content="n"),
                                                    reply("never")]})
    loop = make_loop(project, scripted, ScriptedApprover(["reject"]))
    result = run(loop, "go")
    assert result.reason == "rejected"
    assert results(loop)[0].content == "Rejected by the user."
    assert scripted.remaining == 2    # neither the child nor the parent went on


def test_an_always_answer_in_a_child_is_saved_for_its_agent_and_the_ceiling_holds(project):
    script = {"make a file": [call("write", path="n.txt", content="n"), reply("made")],
              "again": [call("write", path="n.txt", content="m"), reply("again")]}
    approver = ScriptedApprover(["always"])
    loop = make_loop(project, ScriptedModel(
        [calls(task("make a file", "general")), calls(task("again", "general")), reply("ok")],
        tasks=script), approver)
    world = open_world(cwd=project)
    loop.rt.approvals.saved = world.approvals
    run(loop, "go")
    assert len(approver.asked) == 1 and (project / "n.txt").read_text() == "m"
    assert [(r.permission, r.pattern) for r in world.approvals.rules_for("general")] == [
        ("edit", "n.txt")]
    assert world.approvals.rules_for("build") == ()


def test_a_child_failure_becomes_a_tool_error_and_the_parent_goes_on(project):
    def broken(system, messages, tools):
        raise ModelError("provider down")

    scripted = ScriptedModel([calls(task("do it", "general")), reply("recovered")],
                             tasks={"do it": [broken]})
    loop = make_loop(project, scripted)
    assert run(loop, "go").text == "recovered"
    out = results(loop)[0]
    assert out.is_error and "provider down" in out.content


def test_task_id_resumes_the_child_with_its_history(project):
    scripted = ScriptedModel([calls(task("count files")), reply("first")],
                             tasks={"count files": [reply("three")]})
    loop = make_loop(project, scripted)
    run(loop, "go")
    task_id = children(loop)[0].id
    scripted2 = ScriptedModel([calls(task("and now the dirs", task_id=task_id)), reply("second")],
                              tasks={"count files": [reply("two dirs")]})
    loop.rt.model = scripted2
    run(loop, "again")
    seen = next(c[1] for c in scripted2.calls if c[1][0].content == "count files")
    assert [m.content for m in seen] == ["count files", "three", "and now the dirs"]
    assert len(children(loop)) == 1
    assert "two dirs" in results(loop)[1].content


def test_a_task_id_of_another_session_is_refused(project):
    other = make_loop(project, ScriptedModel([calls(task("a")), reply("x")],
                                             tasks={"a": [reply("b")]}))
    run(other, "go")
    stranger = children(other)[0].id
    loop = make_loop(project, ScriptedModel([calls(task("b", task_id=stranger)), reply("x")]))
    run(loop, "go")
    assert "not a task of this session" in results(loop)[0].content


def test_children_cannot_keep_todos_or_start_tasks_and_nesting_stops_at_the_limit(project):
    agents = project / ".dm_cc" / "agents"
    agents.mkdir(parents=True)
    (agents / "nester.md").write_text(
        "---\ndescription: starts more\nmode: subagent\n"
        "rules:\n  - {permission: task, pattern: '*', action: allow}\n---\nNest.\n")
    scripted = ScriptedModel(
        [calls(task("level one", "nester")), reply("top")],
        tasks={"level one": [calls(task("level two", "nester")), reply("one")],
               "level two": [calls(task("level three", "nester")), reply("two")],
               "level three": [reply("three")]})
    loop = make_loop(project, scripted, depth=2)
    run(loop, "go")
    level_two = next(c for c in scripted.calls if c[1][0].content == "level two")
    assert "task" in level_two[2]
    general = ScriptedModel([calls(task("general work", "general")), reply("x")],
                            tasks={"general work": [reply("y")]})
    run(make_loop(project, general), "go")
    offered = next(c[2] for c in general.calls if c[1][0].content == "general work")
    assert not {"todo", "task", "plan_enter", "plan_exit"} & set(offered)
    assert {"write", "bash", "webfetch"} <= set(offered)
    sessions = {i.title: i for i in open_world(cwd=project).sessions.list()}
    assert "level three (@nester)" not in sessions     # depth 3 > the limit of 2
    two = open_world(cwd=project).sessions.load(sessions["level two (@nester)"].id)
    assert any("nest at most 2 deep" in m.content for m in two.messages if m.role == "tool")


def test_cancelling_the_parent_cancels_its_children_and_leaves_sessions_loadable(project):
    events: list = []
    scripted = ScriptedModel([calls(task("slow"))], tasks={"slow": [Delayed(reply("late"), 30)]})
    loop = make_loop(project, scripted, events=events)

    async def go():
        job = asyncio.ensure_future(loop.run("go"))
        while not any(isinstance(e, TaskStarted) for e in events):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(asyncio.wait_for(go(), 10))
    finished = next(e for e in events if isinstance(e, TaskFinished))
    assert finished.status == "cancelled"
    assert results(loop)[0].content == "Cancelled: the turn was stopped."
    assert not loop.subagents.running


def test_a_background_child_returns_at_once_and_its_result_arrives_as_a_message(project):
    scripted = ScriptedModel(
        [calls(task("index it", background=True)), reply("started it")],
        tasks={"index it": [Delayed(reply("indexed 3 files"), 0.3)]})
    scripted_after = [reply("read the result")]
    loop = make_loop(project, scripted)   # a headless run waits for its background children
    scripted._script.items.extend(scripted_after)
    result = run(loop, "go")
    assert result.text == "read the result"
    assert "working in the background" in results(loop)[0].content
    delivered = [m for m in loop.session.messages if m.synthetic and m.role == "user"]
    assert len(delivered) == 1 and "indexed 3 files" in delivered[0].content
    assert "has finished" in delivered[0].content


def test_in_the_repl_a_background_result_waits_for_the_next_model_call(project):
    scripted = ScriptedModel(
        [calls(task("index it", background=True)), reply("started it"), reply("noted")],
        tasks={"index it": [Delayed(reply("indexed"), 0.1)]})
    loop = make_loop(project, scripted, wait_background=False)

    async def go():
        first = await loop.run("go")
        assert first.text == "started it"
        while loop.subagents.running:
            await asyncio.sleep(0.02)
        return await loop.run("and?")

    assert asyncio.run(asyncio.wait_for(go(), 10)).text == "noted"
    seen = scripted.calls[-1][1]
    assert any(m.synthetic and "indexed" in m.content for m in seen)


def test_events_of_a_child_arrive_wrapped_with_its_label(project):
    events: list = []
    (project / "a.txt").write_text("a\n")
    scripted = ScriptedModel([calls(task("read a")), reply("ok")],
                             tasks={"read a": [call("read", path="a.txt"), reply("a")]})
    run(make_loop(project, scripted, events=events), "go")
    kinds = [type(e).__name__ if not isinstance(e, InTask)
             else f"{e.label}:{type(e.event).__name__}" for e in events]
    assert kinds[:2] == ["ToolDecided", "TaskStarted"]
    started = next(e for e in events if isinstance(e, TaskStarted))
    assert started.call_id == events[0].call.id
    assert "explore #1:ToolDecided" in kinds and "explore #1:ToolFinished" in kinds
    finished = next(e for e in events if isinstance(e, TaskFinished))
    assert finished.tools == 1 and finished.status == "done"
    assert json.dumps(finished.text)


def test_a_childs_tokens_count_in_the_parents_usage(project):
    from dataclasses import replace as with_

    from dm_cc.llm.base import Usage

    scripted = ScriptedModel([with_(calls(task("count")), usage=Usage(5, 1)),
                              with_(reply("ok"), usage=Usage(7, 1))],
                             tasks={"count": [with_(reply("3"), usage=Usage(100, 10))]})
    loop = make_loop(project, scripted)
    run(loop, "go")
    assert (loop.usage.prompt_tokens, loop.usage.completion_tokens) == (112, 12)


def test_a_child_stays_bounded_by_the_agent_that_started_it_and_by_the_one_now(project):
    world = open_world(cwd=project)
    policy = "rules:\n  - {permission: edit, pattern: 'src/**', action: allow}\n"
    started_in_plan = make_loop(project, ScriptedModel([]), agent="plan", policy=policy)
    child_session = world.sessions.create(project, parent_id=started_in_plan.session.info.id,
                                          agent="general")
    child = started_in_plan.rights.child(child_session)
    edit = world.requests("edit", "src/a.py")
    assert child.gate().decide(edit).action == "deny"
    started_in_plan.switch_agent("build")          # plan_exit while the child works on
    assert started_in_plan.rights.gate().decide(edit).action == "allow"
    assert child.gate().decide(edit).action == "deny"
    note = child.gate().decide(edit).deciding[0].note or ""
    assert "plan agent that started it" in note

    started_in_build = make_loop(project, ScriptedModel([]), agent="build")
    session = world.sessions.create(project, parent_id=started_in_build.session.info.id,
                                    agent="general")
    other = started_in_build.rights.child(session)
    assert other.gate().decide(edit).action == "allow"
    started_in_build.switch_agent("plan")
    assert other.gate().decide(edit).action == "deny"
    assert "its parent's agent now (plan)" in (other.gate().decide(edit).deciding[0].note or "")


def test_cancelling_a_child_cancels_its_background_children(project):
    agents = project / ".dm_cc" / "agents"
    agents.mkdir(parents=True)
    (agents / "nester.md").write_text(
        "---\ndescription: starts more\nmode: subagent\n"
        "rules:\n  - {permission: task, pattern: '*', action: allow}\n---\nNest.\n")
    events: list = []
    scripted = ScriptedModel(
        [calls(task("the child", "nester"))],
        tasks={"the child": [calls(task("the grandchild", "explore", background=True)),
                             reply("waiting for it")],
               "the grandchild": [Delayed(reply("late"), 30)]})
    loop = make_loop(project, scripted, events=events)

    async def go():
        job = asyncio.ensure_future(loop.run("go"))
        while not any(isinstance(e, InTask) and isinstance(e.event, TaskStarted) for e in events):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        await asyncio.sleep(0.05)

    asyncio.run(asyncio.wait_for(go(), 10))
    grandchild = [e.event for e in events
                  if isinstance(e, InTask) and isinstance(e.event, TaskFinished)]
    assert [g.status for g in grandchild] == ["cancelled"]
