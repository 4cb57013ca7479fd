"""``dm_cc run --thinking`` end to end against the Anthropic Messages loopback server:
the CLI, the loop, a real tool, the session store and litellm's real Anthropic code.
A thinking Claude's signed blocks go back with the turn's tool results, are stored
with the session, and go back as stored when it is resumed; ``run`` prints only
the answer."""

from __future__ import annotations

import json

import pytest
from support.anthropic_server import serve, tool_use_id
from support.model_server import text, tool_calls

from dm_cc.cli import main

pytestmark = pytest.mark.usefixtures("litellm_imported")

THOUGHT = {"type": "thinking", "thinking": "a.txt will say.", "signature": "c2lnLTE="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
AFTER = {"type": "thinking", "thinking": "It said hello.", "signature": "c2lnLTI="}



@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")
    (project / "a.txt").write_text("hello\n")
    return project


def run(server, *args: str) -> int:
    return main(["run", "--model", "anthropic/claude-sonnet-4-5", "--api-base", server.base_url,
                 "--thinking", "2000", *args])


def assistants(body: dict) -> list[list[dict]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def test_a_thinking_turn_sends_its_blocks_back_and_a_resume_sends_them_as_stored(
        project, capsys):
    script = [tool_calls(("read", {"path": "a.txt"}), reasoning=THOUGHT["thinking"],
                         signature=THOUGHT["signature"], redacted=REDACTED["data"]),
              text("It says hello.", reasoning=AFTER["thinking"], signature=AFTER["signature"])]
    with serve(script) as server:
        assert run(server, "--json", "what is in a.txt?") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    session = events[-1]["session_id"]
    assert events[-1]["text"] == "It says hello."
    first, second = server.bodies
    for body in server.bodies:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert assistants(first) == []
    (turn,) = assistants(second)
    assert turn[:2] == [THOUGHT, REDACTED] and turn[2]["type"] == "tool_use"
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == tool_use_id(1, 0)
    assert "hello" in json.dumps(result["content"])

    with serve([text("Still hello.")]) as server:
        assert run(server, "--resume", session, "and now?") == 0
    out, err = capsys.readouterr()
    assert out == "Still hello.\n"           # the answer only: no thinking in run's output
    assert "a.txt will say" not in out + err and "It said hello" not in out + err
    (body,) = server.bodies
    stored = assistants(body)
    assert stored[0][:2] == [THOUGHT, REDACTED] and stored[0][2]["type"] == "tool_use"
    assert stored[1] == [AFTER, {"type": "text", "text": "It says hello."}]


def test_a_model_without_thinking_says_so_once_and_runs(project, capsys):
    """``dm_cc run`` with --thinking on a model that has none: a line on stderr, not an
    error; the answer on stdout as ever."""
    from support.openai_server import serve as serve_openai
    from support.openai_server import tool_call

    with serve_openai([tool_call("read", {"path": "a.txt"}), text("hello")]) as server:
        code = main(["run", "--model", "openai/test-model", "--api-base",
                     server.base_url + "/v1", "--thinking", "--", "what is in a.txt?"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "hello\n"
    assert err.count("thinking is not supported by openai/test-model: --thinking has no "
                     "effect") == 1
    assert all("thinking" not in body for body in server.bodies)
