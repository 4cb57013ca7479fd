"""What people expect from the other tools, in the REPL on pipe input (issue 23,
items 8 and 11): call ids that stay apart across /model, accept-edits, @agent
routing, /agent capabilities NAME, /context that adds up."""

from __future__ import annotations

import yaml
from support.repl_driver import ENTER, drive

from dm_cc.session import Message, ToolCall
from dm_cc.ui.transcript import replay

READY = "/help lists commands"   # the welcome line, once the session is loaded
LEGEND = "y once"


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
