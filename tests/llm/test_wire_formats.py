"""dm_cc over the wire formats people use, through litellm's real provider code:
Gemini (``gemini/…``: generateContent, function calls with thought signatures) and
the OpenAI-compatible servers (``openai/…``: interleaved parallel tool-call deltas,
DeepSeek/vLLM-style ``reasoning_content``). The servers are loopback ones
(tests/support/gemini_server.py, openai_server.py); keys are dummies."""

from __future__ import annotations

import asyncio
import copy
import json
import urllib.request
from dataclasses import replace

import pytest
from support import anthropic_server, gemini_server, openai_server
from support.model_client import BASH, READ, FakeSleep
from support.model_server import failure, text, tool_calls
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.llm.base import ModelError, ModelReply, ReasoningDelta, TextDelta
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import SessionStore

pytestmark = pytest.mark.usefixtures("litellm_imported")

GEMINI_MODEL = "gemini/gemini-2.5-flash"
GEMINI_KEY = "dummy-gemini-key"
SIGNATURE = "CiQBjz1rX3Rob3VnaHQtc2lnbmF0dXJlLW9mLXRoZS1jYWxscw=="  # base64, as Google's



@pytest.fixture(autouse=True)
def dummy_keys(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")


def complete(model: LiteLLMModel, messages=None, tools=()) -> tuple[ModelReply, list]:
    events: list = []
    messages = messages or [Message("user", "hi")]
    reply = asyncio.run(model.complete("You are terse.", messages, tools,
                                       on_stream=events.append))
    return reply, events


def gemini(server, **kwargs) -> LiteLLMModel:
    return LiteLLMModel(GEMINI_MODEL, api_base=server.base_url, timeout=10, **kwargs)


def shown(events, kind) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


def parts(body, role: str) -> list[dict]:
    """Every part of the request's contents of one role, in order."""
    return [part for content in body["contents"] if content["role"] == role
            for part in content["parts"]]


def field(part: dict, name: str):
    """A part's field by its proto name: litellm writes ``function_call``, Google's
    reference ``functionCall``; the API takes both."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return part.get(name, part.get(snake))


# -- Gemini ------------------------------------------------------------------------

def test_gemini_streams_text_shows_thoughts_as_reasoning_and_counts_usage():
    script = [text("Hello from Gemini!", reasoning="The user greets me warmly", usage=(40, 6))]
    with gemini_server.serve(script) as server:
        reply, events = complete(gemini(server))
    assert len([e for e in events if isinstance(e, TextDelta)]) > 3
    assert shown(events, TextDelta) == reply.text == "Hello from Gemini!"
    assert shown(events, ReasoningDelta) == reply.reasoning == "The user greets me warmly"
    # candidates (6) + thoughts (5 words): Gemini counts thinking apart, billed as output
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (40, 11)
    assert reply.usage.cost > 0         # gemini-2.5-flash is in litellm's price map
    (request,) = server.completion_requests
    assert request.path == "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == GEMINI_KEY      # the key is not in the URL
    body = request.body
    assert field(body, "systemInstruction") == {"parts": [{"text": "You are terse."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


def write_policy(project, rules: str) -> None:
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text("rules:\n" + rules)
    trust_project(project)


def run_gemini(server, *args: str) -> int:
    return main(["run", "--json", "--model", GEMINI_MODEL, "--api-base", server.base_url,
                 *args])


def test_gemini_parallel_calls_run_and_their_signed_history_goes_back_after_a_resume(
        project, monkeypatch, capsys):
    """Gemini 3 refuses a history whose first function call of a step has lost its
    thoughtSignature; litellm carries it in the call's id, which dm_cc keeps
    (``wire_id``, saved with the session) and sends back as it came."""
    monkeypatch.chdir(project)
    write_policy(project, "  - {permission: bash, pattern: 'echo *', action: allow}\n")
    (project / "notes.txt").write_text("remember the milk\n")
    script = [tool_calls(("read", {"path": "notes.txt"}), ("bash", {"command": "echo hi"}),
                         reasoning="Read the notes and say hi", signature=SIGNATURE),
              text("Done."), text("Still here.")]
    with gemini_server.serve(script) as server:
        assert run_gemini(server, "read the notes and greet") == 0
        first = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert run_gemini(server, "--continue", "anything else?") == 0
    assert first[-1]["text"] == "Done."
    assert len(server.bodies) == 3
    for body in server.bodies[1:]:      # after the calls, and after the resume
        calls = [p for p in parts(body, "model") if field(p, "functionCall")]
        assert [field(p, "functionCall") for p in calls] == [
            {"name": "read", "args": {"path": "notes.txt"}},
            {"name": "bash", "args": {"command": "echo hi"}}]
        assert calls[0]["thoughtSignature"] == SIGNATURE     # Gemini signs the first only
        assert "thoughtSignature" not in calls[1]
        results = [field(p, "functionResponse") for p in parts(body, "user")
                   if field(p, "functionResponse")]
        assert [r["name"] for r in results] == ["read", "bash"]
        assert "remember the milk" in json.dumps(results[0]["response"])
        assert "hi" in json.dumps(results[1]["response"])
        # the thoughts were shown, not sent back (the signature stands for them)
        assert not any(p.get("thought") for p in parts(body, "model"))
        assert "Read the notes" not in json.dumps(body)
    saved = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    (session,) = saved.list()
    calls = [c for m in saved.load(session.id).messages for c in m.tool_calls]
    assert SIGNATURE in calls[0].wire_id and not calls[0].id.endswith(SIGNATURE)


def test_gemini_rate_limit_is_retried_and_its_error_body_is_reported():
    quota = "Quota exceeded for metric generate_content_free_tier_requests, limit: 10"
    script = [failure(429, quota), text("ok"), failure(429, quota)]
    with gemini_server.serve(script) as server:
        sleep = FakeSleep()
        reply, _ = complete(gemini(server, sleep=sleep))
        assert reply.text == "ok" and len(sleep.delays) == 1
        with pytest.raises(ModelError) as raised:
            complete(gemini(server, max_retries=0))
    message = str(raised.value)
    assert "429" in message and quota in message and GEMINI_MODEL in message
    assert len(server.bodies) == 3


def test_gemini_server_answers_whole_replies_and_google_error_bodies():
    """The renderer's other paths, as Google's reference has them (dm_cc streams)."""
    script = [tool_calls(("read", {"path": "a"}), ("read", {"path": "b"}),
                         reasoning="two files", signature=SIGNATURE),
              failure(429, "slow down", retry_after=8)]
    with gemini_server.serve(script) as server:
        def post(body: dict) -> tuple[int, dict]:
            request = urllib.request.Request(
                server.base_url + "/v1beta/models/gemini-2.5-flash:generateContent?key=k",
                data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    return response.status, json.load(response)
            except urllib.error.HTTPError as error:
                return error.code, json.load(error)

        whole = post({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        limited = post({"contents": []})
        with urllib.request.urlopen(server.base_url + "/v1beta/models", timeout=5) as response:
            listed = json.load(response)
    status, body = whole
    candidate = body["candidates"][0]
    assert status == 200 and candidate["finishReason"] == "STOP"
    assert candidate["content"]["parts"] == [
        {"text": "two files", "thought": True},
        {"functionCall": {"name": "read", "args": {"path": "a"}},
         "thoughtSignature": SIGNATURE},
        {"functionCall": {"name": "read", "args": {"path": "b"}}}]
    assert body["usageMetadata"] == {"promptTokenCount": 12, "candidatesTokenCount": 5,
                                     "thoughtsTokenCount": 2, "totalTokenCount": 19}
    assert limited == (429, {"error": {
        "code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                     "retryDelay": "8s"}]}})
    assert listed["models"][0]["name"] == "models/test-model"


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_gemini_signed_history_goes_to_another_provider_without_the_signature(wire):
    """After ``/model`` from Gemini to another provider the calls keep their ids;
    litellm drops the signature from them (Anthropic's ids allow no '=' or '/')."""
    signed = f"call_0f3a__thought__{SIGNATURE}"
    history = [Message("user", "read a"),
               Message("assistant", "", tool_calls=(
                   ToolCall("call_dm1", "read", {"path": "a"}, wire_id=signed),)),
               Message("tool", "A", tool_call_id="call_dm1", tool_name="read")]
    if wire == "openai":
        with openai_server.serve([text("ok")]) as server:
            complete(LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1",
                                  api_key="sk-test", timeout=10), history, [READ])
        sent = json.dumps(server.bodies[0]["messages"])
    else:
        with anthropic_server.serve([text("ok")]) as server:
            complete(LiteLLMModel("anthropic/claude-sonnet-4-5", api_base=server.base_url,
                                  timeout=10), history, [READ])
        sent = json.dumps(server.bodies[0]["messages"])
    assert SIGNATURE not in sent and "__thought__" not in sent
    assert sent.count("call_0f3a") == 2         # the call and its result still pair up


# -- OpenAI-compatible -------------------------------------------------------------

def test_openai_parallel_calls_streamed_interleaved_are_assembled_and_answered_in_pairs():
    script = [tool_calls(("read", {"path": "src/app.py"}),
                         ("bash", {"command": "pytest -q tests/unit"}), interleave=True),
              text("Both done.")]
    with openai_server.serve(script) as server:
        model = LiteLLMModel("openai/test-model", api_base=server.base_url + "/v1",
                             api_key="sk-test", timeout=10)
        reply, _ = complete(model, tools=[READ, BASH])
        calls = tuple(call.with_own_id() for call in reply.tool_calls)
        history = [Message("user", "hi"), Message("assistant", "", tool_calls=calls),
                   Message("tool", "BASH OUTPUT", tool_call_id=calls[1].id, tool_name="bash"),
                   Message("tool", "APP SOURCE", tool_call_id=calls[0].id, tool_name="read")]
        complete(model, history, [READ, BASH])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("read", {"path": "src/app.py"}), ("bash", {"command": "pytest -q tests/unit"})]
    assert [c.id for c in reply.tool_calls] == ["call_1_0", "call_1_1"]
    sent = server.bodies[1]["messages"]
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_1_0", "call_1_1"]
    answered = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert answered == {"call_1_0": "APP SOURCE", "call_1_1": "BASH OUTPUT"}


def test_interleaved_fragments_really_alternate_on_the_wire():
    """The renderer option the test above relies on: the calls' fragments in turn."""
    with openai_server.serve([tool_calls(("a", {"x": 1}), ("b", {"y": 2}),
                                         interleave=True)]) as server:
        request = urllib.request.Request(
            server.base_url + "/v1/chat/completions",
            data=json.dumps({"model": "m", "messages": [], "stream": True}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            lines = response.read().decode().split("\n\n")
    deltas = [json.loads(line[6:])["choices"][0]["delta"] for line in lines
              if line.startswith("data: {")]
    indexes = [d["tool_calls"][0]["index"] for d in deltas if "tool_calls" in d]
    assert indexes[:4] == [0, 1, 0, 1] and indexes[4:8] == [0, 1, 0, 1]


def test_reasoning_content_is_shown_as_reasoning_and_never_sent_back(project, monkeypatch,
                                                                     capsys):
    """vLLM (and DeepSeek) stream ``reasoning_content``: shown dimmed as reasoning, kept
    with the turn, and left out of every later request to any server but DeepSeek's."""
    monkeypatch.chdir(project)
    (project / "a.txt").write_text("alpha\n")
    script = [tool_calls(("read", {"path": "a.txt"}), reasoning="SECRET-PLAN: read a.txt"),
              text("It says alpha.", reasoning="SECOND-THOUGHT")]
    with openai_server.serve(script) as server:
        reply, events = complete(LiteLLMModel("openai/test-model",
                                              api_base=server.base_url + "/v1",
                                              api_key="sk-test", timeout=10), tools=[READ])
        assert shown(events, ReasoningDelta) == reply.reasoning == "SECRET-PLAN: read a.txt"
        assert shown(events, TextDelta) == ""
    with openai_server.serve(script) as server:
        assert main(["run", "--json", "--model", "openai/test-model", "--api-base",
                     server.base_url + "/v1", "what is in a.txt?"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["text"] == "It says alpha."
    second = server.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert "SECRET-PLAN" not in json.dumps(second)
    assert set(second[2]) <= {"role", "content", "tool_calls"}    # no reasoning_content
    saved = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    (session,) = saved.list()
    kept = [m.reasoning for m in saved.load(session.id).messages if m.role == "assistant"]
    assert kept == ["SECRET-PLAN: read a.txt", "SECOND-THOUGHT"]


def test_deepseek_gets_the_reasoning_of_a_tool_calling_turn_back_after_a_resume_too(
        project, monkeypatch, capsys):
    """DeepSeek's thinking mode (on by default on its V4 models) answers 400 when an
    assistant message of a turn that called tools comes back without its
    ``reasoning_content``, in every later request: those go back as they were shown
    (from the session file after a resume); a turn without tool calls keeps its own."""
    monkeypatch.chdir(project)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-dummy")
    (project / "a.txt").write_text("alpha\n")
    script = [text("Hello.", reasoning="GREETING"),
              tool_calls(("read", {"path": "a.txt"}), reasoning="PLAN: read a.txt"),
              text("It says alpha.", reasoning="ANSWER-THOUGHT"),
              text("Still alpha.", reasoning="LAST")]
    model = ["--model", "deepseek/deepseek-v4-pro"]
    with openai_server.serve(script) as server:
        base = ["run", *model, "--api-base", server.base_url + "/v1"]
        assert main([*base, "hi"]) == 0
        saved = SessionStore(project.parent / "dmhome" / "data" / "sessions")
        (session,) = saved.list()
        assert main([*base, "--resume", session.id, "what is in a.txt?"]) == 0
        assert main([*base, "--resume", session.id, "and now?"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Still alpha."
    assert all(r.path == "/v1/chat/completions" for r in server.completion_requests)

    def sent(body) -> list:
        return [(m.get("content"), m.get("reasoning_content"))
                for m in body["messages"] if m["role"] == "assistant"]

    assert sent(server.bodies[1]) == [("Hello.", None)]      # no tool called: not sent
    assert sent(server.bodies[2]) == [("Hello.", None), (None, "PLAN: read a.txt")]
    assert sent(server.bodies[3]) == [("Hello.", None), (None, "PLAN: read a.txt"),
                                      ("It says alpha.", "ANSWER-THOUGHT")]


@pytest.mark.parametrize(("model", "api_base", "echoed"), [
    ("deepseek/deepseek-chat", None, True),
    ("openai/deepseek-v4-flash", "https://api.deepseek.com/v1", True),
    ("openai/deepseek-v4-flash", "http://localhost:8000/v1", False),   # vLLM serving it
    ("openrouter/deepseek/deepseek-v4-pro", None, False),
    ("openai/test-model", "http://[not a url/v1", False),
])
def test_whose_reasoning_goes_back(model, api_base, echoed):
    assert LiteLLMModel(model, api_base=api_base).echoes_reasoning is echoed


def test_reasoning_under_its_newer_name_is_shown_as_reasoning_too():
    """OpenRouter, recent vLLM and Ollama stream it as ``reasoning``; litellm reads both."""
    answer = replace(text("Four.", reasoning="2 + 2 is 4"), reasoning_field="reasoning")
    with openai_server.serve([answer]) as server:
        reply, events = complete(LiteLLMModel("openai/test-model",
                                              api_base=server.base_url + "/v1",
                                              api_key="sk-test", timeout=10))
    assert shown(events, ReasoningDelta) == reply.reasoning == "2 + 2 is 4"
    assert shown(events, TextDelta) == reply.text == "Four."


@pytest.mark.parametrize("wire", ["gemini", "anthropic", "openai"])
def test_a_request_leaves_the_sessions_tool_schemas_as_they_were(wire, monkeypatch):
    """litellm's Gemini path rewrites a tool schema in place: the session's specs (one
    copy for every later request, to whichever model) must not change."""
    from dm_cc.core.prompts import tool_specs
    from dm_cc.tools.base import builtin_tools

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    serve, name, path = {"gemini": (gemini_server.serve, "gemini/gemini-2.5-flash", ""),
                         "anthropic": (anthropic_server.serve, "anthropic/claude-sonnet-4-5", ""),
                         "openai": (openai_server.serve, "openai/test-model", "/v1")}[wire]
    specs = tool_specs(builtin_tools())
    before = copy.deepcopy([spec.parameters for spec in specs])
    with serve([text("hi")]) as server:
        model = LiteLLMModel(name, api_base=server.base_url + path, timeout=10)
        asyncio.run(model.complete("system", [Message("user", "hi")], specs))
    assert [spec.parameters for spec in specs] == before
