"""A thinking Claude in the REPL (pipe-driven, against the Anthropic Messages
loopback server through litellm's real code): its thinking streams under the
spinner, folds to one line per reply, and Ctrl-O shows the turn's thinking whole;
the tool turn's signed blocks went back with its result."""

from __future__ import annotations

import pytest
from support.anthropic_server import serve
from support.model_server import text, tool_calls
from support.repl_driver import drive

from dm_cc.compose import Options

pytestmark = pytest.mark.usefixtures("litellm_imported")

READY = "/help lists commands"
PAGER = "q Esc back"
CTRL_O = "\x0f"



def test_claudes_thinking_folds_and_ctrl_o_shows_it_whole(project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")
    (project / "a.txt").write_text("hello\n")
    script = [tool_calls(("read", {"path": "a.txt"}), reasoning="Read a.txt\nthen answer.",
                         signature="sig-1", redacted="opaque"),
              text("It says hello.", reasoning="It said hello.", signature="sig-2")]
    with serve(script) as server:
        run = drive(project, None, [(READY, "what is in a.txt?\r"), ("It says hello.", CTRL_O),
                                  (PAGER, "q")],
                    options=Options(model="anthropic/claude-sonnet-4-5",
                                    api_base=server.base_url, thinking=2000))
    assert run.errors == []
    turn = run.after("what is in a.txt?")
    assert turn.count("✻ thought for ") == 2 and " s · Ctrl-O shows it" in turn
    shown = run.after("the model's thinking (last turn)")
    assert "reply 1 of 2" in shown and "Read a.txt" in shown and "then answer." in shown
    assert "It said hello." in shown
    sent = [m for m in server.bodies[1]["messages"] if m["role"] == "assistant"][0]["content"]
    assert [b["type"] for b in sent] == ["thinking", "redacted_thinking", "tool_use"]
    assert sent[0]["signature"] == "sig-1"
