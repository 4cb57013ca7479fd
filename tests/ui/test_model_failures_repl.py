"""A model call that fails, in the REPL (pipe-driven, in process): each retry is a
notice before its wait and the reply follows it; a refused key says where the key
came from; a prompt too long is compacted once and sent again. litellm's real HTTP
path against the loopback OpenAI server."""

from __future__ import annotations

import pytest
from support.openai_server import failure, serve, text
from support.repl_driver import ENTER, drive

from dm_cc.compose import Options

pytestmark = pytest.mark.usefixtures("litellm_imported")

READY = "/help lists commands"



def test_retries_are_said_a_refused_key_says_where_it_came_from(project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    script = [failure(529, "Overloaded"), text("Hello after the wait."),
              failure(401, "Incorrect API key provided"),
              text("first answer"),
              failure(400, "This model's maximum context length is 1000 tokens."),
              text("SUMMARY: hi, again, more"), text("answered after compacting")]
    with serve(script) as server:
        run = drive(project, None, [(READY, "hi" + ENTER),
                                  ("Hello after the wait.", "again" + ENTER),
                                  ("OPENAI_API_KEY", "more" + ENTER),
                                  ("first answer", "and more" + ENTER),
                                  ("answered after compacting", "")],
                    options=Options(model="openai/test-model",
                                    api_base=server.base_url + "/v1"))
    assert run.errors == []
    turn = run.after("hi")
    assert turn.index("! overloaded (529), retrying in 0.5 s (attempt 2 of 5)") \
        < turn.index("Hello after the wait.")
    assert "model error: model openai/test-model at " in run.screen
    assert ": 401 the API key was refused (Incorrect API key provided); the key comes from " \
           "OPENAI_API_KEY: check that it is right and may use this model" in run.screen
    assert run.screen.count("(attempt ") == 1           # the refused key: not retried
    compacted = run.after("and more")
    assert compacted.index("! the conversation is too long for openai/test-model's context "
                           "window (1000 tokens): compacting it and trying again") \
        < compacted.index("↻ compacted") < compacted.index("answered after compacting")
    assert len(server.bodies) == 7
