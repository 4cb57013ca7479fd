"""A message that names a subagent (``@explore find the login code``) starts it
through the task call, gated and recorded as the model's would be (issue 23, item 11);
and the sizes /context adds up."""

from __future__ import annotations

import asyncio

import pytest
from support.trust import trust_project

from dm_cc.agents import mentioned
from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.events import TaskStarted, ToolDecided
from dm_cc.core.prompts import tool_sizes
from dm_cc.errors import UsageError
from dm_cc.llm import ToolSpec
from dm_cc.llm.scripted import ScriptedModel, call, reply


@pytest.mark.parametrize("text, named", [
    ("@explore find the login code", ("explore", "find the login code")),
    ("  @reviewer  look at\nthe diff ", ("reviewer", "look at\nthe diff")),
    ("@agent-general do it", ("general", "do it")),      # as Claude Code writes it
    ("@src/app.py explain", None), ("@someone hi", None), ("mail me@explore x", None),
    ("please @explore find it", None), ("@explorer find it", None),
])
def test_which_messages_name_a_subagent(text, named):
    assert mentioned(BUILTIN_AGENTS, text) == named


@pytest.mark.parametrize("text, said", [
    ("@plan make a plan", "@plan is not a subagent: /agent switch plan"),
    ("@explore", "@explore needs a task"), ("@explore   ", "@explore needs a task"),
])
def test_a_mention_that_cannot_start_a_subagent_says_why(text, said):
    with pytest.raises(UsageError, match=said):
        mentioned(BUILTIN_AGENTS, text)


def run_loop(project, model, prompt, task, policy: str | None = None):
    if policy is not None:
        (project / ".dm_cc").mkdir()
        (project / ".dm_cc" / "policy.yaml").write_text(policy)
        trust_project(project)
    events: list = []
    loop = open_world(Options(), cwd=project).open_loop(HeadlessApprover(), model=model,
                                                        on_event=events.append)
    result = asyncio.run(asyncio.wait_for(loop.run(prompt, task=task), timeout=30))
    return loop, events, result


def test_the_named_subagent_runs_first_then_the_model_reads_its_result(project):
    (project / "auth.py").write_text("def login(): pass\n")
    model = ScriptedModel([call("grep", pattern="def login"), reply("auth.py:1"),
                           reply("It is in auth.py.")])
    loop, events, result = run_loop(project, model, "@explore find the login code",
                                    ("explore", "find the login code"))
    assert result.text == "It is in auth.py."
    user, asked, answered, final = loop.session.messages
    assert user.content == "@explore find the login code" and not user.synthetic
    (task,) = asked.tool_calls
    assert asked.synthetic and asked.role == "assistant" and asked.agent == "build"
    assert (task.name, task.arguments) == ("task", {
        "description": "find the login code", "prompt": "find the login code",
        "subagent_type": "explore"})
    assert answered.tool_call_id == task.id and "<task_result>\nauth.py:1" in answered.content
    decided = [e for e in events if isinstance(e, ToolDecided)]
    assert decided[0].call == task and decided[0].decision.action == "allow"
    assert [e.agent for e in events if isinstance(e, TaskStarted)] == ["explore"]
    # the subagent saw its task only; the model, the whole exchange
    assert [m.content for m in model.calls[0][1]] == ["find the login code"]
    assert [m.role for m in model.calls[2][1]] == ["user", "assistant", "tool"]


def test_a_rule_that_denies_the_task_denies_the_mention(project):
    model = ScriptedModel([reply("I may not start it.")])
    loop, _events, result = run_loop(
        project, model, "@explore look", ("explore", "look"),
        policy="rules:\n  - {permission: task, pattern: explore, action: deny, reason: not here}\n")
    assert result.text == "I may not start it."
    tool = next(m for m in loop.session.messages if m.role == "tool")
    assert tool.is_error and "denied" in tool.content
    assert not loop.subagents.usage.prompt_tokens and len(model.calls) == 1


def test_tool_sizes_group_dm_ccs_tools_and_the_mcp_servers():
    specs = [ToolSpec("read", "Read.", {"type": "object"}),
             ToolSpec("mcp__git__log", "Log.", {}), ToolSpec("bash", "Run.", {})]
    built_in, mcp = tool_sizes(specs)
    assert (built_in.name, built_in.group, mcp.name) == ("built-in (2)", "tools", "MCP (1)")
    assert built_in.chars == len("read" "Read." '{"type": "object"}') + len("bash" "Run." "{}")
    assert mcp.tokens == -(-len("mcp__git__logLog.{}") // 4)
