"""`dm_cc run` end to end: the CLI, the loop, real tools, the JSONL store, and
litellm's real HTTP path against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from support.openai_server import serve, text, tool_call, tool_calls
from support.trust import trust_project

from dm_cc.cli import main
from dm_cc.session.store import SessionStore

pytestmark = pytest.mark.usefixtures("litellm_imported")



@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def write_policy(project, text_: str) -> None:
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(text_)
    trust_project(project)


def run_json(server, *args: str) -> tuple[int, list[dict]]:
    argv = ["run", "--json", "--model", "openai/test-model", "--api-base",
            server.base_url + "/v1", *args]
    return main(argv), []


def events_of(capsys) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def tool_results_sent(server) -> list[str]:
    """The tool messages litellm sent on the last request."""
    return [m["content"] for m in server.bodies[-1]["messages"] if m["role"] == "tool"]


def test_plan_cannot_write_and_the_model_is_told_why(project, capsys):
    script = [tool_call("write", {"path": "app.py", "content": "x = 1\n"}), text("I cannot.")]
    with serve(script) as server:
        code, _ = run_json(server, "--agent", "plan", "add app.py")
    events = events_of(capsys)
    assert code == 0
    assert not (project / "app.py").exists()
    decided = next(e for e in events if e["type"] == "tool_decided")
    assert decided["decision"] == "deny" and decided["requests"][0]["source"] == "builtin:plan"
    told = tool_results_sent(server)
    assert len(told) == 1 and "denied" in told[0] and "builtin:plan" in told[0]
    assert events[-1]["text"] == "I cannot."


def test_build_writes_when_policy_allows(project, capsys):
    write_policy(project, "rules:\n  - {permission: edit, pattern: '*.py', action: allow}\n")
    script = [tool_call("write", {"path": "app.py", "content": "x = 1\n"}), text("Written.")]
    with serve(script) as server:
        code, _ = run_json(server, "add app.py")
    assert code == 0
    assert (project / "app.py").read_text() == "x = 1\n"
    assert events_of(capsys)[-1]["text"] == "Written."
    tools_offered = {t["function"]["name"] for t in server.bodies[0]["tools"]}
    assert {"read", "write", "edit", "bash", "plan_enter", "plan_exit"} <= tools_offered


def test_headless_ask_is_denied_without_hanging(project, capsys):
    script = [tool_call("bash", {"command": "npm install left-pad"}), text("Skipped.")]
    with serve(script) as server:
        code, _ = run_json(server, "install it")
    assert code == 0
    told = tool_results_sent(server)
    assert "headless" in told[0]
    assert events_of(capsys)[-1]["text"] == "Skipped."


def test_headless_ask_can_fail_the_run_with_exit_3(project, capsys):
    script = [tool_call("bash", {"command": "npm install left-pad"}), text("unreachable")]
    with serve(script) as server:
        code, _ = run_json(server, "--on-ask", "fail", "install it")
    assert code == 3
    assert len(server.bodies) == 1


def test_plan_enter_leaves_a_synthetic_plan_message_and_writes_are_refused(project, capsys):
    write_policy(project, "rules:\n  - {permission: edit, pattern: '*.py', action: allow}\n")
    script = [tool_call("plan_enter", {}),
              tool_call("write", {"path": "app.py", "content": "x"}),
              text("Planning first.")]
    with serve(script) as server:
        code, _ = run_json(server, "refactor everything")
    events = events_of(capsys)
    assert code == 0 and not (project / "app.py").exists()
    session_id = events[-1]["session_id"]
    store = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    messages = store.load(session_id).messages
    users = [m for m in messages if m.role == "user"]
    assert [(m.agent, m.synthetic) for m in users] == [("build", False), ("plan", True)]
    assert store.list()[-1].agent == "plan"
    # the plan agent's request no longer offers plan_enter, and the write was denied
    offered = {t["function"]["name"] for t in server.bodies[1]["tools"]}
    assert "plan_enter" not in offered
    assert "builtin:plan" in tool_results_sent(server)[-1]
    # `dm_cc sessions show --json` shows the same
    assert main(["sessions", "show", "--json", session_id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [m["agent"] for m in shown["messages"] if m["role"] == "user"] == ["build", "plan"]


def test_offline_model_runs_echo_when_policy_allows(project, capsys):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: allow}\n")
    assert main(["run", "--model", "offline", "run echo hi"]) == 0
    assert capsys.readouterr().out.strip() == "hi"


def test_offline_model_reports_a_denied_command(project, capsys):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: deny}\n")
    assert main(["run", "--model", "offline", "run echo hi"]) == 0
    out = capsys.readouterr().out
    assert "denied" in out and ".dm_cc/policy.yaml:2" in out


def test_no_model_configured_says_how(project, capsys):
    assert main(["run", "hello"]) == 2
    err = capsys.readouterr().err
    assert "--model offline" in err and "DM_CC_MODEL" in err


def test_a_malformed_policy_refuses_to_run(project, capsys):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: alow}\n")
    assert main(["run", "--model", "offline", "run echo hi"]) == 2
    assert ".dm_cc/policy.yaml:2" in capsys.readouterr().err


def test_run_as_a_process_prints_hi(project):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: allow}\n")
    out = subprocess.run([sys.executable, "-m", "dm_cc", "run", "--model", "offline", "run echo hi"],
                         cwd=project, env=dict(os.environ), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hi"


def test_usage_totals_are_reported(project, capsys):
    script = [tool_call("read", {"path": "x.txt"}), text("Done.")]
    (project / "x.txt").write_text("x\n")
    with serve(script) as server:
        assert run_json(server, "read x")[0] == 0
    result = events_of(capsys)[-1]
    assert result["usage"]["prompt_tokens"] == 24 and result["usage"]["completion_tokens"] == 10


def test_continue_and_resume_keep_the_history(project, capsys):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: allow}\n")
    assert main(["run", "--model", "offline", "--json", "run echo one"]) == 0
    first = events_of(capsys)[-1]["session_id"]
    assert main(["run", "--model", "offline", "--json", "--continue", "run echo two"]) == 0
    assert events_of(capsys)[-1]["session_id"] == first
    assert main(["run", "--model", "offline", "--json", "run echo three"]) == 0
    other = events_of(capsys)[-1]["session_id"]
    assert other != first
    assert main(["run", "--model", "offline", "--json", "--resume", first, "run echo four"]) == 0
    assert events_of(capsys)[-1]["session_id"] == first
    store = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    prompts = [m.content for m in store.load(first).messages if m.role == "user"]
    assert prompts == ["run echo one", "run echo two", "run echo four"]


def test_resume_of_an_unknown_session_exits_2(project, capsys):
    assert main(["run", "--model", "offline", "--resume", "ses_nope", "hi"]) == 2
    assert "ses_nope" in capsys.readouterr().err


# ---------------------------------------------------------------- what a person sees

def run_text(server, *args: str) -> int:
    return main(["run", "--model", "openai/test-model", "--api-base", server.base_url + "/v1",
                 *args])


def store_of(project) -> SessionStore:
    return SessionStore(project.parent / "dmhome" / "data" / "sessions")


def test_each_call_is_one_stderr_line_with_its_decision_and_rule(project, capsys):
    write_policy(project, "rules:\n"
                          "  - {permission: bash, pattern: 'echo *', action: allow}\n"
                          "  - {permission: bash, pattern: 'rm *', action: deny, reason: no deletes}\n")
    script = [tool_calls(("bash", {"command": "echo hi"}), ("bash", {"command": "rm -rf build"}),
                         ("bash", {"command": "npm install left-pad"})),
              text("Done.")]
    with serve(script) as server:
        assert run_text(server, "tidy up") == 0
    out, err = capsys.readouterr()
    assert out == "Done.\n"
    lines = err.splitlines()
    assert lines[0] == "dm_cc: bash echo hi → allow"
    assert lines[1] == ('dm_cc: bash rm -rf build → deny '
                        '(deny bash "rm *" at .dm_cc/policy.yaml:3: no deletes)')
    assert lines[2].startswith("dm_cc: bash npm install left-pad → ask → refused by --on-ask deny (")
    assert "builtin:defaults" in lines[2]
    assert len(lines) == 3


def test_an_ask_under_on_ask_fail_is_shown_then_the_run_stops(project, capsys):
    script = [tool_call("bash", {"command": "npm install left-pad"}), text("unreachable")]
    with serve(script) as server:
        assert run_text(server, "--on-ask", "fail", "install it") == 3
    err = capsys.readouterr().err
    assert "dm_cc: bash npm install left-pad → ask → run stopped by --on-ask fail (" in err
    assert "this run cannot ask" in err


def test_a_multi_line_prompt_from_stdin_is_one_message(project, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("\nfix the tests\n\nthen commit\n"))
    with serve([text("Sure.")]) as server:
        assert run_text(server, "-") == 0
    users = [m for m in server.bodies[0]["messages"] if m["role"] == "user"]
    assert [m["content"] for m in users] == ["fix the tests\n\nthen commit"]
    assert capsys.readouterr().out == "Sure.\n"


def test_an_empty_prompt_is_a_usage_error(project):
    for argv, stdin in ((["-"], " \n\n"), ([""], "")):
        out = subprocess.run([sys.executable, "-m", "dm_cc", "run", "--model", "offline", *argv],
                             cwd=project, env=dict(os.environ), input=stdin,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "prompt" in out.stderr and out.stdout == ""
    assert not store_of(project).list()


def test_a_run_titles_its_session(project, capsys):
    with serve([text("Looking.")]) as server:
        assert run_text(server, "  why does   the build\nfail on CI?") == 0
    capsys.readouterr()
    assert main(["sessions", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["title"] == "why does the build"


def test_continue_replays_the_session_then_runs_in_it(project, capsys):
    write_policy(project, "rules:\n  - {permission: bash, pattern: 'echo *', action: allow}\n")
    script = [tool_call("bash", {"command": "echo one"}), text("Printed one."), text("Two.")]
    with serve(script) as server:
        assert run_text(server, "print one") == 0
        capsys.readouterr()
        assert run_text(server, "--continue", "and two?") == 0
    out, err = capsys.readouterr()
    [session] = store_of(project).list()
    assert out == "Two.\n"
    assert err.splitlines() == [f"dm_cc: continuing session {session.id} (print one)",
                                "  > print one", "    • bash echo one → one", "  Printed one."]
    prompts = [m.content for m in store_of(project).load(session.id).messages if m.role == "user"]
    assert prompts == ["print one", "and two?"]
    # the model saw the whole history
    assert [m["role"] for m in server.bodies[-1]["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "user"]


def test_continue_with_nothing_to_continue_says_so_and_starts_a_new_session(project, capsys):
    with serve([text("Hello.")]) as server:
        assert run_text(server, "--continue", "hi") == 0
    out, err = capsys.readouterr()
    [session] = store_of(project).list()
    assert out == "Hello.\n"
    assert err == (f"dm_cc: no earlier session in {project}; starting a new one ({session.id})\n")


def test_json_opens_with_the_session_record(project, capsys):
    with serve([text("One."), text("Two.")]) as server:
        assert run_text(server, "--json", "first") == 0
        first = events_of(capsys)
        assert run_text(server, "--json", "--continue", "second") == 0
        second, err = capsys.readouterr()
    records = [json.loads(line) for line in second.splitlines()]
    session_id = first[-1]["session_id"]
    assert first[0] == {"type": "session", "session_id": session_id, "title": "", "messages": 0}
    assert records[0] == {"type": "session", "session_id": session_id, "title": "first",
                          "messages": 2}
    assert [r["type"] for r in records] == ["session", "turn_ended", "result"]
    assert err == f"dm_cc: continuing session {session_id} (first)\n"  # no replay in JSON mode


def test_a_subagent_through_litellm_sees_only_its_prompt_and_its_ask_is_answered(
        project, capsys):
    task = {"description": "make notes", "prompt": "Write notes.txt saying hi",
            "subagent_type": "general"}
    script = [tool_call("task", task),                                  # the parent
              tool_call("write", {"path": "notes.txt", "content": "hi"}),  # the child
              text("I was not allowed to write."),                      # the child
              text("The subagent could not write.")]                    # the parent
    with serve(script) as server:
        code, _ = run_json(server, "--on-ask", "deny", "take notes")
    events = events_of(capsys)
    assert code == 0 and not (project / "notes.txt").exists()
    child_first = server.bodies[1]["messages"]
    assert [m["role"] for m in child_first] == ["system", "user"]
    assert child_first[1]["content"] == "Write notes.txt saying hi"
    offered = {t["function"]["name"] for t in server.bodies[1]["tools"]}
    assert "write" in offered and not {"task", "todo"} & offered
    asked = next(e for e in events if e["type"] == "tool_decided" and e.get("task_path"))
    assert asked["tool"] == "write" and asked["decision"] == "ask"
    assert asked["task_label"] == "general #1"
    assert "<task_result>\nI was not allowed to write.\n</task_result>" in \
        tool_results_sent(server)[0]
    assert events[-1]["text"] == "The subagent could not write."
    parent = events[-1]["session_id"]
    assert main(["sessions", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    child = next(s for s in listed if s["parent_id"] == parent)
    assert child["title"] == "make notes (@general)" and child["agent"] == "general"
