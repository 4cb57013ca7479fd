"""The turn loop with the scripted model, real tools and a real session store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.trust import trust_project

from dm_cc.compose import Options, open_world
from dm_cc.core.approval import Approval, HeadlessApprover, ScriptedApprover
from dm_cc.core.events import AgentSwitched, ToolDecided
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, calls, reply
from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import SessionStore


def make_loop(project: Path, model, approver=None, *, policy: str | None = None,
              agent: str | None = None, events: list | None = None, tools=None) -> Loop:
    """The loop a user gets (open_loop: the sandbox, the audit log, the stores), with
    the scripted model and approver passed in."""
    if policy is not None:
        (project / ".dm_cc").mkdir(exist_ok=True)
        (project / ".dm_cc" / "policy.yaml").write_text(policy)
        trust_project(project)
    world = open_world(Options(agent=agent), cwd=project)
    return world.open_loop(approver or HeadlessApprover("deny"), model=model, tools=tools,
                           on_event=events.append if events is not None else lambda e: None)


def run(loop: Loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def tool_messages(loop: Loop) -> list[Message]:
    return [m for m in loop.session.messages if m.role == "tool"]


ALLOW_SRC = "rules:\n  - {permission: edit, pattern: 'src/**', action: allow}\n"


def test_build_writes_when_policy_allows(project):
    model = ScriptedModel([call("write", path="src/app.py", content="print('hi')\n"), reply("done")])
    loop = make_loop(project, model, policy=ALLOW_SRC)
    result = run(loop, "write the app")
    assert result.reason == "done" and result.text == "done"
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    assert not tool_messages(loop)[0].is_error


def test_plan_cannot_write_and_the_model_is_told_why(project):
    model = ScriptedModel([call("write", path="src/app.py", content="x"), reply("ok")])
    loop = make_loop(project, model, policy=ALLOW_SRC, agent="plan")
    run(loop, "write it anyway")
    assert not (project / "src" / "app.py").exists()
    result = tool_messages(loop)[0]
    assert result.is_error
    assert "denied" in result.content and "builtin:plan" in result.content
    # the model's next call saw the error
    _system, seen, _tools = model.calls[1]
    assert any(m.role == "tool" and "builtin:plan" in m.content for m in seen)


def test_plan_may_write_its_own_plan_file_only(project):
    loop = make_loop(project, ScriptedModel([]), agent="plan")
    own = f".dm_cc/plans/{loop.session.info.id}.md"
    model = ScriptedModel([
        calls(("write", {"path": own, "content": "# plan\n"}),
              ("write", {"path": ".dm_cc/plans/other.md", "content": "x"})),
        reply("planned"),
    ])
    loop.rt.model = model
    run(loop, "plan it")
    own_result, other_result = tool_messages(loop)
    assert not own_result.is_error and (project / own).read_text() == "# plan\n"
    assert other_result.is_error and not (project / ".dm_cc/plans/other.md").exists()


def test_headless_ask_is_denied_without_hanging(project):
    model = ScriptedModel([call("write", path="notes.txt", content="x"), reply("gave up")])
    loop = make_loop(project, model)  # edits ask by default
    result = run(loop, "write notes")
    assert result.text == "gave up"
    assert not (project / "notes.txt").exists()
    assert "headless" in tool_messages(loop)[0].content


def test_plan_enter_switches_agent_in_the_same_session_and_writes_are_refused(project):
    events: list = []
    model = ScriptedModel([
        call("plan_enter"),
        call("write", path="src/app.py", content="x"),
        reply("planning"),
    ])
    loop = make_loop(project, model, policy=ALLOW_SRC, events=events)
    run(loop, "big change")
    messages = loop.session.messages
    switch = [m for m in messages if m.role == "user" and m.synthetic]
    assert len(switch) == 1 and switch[0].agent == "plan"
    assert messages[0].agent == "build" and not messages[0].synthetic
    assert loop.agent.name == "plan"
    assert tool_messages(loop)[1].is_error and not (project / "src/app.py").exists()
    assert AgentSwitched("plan") in events
    # the same session on disk holds the whole history
    stored = SessionStore(loop.session.path.parent).load(loop.session.info.id)
    assert [m.id for m in stored.messages] == [m.id for m in messages]
    # the plan agent was offered no plan_enter, the build agent no plan_exit filter needed
    assert "plan_enter" not in model.calls[1][2]


def test_plan_exit_asks_with_the_plan_shown_then_returns_to_build(project):
    approver = ScriptedApprover(["once"])
    loop = make_loop(project, ScriptedModel([]), approver, agent="plan")
    plan = f".dm_cc/plans/{loop.session.info.id}.md"
    loop.rt.model = ScriptedModel([
        call("write", path=plan, content="1. add src/app.py\n"),
        call("plan_exit"),
        reply("switching"),
    ])
    run(loop, "plan")
    assert len(approver.asked) == 1 and approver.asked[0].tool == "plan_exit"
    assert "1. add src/app.py" in approver.asked[0].preview
    last_user = [m for m in loop.session.messages if m.role == "user"][-1]
    assert last_user.synthetic and last_user.agent == "build"
    assert "1. add src/app.py" in last_user.content


def test_reject_without_feedback_stops_the_turn(project):
    approver = ScriptedApprover(["reject"])
    model = ScriptedModel([call("write", path="a.txt", content="x"), reply("never")])
    loop = make_loop(project, model, approver)
    result = run(loop, "write")
    assert result.reason == "rejected"
    assert model.remaining == 1
    assert tool_messages(loop)[0].is_error


def test_reject_with_feedback_goes_to_the_model(project):
    approver = ScriptedApprover([Approval("reject", "use docs/ instead")])
    model = ScriptedModel([call("write", path="a.txt", content="x"), reply("ok")])
    loop = make_loop(project, model, approver)
    run(loop, "write")
    assert "use docs/ instead" in tool_messages(loop)[0].content


def test_always_remembers_the_script_not_the_interpreter(project):
    (project / "mk.py").write_text("import os, sys\nos.mkdir(sys.argv[1])\n")
    (project / "evil.py").write_text("open('evil', 'w')\n")
    approver = ScriptedApprover(["always", "reject"])
    model = ScriptedModel([
        call("bash", command="python3 mk.py sub"),
        call("bash", command="python3 mk.py sub2"),
        call("bash", command="python3 evil.py"),
        reply("ok"),
    ])
    loop = make_loop(project, model, approver)
    run(loop, "init")
    assert [a.main_input for a in approver.asked] == ["python3 mk.py sub", "python3 evil.py"]
    assert (project / "sub").is_dir() and (project / "sub2").is_dir()
    assert not (project / "evil").exists()
    assert [r.pattern for r in loop.rt.approvals.rules("build")] == ["python3 mk.py *"]


def test_inline_code_offers_nothing_to_remember(project):
    approver = ScriptedApprover(["always", "once"])
    code = "python3 -c \"import os; os.mkdir('sub')\""
    model = ScriptedModel([call("bash", command=code), call("bash", command=code), reply("ok")])
    loop = make_loop(project, model, approver)
    run(loop, "init")
    assert len(approver.asked) == 2 and approver.asked[0].suggestions == ()
    assert loop.rt.approvals.rules("build") == ()


def test_approval_never_overrides_a_configured_deny(project):
    policy = "rules:\n  - {permission: bash, pattern: 'git push *', action: deny}\n"
    model = ScriptedModel([call("bash", command="git push origin main"), reply("ok")])
    loop = make_loop(project, model, ScriptedApprover([]), policy=policy)
    from dm_cc.permissions import Rule
    loop.rt.approvals.session["build"] = [Rule("bash", "git *", "allow",
                                               source="approval:session")]
    run(loop, "push")
    assert "denied" in tool_messages(loop)[0].content


def test_allowed_calls_of_one_reply_run_concurrently(project):
    from pydantic import BaseModel
    from support.requests import Request

    from dm_cc.tools.base import ToolOutput
    from dm_cc.tools.catalog import ToolEntry

    started: list[str] = []
    both = asyncio.Event()

    class MeetParams(BaseModel):
        name: str

    class Meet:
        name = "meet"
        description = "waits until both calls are in flight"
        Params = MeetParams
        entry = ToolEntry("meet", "todo", "name", None)
        input_schema = MeetParams.model_json_schema()

        def requests(self, params, ctx):
            return [Request("todo", "*")]

        def describe(self, ctx):
            return self.description

        def preview(self, params, ctx):
            return None

        async def run(self, params, ctx):
            started.append(params.name)
            if len(started) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), timeout=5)
            return ToolOutput(f"met {params.name}")

    model = ScriptedModel([calls(("meet", {"name": "a"}), ("meet", {"name": "b"})), reply("ok")])
    loop = make_loop(project, model, tools=[Meet()])
    run(loop, "meet")
    assert [m.content for m in tool_messages(loop)] == ["met a", "met b"]


def test_doom_loop_asks_on_the_third_identical_call(project):
    model = ScriptedModel([call("read", path="x.txt")] * 3 + [reply("stop")])
    (project / "x.txt").write_text("x\n")
    events: list = []
    loop = make_loop(project, model, events=events)
    run(loop, "read")
    decisions = [e.decision.action for e in events if isinstance(e, ToolDecided)]
    assert decisions == ["allow", "allow", "ask"]
    assert "headless" in tool_messages(loop)[2].content


def test_always_on_a_repetition_lasts_the_session_and_is_never_saved(project):
    """Today's `a` on the repeated-call guard would turn it off for every read, for
    good: the question offers no "always", and an approver answering it anyway is
    kept to this session (the person is told)."""
    model = ScriptedModel([call("read", path="x.txt")] * 4 + [reply("stop")])
    (project / "x.txt").write_text("x\n")
    events: list = []
    approver = ScriptedApprover(["always"])
    loop = make_loop(project, model, approver, events=events)
    run(loop, "read")
    (asked,) = approver.asked         # the fourth read: allowed by the session's answer
    assert [(r.permission, r.pattern) for r in asked.suggestions] == [("doom_loop", "read")]
    assert not asked.may_save
    assert [(r.permission, r.pattern) for r in loop.rt.approvals.rules("build")] \
        == [("doom_loop", "read")]
    assert open_world(cwd=project).approvals.rules_for("build") == ()
    assert any("doom_loop approvals last for this session only" in str(e) for e in events)


def test_malformed_tool_json_becomes_an_error_the_model_can_fix(project):
    from dm_cc.llm.base import ModelReply

    bad = ModelReply(tool_calls=(ToolCall("c1", "read", None, '{"path": '),))
    (project / "x.txt").write_text("fixed\n")
    model = ScriptedModel([bad, call("read", path="x.txt"), reply("ok")])
    loop = make_loop(project, model)
    run(loop, "read")
    first, second = tool_messages(loop)
    assert first.is_error and "not a valid JSON" in first.content
    assert "fixed" in second.content


def test_unknown_tool_and_bad_arguments_are_errors(project):
    model = ScriptedModel([call("teleport", to="mars"), call("read", lines=3), reply("ok")])
    loop = make_loop(project, model)
    run(loop, "go")
    unknown, invalid = tool_messages(loop)
    assert "Unknown tool" in unknown.content and "Invalid arguments" in invalid.content


def test_max_turns_stops(project):
    model = ScriptedModel([call("todo", todos=[])] * 5)
    loop = make_loop(project, model)
    loop.max_turns = 2
    result = run(loop, "loop")
    assert result.reason == "max_turns" and model.remaining == 3


def test_cancellation_leaves_a_loadable_session(project):
    policy = "rules:\n  - {permission: bash, pattern: 'sleep *', action: allow}\n"
    model = ScriptedModel([call("bash", command="sleep 30"), reply("never")])
    loop = make_loop(project, model, policy=policy)

    async def cancel_soon():
        task = asyncio.create_task(loop.run("sleep"))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    stored = SessionStore(loop.session.path.parent).load(loop.session.info.id)
    assert [m.role for m in stored.messages] == ["user", "assistant", "tool"]
    assert "(cancelled by the user after " in stored.messages[-1].content


def test_tools_denied_outright_are_not_offered(project):
    policy = "permission:\n  webfetch: deny\n"
    model = ScriptedModel([reply("hi")])
    loop = make_loop(project, model, policy=policy)
    run(loop, "hello")
    offered = model.calls[0][2]
    assert "webfetch" not in offered and "read" in offered and "plan_exit" in offered


def test_grep_and_glob_leave_out_files_the_read_rules_do_not_allow(project):
    (project / "app.py").write_text("token = 1\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("token = 2\n")
    policy = "rules:\n  - {permission: read, pattern: 'secrets/**', action: deny}\n"
    model = ScriptedModel([call("grep", pattern="token"), call("glob", pattern="**/*"),
                           reply("ok")])
    loop = make_loop(project, model, policy=policy)
    run(loop, "find tokens")
    grep_result, glob_result = (m.content for m in tool_messages(loop))
    assert "app.py:1:token = 1" in grep_result
    assert "token = 2" not in grep_result and "left out" in grep_result
    assert "app.py" in glob_result and "key.txt" not in glob_result


def test_todos_survive_between_calls(project):
    model = ScriptedModel([
        call("todo", todos=[{"content": "write tests", "status": "in_progress"}]),
        call("todo", todos=[{"content": "write tests", "status": "completed"},
                            {"content": "ship", "status": "pending"}]),
        reply("ok"),
    ])
    loop = make_loop(project, model)
    run(loop, "plan work")
    assert [t["content"] for t in loop._todos] == ["write tests", "ship"]


def test_always_for_a_sensitive_command_remembers_the_exact_command(project):
    approver = ScriptedApprover(["always"])
    (project / "a.txt").write_text("a\n")
    command = "find . -name a.txt -exec cat {} ;"
    model = ScriptedModel([call("bash", command=command), call("bash", command=command),
                           reply("ok")])
    loop = make_loop(project, model, approver)
    run(loop, "find")
    assert len(approver.asked) == 1
    approved = loop.rt.approvals.rules("build")
    assert any(r.pattern == "find . -name a.txt -exec cat {}" for r in approved)
    assert all(r.pattern != "find *" for r in approved)


def test_always_never_turns_literal_wildcards_into_a_broader_rule():
    from support.requests import Request

    from dm_cc.core.approval import ApprovalRequest
    from dm_cc.permissions import Decision, Rule, Verdict

    def always(*requests):
        verdicts = tuple(Verdict(r, Rule("*", "*", "ask"), "ask", r.pattern) for r in requests)
        return ApprovalRequest("x", {}, Decision("ask", verdicts)).always_rules()

    assert always(Request("bash", "find . -name *.tmp -delete", sensitive=("-delete",),
                          always="find *")) == ()
    assert always(Request("read", ".env*")) == ()
    assert always(Request("webfetch", "https://x.example/a?b=1")) == ()
    assert [r.pattern for r in always(Request("bash", "git commit -m x", always="git commit *"))] \
        == ["git commit *"]
    assert [r.pattern for r in always(Request("read", "src/a.py"))] == ["src/a.py"]


def test_write_preview_never_reads_a_fifo(project):
    import os

    from dm_cc.tools.write import WriteTool

    os.mkfifo(project / "pipe")
    loop = make_loop(project, ScriptedModel([]))
    params = WriteTool.Params.model_validate({"path": "pipe", "content": "x"})
    assert "not a regular file" in WriteTool().preview(params, loop.context())


def test_a_session_whose_agent_was_removed_needs_an_explicit_agent(project, capsys):
    from dm_cc.cli import main

    agents = project / ".dm_cc" / "agents"
    agents.mkdir(parents=True)
    (agents / "rev.md").write_text("---\ndescription: reviewer\nmode: primary\n---\nReview.\n")
    os_chdir = pytest.MonkeyPatch()
    os_chdir.chdir(project)
    try:
        assert main(["run", "--model", "offline", "--agent", "rev", "list"]) == 0
        (agents / "rev.md").unlink()
        capsys.readouterr()
        assert main(["run", "--model", "offline", "--continue", "list"]) == 2
        assert "no longer exists" in capsys.readouterr().err
        assert main(["run", "--model", "offline", "--continue", "--agent", "build", "list"]) == 0
    finally:
        os_chdir.undo()


def test_grep_outside_the_project_shows_files_once_the_directory_is_approved(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("token = 3\n")
    mine = tmp_path / "dmhome" / "config" / "policy.yaml"    # the person's own: a
    mine.parent.mkdir(parents=True)                        # project's never opens outside
    mine.write_text("rules:\n  - {permission: read, pattern: '*', action: allow}\n")
    approver = ScriptedApprover(["once"])
    model = ScriptedModel([call("grep", pattern="token", path=str(outside)), reply("ok")])
    loop = make_loop(project, model, approver)
    run(loop, "grep outside")
    assert len(approver.asked) == 1
    assert "token = 3" in tool_messages(loop)[0].content
