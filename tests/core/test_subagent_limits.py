"""What the settings and the task call say about a subagent: its turn limit (the
smallest of the task's ``max_turns``, its agent's and the settings', the model told
what it got) and its model (``agents.explore.model``, ``DM_CC_AGENTS_EXPLORE_MODEL``)."""

from __future__ import annotations

import asyncio
import re
import textwrap

import pytest
from support.trust import trust_project

from dm_cc.agents import DEFAULT_MAX_TURNS, Agent
from dm_cc.cli import main
from dm_cc.compose import Options, open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.subagents import Subagents
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.session import SessionStore


def open_loop(project, model, config: str = ""):
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "config.yaml").write_text(textwrap.dedent(config))
    trust_project(project)
    return open_world(Options(), cwd=project).open_loop(HeadlessApprover("deny"), model=model)


def run(loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def explore_task(**extra):
    return call("task", description="look around", prompt="look around the repo",
                subagent_type="explore", **extra)


def busy(count: int) -> list:
    """A child's script: ``count`` tool calls, then an answer."""
    return [*(call("list") for _ in range(count)), reply("all listed")]


def tool_result(loop) -> str:
    return next(m.content for m in loop.session.messages if m.role == "tool")


def test_a_task_asked_for_fewer_turns_stops_there_and_says_so(project):
    model = ScriptedModel([explore_task(max_turns=2), reply("ok")],
                          tasks={"look around the repo": busy(5)})
    loop = open_loop(project, model)
    run(loop, "go")
    result = tool_result(loop)
    assert "max_turns: 2, as asked." in result
    assert "reached its turn limit (2 model calls)" in result
    child_calls = [c for c in model.calls if c[1][0].content == "look around the repo"]
    assert len(child_calls) == 2


def test_a_bigger_request_is_lowered_to_the_agents_limit_and_the_model_told(project):
    model = ScriptedModel([explore_task(max_turns=500), reply("ok")],
                          tasks={"look around the repo": busy(5)})
    loop = open_loop(project, model, """
        agents:
          explore: {max_turns: 3}
    """)
    run(loop, "go")
    result = tool_result(loop)
    assert ("max_turns: 3, not the 500 asked for: 3 is the most the explore subagent may take "
            "here (the explore agent's own max_turns).") in result
    assert len([c for c in model.calls if c[1][0].content == "look around the repo"]) == 3


def test_a_task_that_asks_nothing_gets_the_settings_limit_silently(project):
    model = ScriptedModel([explore_task(), reply("ok")],
                          tasks={"look around the repo": busy(1)})
    loop = open_loop(project, model, "max_turns: 4\n")
    run(loop, "go")
    result = tool_result(loop)
    assert "max_turns" not in result and "<task_result>\nall listed" in result


def test_a_nonsense_max_turns_is_a_tool_error_not_a_crash(project):
    model = ScriptedModel([explore_task(max_turns=0), reply("ok")])
    loop = open_loop(project, model)
    run(loop, "go")
    tool = next(m for m in loop.session.messages if m.role == "tool")
    assert tool.is_error and "max_turns" in tool.content


@pytest.mark.parametrize(("agent_limit", "setting", "asked", "granted", "why"), [
    (None, None, None, DEFAULT_MAX_TURNS, ""),
    (None, None, 80, DEFAULT_MAX_TURNS, "the default"),
    (20, None, 30, 20, "the explore agent's own max_turns"),
    (20, 8, 30, 8, "the max_turns setting"),
    (5, 8, 30, 5, "the explore agent's own max_turns"),
    (20, 8, 6, 6, "as asked"),
    (60, None, None, 60, ""),          # an agent's own limit may be above the default
])
def test_the_smallest_limit_wins(project, agent_limit, setting, asked, granted, why):
    agent = Agent("explore", "subagent", "x", max_turns=agent_limit)
    subagents = Subagents(None, {}, lambda name: True, None, on_event=print,  # type: ignore[arg-type]
                          max_turns=setting)
    turns, told = subagents.turns(agent, asked)
    assert turns == granted
    assert (why in told) if why else told == ""


def write_script(path, *lines: str) -> str:
    path.write_text("\n".join(lines) + "\n")
    return f"scripted:{path}"


def test_a_built_in_subagent_runs_on_the_model_the_settings_name(project, monkeypatch, capsys):
    """``agents.explore.model`` in the user config, then DM_CC_AGENTS_EXPLORE_MODEL over
    it: the child plays its own model's script, the session its own."""
    monkeypatch.chdir(project)
    main_model = write_script(project.parent / "main.yaml",
                              "- {tool: task, args: {description: d, prompt: p, "
                              "subagent_type: explore}}",
                              "- {text: 'main done', echo: true}")
    cheap = write_script(project.parent / "cheap.yaml", "- {text: from the cheap model}")
    other = write_script(project.parent / "other.yaml", "- {text: from the env model}")
    config = project.parent / "dmhome" / "config"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text(f"agents:\n  explore:\n    model: '{cheap}'\n")
    assert main(["run", "--model", main_model, "go"]) == 0
    assert "from the cheap model" in capsys.readouterr().out
    monkeypatch.setenv("DM_CC_AGENTS_EXPLORE_MODEL", other)
    assert main(["run", "--model", main_model, "go"]) == 0
    assert "from the env model" in capsys.readouterr().out
    sessions = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    assert sum(1 for info in sessions.list() if info.agent == "explore") == 2


def test_agents_names_only_built_in_subagents(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    config = project.parent / "dmhome" / "config"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text("model: offline\nagents:\n  plan: {model: x}\n")
    assert main(["run", "hi"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"config\.yaml:3: agents: 'plan' is not one of dm_cc's built-in "
                     r"subagents \(explore, general, reviewer\)", err)
