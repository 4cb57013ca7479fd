"""One session, end to end, over each model wire format litellm speaks for dm_cc.

The same scenario against a loopback server in each format (tests/support/*_server.py:
OpenAI Chat Completions, Anthropic Messages, Gemini generateContent),
through litellm's real provider code: the REPL sends a prompt; the model answers with
two parallel tool calls (a read that runs, a write the person approves with ``y``);
then starts a subagent (explore), whose own request is answered; then ends the turn.
A headless ``dm_cc run --resume`` then continues the session. What each request
carried is read back from the server in the format's own terms.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pytest
from support import anthropic_server, gemini_server, openai_server
from support.model_server import Answer, ModelServer, text, tool_call, tool_calls
from support.repl_driver import ENTER, drive

from dm_cc.cli import main
from dm_cc.compose import Options

pytestmark = pytest.mark.usefixtures("litellm_imported")

READY = "/help lists commands"
LEGEND = "y once"


@dataclass(frozen=True)
class WireFormat:
    """How dm_cc reaches a server of one format, and how to read what it was sent."""

    model: str
    serve: Callable[[list[Answer]], AbstractContextManager[ModelServer]]
    path: str                                   # appended to the server's URL for --api-base
    key: str | None                             # the API key variable the provider reads
    tool_results: Callable[[Any], list[str]]    # one request's tool results, in order
    texts: Callable[[Any], list[str]]           # one request's message texts
    thinking: int | None = None                 # --thinking BUDGET
    signed: Callable[[Any], list[dict[str, Any]]] = lambda body: []  # thinking sent back


def _openai_results(body: Any) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _openai_texts(body: Any) -> list[str]:
    return [m["content"] for m in body["messages"] if isinstance(m.get("content"), str)]


def _anthropic_blocks(body: Any) -> Iterator[dict[str, Any]]:
    for message in body["messages"]:
        content = message["content"]
        yield from ([{"type": "text", "text": content}] if isinstance(content, str) else content)


def _anthropic_results(body: Any) -> list[str]:
    def text_of(block: dict[str, Any]) -> str:
        content = block["content"]
        return content if isinstance(content, str) else "".join(
            part.get("text", "") for part in content)
    return [text_of(b) for b in _anthropic_blocks(body) if b["type"] == "tool_result"]


def _anthropic_texts(body: Any) -> list[str]:
    return [b["text"] for b in _anthropic_blocks(body) if b["type"] == "text"]


def _anthropic_thinking(body: Any) -> list[dict[str, Any]]:
    return [b for b in _anthropic_blocks(body) if b["type"] in ("thinking", "redacted_thinking")]


def _gemini_parts(body: Any, name: str) -> list[Any]:
    """One kind of part (``text``, ``function_response``) of a request's contents, in
    order; litellm writes the proto names in snake case."""
    return [part[name] for content in body["contents"] for part in content["parts"]
            if name in part]


def _gemini_results(body: Any) -> list[str]:
    responses = [r["response"] for r in _gemini_parts(body, "function_response")]
    return [r["content"] if isinstance(r.get("content"), str) else json.dumps(r)
            for r in responses]


def _gemini_texts(body: Any) -> list[str]:
    return _gemini_parts(body, "text")


WIRES = {
    "openai": WireFormat("openai/test-model", openai_server.serve, "/v1", None,
                         _openai_results, _openai_texts),
    "anthropic": WireFormat("anthropic/claude-sonnet-4-5", anthropic_server.serve, "",
                            "ANTHROPIC_API_KEY", _anthropic_results, _anthropic_texts,
                            thinking=2000, signed=_anthropic_thinking),
    "gemini": WireFormat("gemini/gemini-2.5-flash", gemini_server.serve, "", "GEMINI_API_KEY",
                         _gemini_results, _gemini_texts),
}



@pytest.fixture(params=sorted(WIRES))
def wire(request, project, monkeypatch) -> WireFormat:
    chosen = WIRES[request.param]
    if chosen.key:
        monkeypatch.setenv(chosen.key, "test-key-not-secret")
    return chosen


SCRIPT = [
    tool_calls(("read", {"path": "a.txt"}), ("write", {"path": "b.txt", "content": "beta\n"}),
               text="Reading a.txt and writing b.txt.", reasoning="Both at once is faster.",
               signature="sig-parallel", redacted="opaque-1"),
    tool_call("task", {"description": "look around", "prompt": "List the project's files.",
                       "subagent_type": "explore"}),
    text("The project holds a.txt and b.txt."),           # the explore subagent's answer
    text("All done: b.txt written."),
    text("Still here."),                                   # after the resume
]


def test_a_session_over_each_wire_format(wire, project, monkeypatch, capsys):
    (project / "a.txt").write_text("alpha\n")
    with wire.serve(SCRIPT) as server:
        api_base = server.base_url + wire.path
        options = Options(model=wire.model, api_base=api_base, thinking=wire.thinking)
        run = drive(project, None, [(READY, "do the thing" + ENTER), (LEGEND, "y"),
                                    ("All done", "")], options=options, timeout=30)
        assert not run.errors, run.screen
        session_id = run.repl.loop.session.info.id
        monkeypatch.chdir(project)
        thinking = ("--thinking", str(wire.thinking)) if wire.thinking else ()
        code = main(["run", "--model", wire.model, "--api-base", api_base, *thinking,
                     "--resume", session_id, "and now?"])
        bodies = server.bodies

    assert code == 0
    assert (project / "b.txt").read_text() == "beta\n"
    assert len(bodies) == 5, [json.dumps(b)[:200] for b in bodies]
    # Both parallel calls were answered, in the order the model gave them.
    read_result, write_result = wire.tool_results(bodies[1])
    assert "alpha" in read_result and "b.txt" in write_result
    # The subagent's request is its own conversation: its prompt, not the parent's.
    child = wire.texts(bodies[2])
    assert any("List the project's files." in t for t in child)
    assert not any("do the thing" in t for t in child)
    # The subagent's answer came back to the parent as the task's result.
    assert "The project holds a.txt and b.txt." in wire.tool_results(bodies[3])[-1]
    # The resumed run sent the whole earlier conversation, then the new prompt.
    resumed = wire.texts(bodies[4])
    assert any("do the thing" in t for t in resumed)
    assert any("All done: b.txt written." in t for t in resumed)
    assert "and now?" in resumed[-1]
    assert "Still here." in capsys.readouterr().out
    if wire.thinking:   # asked for on every request, the signed blocks sent back unchanged
        assert all(b["thinking"]["budget_tokens"] == wire.thinking for b in bodies)
        signed = [{"type": "thinking", "thinking": "Both at once is faster.",
                   "signature": "sig-parallel"}, {"type": "redacted_thinking", "data": "opaque-1"}]
        assert wire.signed(bodies[0]) == []
        assert wire.signed(bodies[1]) == signed
        assert wire.signed(bodies[4]) == signed    # after the resume too
