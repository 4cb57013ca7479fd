"""The two models that ship without an LLM: ScriptedModel (tests) and OfflineModel."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from dm_cc.llm.base import ModelError, ModelReply, ReasoningDelta, TextDelta, ToolSpec
from dm_cc.llm.factory import make_model
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.llm.offline import HELP, OfflineModel
from dm_cc.llm.scripted import ScriptedModel, call, calls, reply
from dm_cc.session.messages import Message, ToolCall

TOOLS = [ToolSpec("read", "Read.", {"type": "object"}),
         ToolSpec("bash", "Run.", {"type": "object"})]


def complete(model, messages, system="sys", tools=TOOLS):
    events: list = []
    result = asyncio.run(model.complete(system, messages, tools, on_stream=events.append))
    return result, events


# -- ScriptedModel ---------------------------------------------------------------------

def test_scripted_model_plays_its_script_and_records_what_it_saw():
    def answer(system, messages, tools):
        return reply(f"{len(messages)} messages, tools {[t.name for t in tools]}")

    model = ScriptedModel([call("read", path="a.py"),
                           calls(("bash", {"command": "ls"}), ("read", {"path": "b"})),
                           answer])
    first, _ = complete(model, [Message("user", "go")])
    second, _ = complete(model, [Message("user", "go"), Message("assistant", "x")], system="s2")
    third, events = complete(model, [Message("user", "again")], tools=[])

    assert first.tool_calls == (ToolCall("call_1", "read", {"path": "a.py"}, '{"path": "a.py"}'),)
    assert [(c.id, c.name, c.arguments) for c in second.tool_calls] == [
        ("call_2", "bash", {"command": "ls"}), ("call_3", "read", {"path": "b"})]
    assert third.text == "1 messages, tools []"
    assert "".join(e.text for e in events) == third.text and len(events) > 1
    assert [(system, [m.content for m in msgs], names) for system, msgs, names in model.calls] == [
        ("sys", ["go"], ["read", "bash"]),
        ("s2", ["go", "x"], ["read", "bash"]),
        ("sys", ["again"], []),
    ]
    assert model.remaining == 0


def test_scripted_model_raises_when_the_script_runs_out():
    model = ScriptedModel([reply("only one")])
    complete(model, [Message("user", "a")])
    with pytest.raises(ModelError, match="script exhausted"):
        complete(model, [Message("user", "b")])
    assert len(model.calls) == 2


def test_call_ids_are_unique_per_model_and_explicit_ids_are_kept():
    script = [call("read", path="a"), ModelReply(tool_calls=(ToolCall("mine", "read", {}),))]
    one, two = ScriptedModel(script), ScriptedModel(script)
    assert complete(one, [Message("user", "x")])[0].tool_calls[0].id == "call_1"
    assert complete(two, [Message("user", "x")])[0].tool_calls[0].id == "call_1"
    assert complete(one, [Message("user", "x")])[0].tool_calls[0].id == "mine"


def test_call_accepts_an_argument_called_name():
    assert call("task", name="explore").tool_calls[0].arguments == {"name": "explore"}


def test_scripted_model_streams_reasoning_then_text():
    model = ScriptedModel([ModelReply(text="the answer", reasoning="hmm")])
    result, events = complete(model, [Message("user", "q")])
    assert result.text == "the answer"
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "hmm"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "the answer"


def test_a_script_file_scripts_reasoning_and_refuses_reasoning_that_is_not_text(tmp_path):
    path = tmp_path / "script.yaml"
    path.write_text("- {reasoning: \"first this,\\nthen that\", tool: read, args: {path: a}}\n"
                    "- {text: done}\n")
    model = make_model(f"scripted:{path}", None)
    result, events = complete(model, [Message("user", "q")])
    assert result.reasoning == "first this,\nthen that" and result.tool_calls[0].name == "read"
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == result.reasoning
    assert complete(model, [Message("user", "q")])[0].reasoning is None
    path.write_text("- {reasoning: [not, text]}\n")
    with pytest.raises(ValueError, match="reply 1: reasoning is text"):
        make_model(f"scripted:{path}", None)


# -- OfflineModel --------------------------------------------------------------------

@pytest.mark.parametrize(("line", "name", "arguments"), [
    ("run ls -la | wc -l", "bash", {"command": "ls -la | wc -l",
                                    "description": "Run: ls -la | wc -l"}),
    ("read src/app.py", "read", {"path": "src/app.py"}),
    ("write notes.txt hello world", "write", {"path": "notes.txt", "content": "hello world"}),
    ('write "my notes.txt" two\nlines', "write", {"path": "my notes.txt", "content": "two\nlines"}),
    ("write empty.txt", "write", {"path": "empty.txt", "content": ""}),
    ("list", "list", {"path": "."}),
    ("list src/", "list", {"path": "src/"}),
    ("plan", "plan_enter", {}),
    ("build", "plan_exit", {}),
    ("  RUN git status  ", "bash", {"command": "git status", "description": "Run: git status"}),
])
def test_offline_model_turns_each_form_into_one_tool_call(line, name, arguments):
    result, events = complete(OfflineModel(), [Message("user", line)])
    (tool_call,) = result.tool_calls
    assert (tool_call.name, tool_call.arguments) == (name, arguments)
    assert tool_call.id.startswith("call_") and result.text == "" and events == []


@pytest.mark.parametrize("line", ["hello", "run", "read", "plan now", ""])
def test_offline_model_explains_its_forms_for_anything_else(line):
    result, events = complete(OfflineModel(), [Message("user", line)])
    assert result.tool_calls == () and result.text == HELP
    assert "".join(e.text for e in events) == HELP


def test_offline_model_reads_the_last_user_message():
    messages = [Message("user", "read a.py"), Message("assistant", "done"),
                Message("user", "list docs")]
    (tool_call,) = complete(OfflineModel(), messages)[0].tool_calls
    assert (tool_call.name, tool_call.arguments) == ("list", {"path": "docs"})


def test_offline_model_reports_a_tool_result_verbatim_and_ends_the_turn():
    asked = ToolCall("call_1", "bash", {"command": "ls"})
    history = [Message("user", "run ls"), Message("assistant", tool_calls=(asked,))]
    ok = [*history, Message("tool", "a.py\nb.py\n", tool_call_id="call_1", tool_name="bash")]
    denied = [*history, Message("tool", "denied by rule bash:rm * (deny)", tool_call_id="call_1",
                                tool_name="bash", is_error=True)]
    result, events = complete(OfflineModel(), ok)
    assert result.text == "a.py\nb.py\n" and result.tool_calls == ()
    assert "".join(e.text for e in events) == result.text
    assert complete(OfflineModel(), denied)[0].text == "error: denied by rule bash:rm * (deny)"


def test_offline_model_looks_past_synthetic_messages():
    history = [Message("user", "plan"),
               Message("assistant", tool_calls=(ToolCall("call_1", "plan_enter", {}),)),
               Message("tool", "now planning", tool_call_id="call_1", tool_name="plan_enter"),
               Message("user", "You are now in plan mode.", agent="plan", synthetic=True)]
    result, _ = complete(OfflineModel(), history)
    assert result.text == "now planning" and result.tool_calls == ()


def test_offline_model_is_named_offline_and_its_context_window_unknown():
    assert OfflineModel().name == "offline"
    assert OfflineModel().context_window is None
    assert ScriptedModel([]).context_window is None
    assert ScriptedModel([], context_window=8000).context_window == 8000


# -- factory -------------------------------------------------------------------------

def test_make_model_picks_offline_or_litellm():
    assert isinstance(make_model("offline", None), OfflineModel)
    model = make_model("openai/qwen", "http://127.0.0.1:8000/v1")
    assert isinstance(model, LiteLLMModel)
    assert (model.name, model.api_base) == ("openai/qwen", "http://127.0.0.1:8000/v1")


def test_making_a_litellm_model_does_not_import_litellm(tmp_path):
    code = ("import sys; import dm_cc.llm.factory as f; f.make_model('openai/x', None); "
            "print('litellm' in sys.modules, 'openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ),
                         check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]


def test_a_script_file_gives_subagents_their_own_replies(tmp_path):
    from dm_cc.session.messages import Message

    path = tmp_path / "script.yaml"
    path.write_text("replies:\n  - {text: main one}\n  - {text: main two}\n"
                    "tasks:\n  find auth:\n    - {text: child one, delay: 0}\n")
    model = make_model(f"scripted:{path}", None)

    def ask(first: str) -> str:
        reply = asyncio.run(model.complete("s", [Message("user", first)], []))
        return reply.text

    assert ask("please find auth code") == "child one"
    assert ask("hello") == "main one"
    assert ask("hello again") == "main two"
    with pytest.raises(ModelError, match="task 'find auth'"):
        ask("find auth again")
    path.write_text("replies: [{text: x}]\ntasks: {t: {text: not a list}}\n")
    with pytest.raises(ValueError, match="tasks: t: a script is a list"):
        make_model(f"scripted:{path}", None)
