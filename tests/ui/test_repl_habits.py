"""What people expect from the other tools, in the REPL on pipe input (issue 23,
items 8 and 11): call ids that stay apart across /model, accept-edits, @agent
routing, /agent capabilities NAME, /context that adds up."""

from __future__ import annotations

import re

import yaml
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from support.repl_driver import ENTER, SHIFT_TAB, drive

from dm_cc.compose import Options
from dm_cc.session import Message, ToolCall
from dm_cc.ui.prompt import Mentions
from dm_cc.ui.transcript import replay

READY = "/help lists commands"   # the welcome line, once the session is loaded
LEGEND = "y once"
WRITE = {"tool": "write", "args": {"path": "a.txt", "content": "hello\n"}}


def task(description: str, prompt: str, agent: str = "explore") -> dict:
    return {"tool": "task", "args": {"description": description, "prompt": prompt,
                                     "subagent_type": agent}}


# ---------------------------------------------------------------------- call ids (item 8)

def test_after_model_a_model_numbering_its_calls_from_1_again_hides_no_output(project):
    """The first model's task call was call_1, and so is the new model's first call:
    its output used to be taken for the subagent's (whose result is not shown)."""
    (project / "auth.py").write_text("def login(): pass\n")
    (project / "notes.txt").write_text("NOTE-LINE\n")
    other = project / ".other.yaml"
    other.write_text(yaml.safe_dump([{"tool": "bash", "args": {"command": "cat notes.txt"}},
                                     {"text": "second done"}]))
    script = {"replies": [task("find auth", "look for the auth code"), {"text": "first done"}],
              "tasks": {"auth code": [{"tool": "grep", "args": {"pattern": "def login"}},
                                      {"text": "AUTH"}]}}
    run = drive(project, script, [(READY, "look" + ENTER),
                                  ("first done", f"/model scripted:{other}" + ENTER),
                                  ("model: scripted", "again" + ENTER), ("second done", "")])
    assert not run.errors
    assert "│ auth.py:1:def login(): pass" in run.screen
    assert "│ NOTE-LINE" in run.after("again")
    calls = [c for m in run.repl.loop.session.messages for c in m.tool_calls]
    assert [c.wire_id for c in calls] == ["call_1", "call_1"]
    assert len({c.id for c in calls}) == 2


def test_replay_pairs_each_call_with_its_own_result_when_a_saved_session_repeats_ids():
    """A session saved before dm_cc had ids of its own may hold call_1 twice."""
    messages = [Message("user", "one"),
                Message("assistant", tool_calls=(ToolCall("call_1", "read", {"path": "a"}),)),
                Message("tool", "FIRST", tool_call_id="call_1", tool_name="read"),
                Message("user", "two"),
                Message("assistant", tool_calls=(ToolCall("call_1", "read", {"path": "b"}),)),
                Message("tool", "SECOND", tool_call_id="call_1", tool_name="read")]
    lines = replay(messages, last=None)
    assert [line for line in lines if "read" in line] == ["  • read a → FIRST",
                                                          "  • read b → SECOND"]


# ---------------------------------------------------------------------- item 11

def test_slash_commands_that_show_an_agent_and_what_the_context_holds(project):
    (project / "AGENTS.md").write_text("Be brief.\n")
    run = drive(project, [{"text": "hello back"}], [
        (READY, "hi" + ENTER), ("hello back", "/context" + ENTER),
        ("total", "/agent capabilities explore" + ENTER),
        ("as build would start it", "/agent capabilities plan" + ENTER),
        ("if it were in charge", "/agent capabilities nope" + ENTER),
        ("unknown agent 'nope'", "@plan make a plan" + ENTER),
        ("is not a subagent", "@explore" + ENTER), ("needs a task", "")])
    assert not run.errors
    # /context: each part, and a total that is their sum -- the tools' schemas too
    shown = run.after("/context").split("/agent capabilities explore")[0]
    groups = dict(re.findall(r"^  (system prompt|tools|messages|total) +~ *(\d+) tokens",
                             shown, re.M))
    assert set(groups) == {"system prompt", "tools", "messages", "total"}
    assert int(groups["total"]) == sum(int(v) for k, v in groups.items() if k != "total")
    rows = re.findall(r"^    (\S.*?) +~ *(\d+) tokens", shown, re.M)
    assert [name for name, _ in rows] == ["dm_cc", "agent build", "AGENTS.md", "environment",
                                          "built-in (12)"]
    assert sum(int(t) for _, t in rows) + int(groups["messages"]) == int(groups["total"])
    assert int(groups["tools"]) > int(groups["system prompt"])    # what used to be missing
    assert abs(int(groups["total"]) - run.repl.loop.replies.tokens()) < 10
    # /agent capabilities NAME: that agent, not the one in charge
    explore = run.after("/agent capabilities explore").split("/agent capabilities plan")[0]
    assert "agent explore (subagent, as build would start it)" in explore
    assert re.search(r"deny +edit +not offered", explore)
    assert re.search(r"allow +read ", explore) and "defined at builtin:explore" in explore
    plan = run.after("/agent capabilities plan").split("/agent capabilities nope")[0]
    assert "agent plan (primary, if it were in charge)" in plan
    assert re.search(r"deny +bash +by default: deny bash '\*' \(builtin:plan\)", plan)
    assert "unknown agent 'nope' (known: build, auto, plan" in run.screen
    # a mention that is no subagent's task is said so, and nothing reaches the model
    assert "@plan is not a subagent: /agent switch plan" in run.screen
    assert "@explore needs a task: @explore find the login code" in run.screen
    assert [m.content for m in run.repl.loop.session.messages if m.role == "user"] == ["hi"]
    # @ completes to the subagents' names
    completer = Mentions(lambda: run.repl.loaded)
    names = [c.text for c in completer.get_completions(Document("@"), CompleteEvent())]
    assert names == ["@explore ", "@general ", "@reviewer "]
    assert [c.text for c in completer.get_completions(Document("@re"), CompleteEvent())] \
        == ["@reviewer "]
    assert not list(completer.get_completions(Document("@explore find"), CompleteEvent()))
    assert not list(completer.get_completions(Document("see @ex"), CompleteEvent()))


def test_accept_edits_by_shift_tab_max_turns_and_temperature(project):
    other = {"tool": "write", "args": {"path": "b.txt", "content": "bee\n"}}
    run = drive(project, [WRITE, other, {"text": "never"}], [
        (READY, SHIFT_TAB), ("accept edits", "write it" + ENTER),
        ("Stopped after 1 model calls", "/clear" + ENTER),     # a new session keeps it
        ("new session", "write another" + ENTER),
        ("Stopped after 1 model calls", "/build" + ENTER), ("→ agent: build", "")],
        options=Options(max_turns=1, temperature=0.4))
    assert not run.errors
    assert (project / "a.txt").read_text() == "hello\n" and LEGEND not in run.screen
    assert (project / "b.txt").read_text() == "bee\n"
    assert run.screen.count("allowed by allow edit \"**\" at builtin:accept-edits") == 2
    assert run.repl.loop.rt.model.temperatures == [0.4, 0.4]
    assert not run.repl.loop.rights.accept_edits     # /build: plain build again
    assert "already the build agent" not in run.screen
