"""The REPL on prompt_toolkit's pipe input: every approval key, Ctrl-C and Ctrl-D at
the prompt and during a turn, slash commands, Shift+Tab, multi-line input. The real
loop, the real tools in tmp_path, a scripted model."""

from __future__ import annotations

import pytest
from support.repl_driver import (
    ALT_ENTER,
    CTRL_C,
    CTRL_D,
    ENTER,
    ESC,
    SHIFT_TAB,
    SIGINT,
    drive,
)

from dm_cc.compose import Options

LEGEND = "y once"
READY = "/help lists commands"   # the welcome line, once the session is loaded
WRITE = {"tool": "write", "args": {"path": "a.txt", "content": "hello\n"}}
PUSH_POLICY = ("rules:\n  - {permission: bash, pattern: 'git push *', action: ask,\n"
               "     reason: pushes are visible to the whole team}\n")


@pytest.fixture
def policy(project):
    def write(text: str) -> None:
        (project / ".dm_cc").mkdir(exist_ok=True)
        (project / ".dm_cc" / "policy.yaml").write_text(text)
    return write


def tool_results(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages if m.role == "tool"]


def user_messages(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages
            if m.role == "user" and not m.synthetic]


def test_y_allows_once_and_the_same_call_asks_again(project):
    run = drive(project, [WRITE, WRITE, {"text": "done"}],
                [(READY, "write it" + ENTER), (LEGEND, "y"), (LEGEND, "y")])
    assert not run.errors and run.code == 0
    assert (project / "a.txt").read_text() == "hello\n"
    assert run.screen.count("allowed once") == 2
    assert "done" in run.screen


def test_the_question_shows_the_whole_command_its_rule_and_reason(project, policy):
    policy(PUSH_POLICY)
    command = "git push origin main --force-with-lease"
    run = drive(project, [{"tool": "bash", "args": {"command": command,
                                                    "description": "Publish the fix"}},
                          {"text": "ok"}],
                [(READY, "push" + ENTER), (LEGEND, CTRL_D), ("denied", "/help" + ENTER),
                 ("Commands:", "")])
    assert not run.errors
    question = run.after("wants to use")
    assert "build wants to use bash" in run.screen
    assert f"$ {command}" in question and "Publish the fix" in question
    assert 'ask bash "git push *" at ' in question and ".dm_cc/policy.yaml:2" in question
    assert "reason: pushes are visible to the whole team" in question
    # Ctrl-D denied it, the turn stopped, and the REPL lived on to answer /help
    assert "  denied" in question and "Commands:" in question
    assert "Rejected by the user" not in run.screen   # model-facing text stays hidden


def test_s_allows_for_the_session_without_saving(project):
    run = drive(project, [{"tool": "bash", "args": {"command": "git init -q one"}},
                          {"tool": "bash", "args": {"command": "git init -q two"}}, {"text": "ok"}],
                [(READY, "go" + ENTER), (LEGEND, "s"), ("allow bash ", ENTER)])
    assert not run.errors
    assert (project / "one" / ".git").is_dir() and (project / "two" / ".git").is_dir()
    assert run.screen.count(LEGEND) == 1
    assert run.repl.world.approvals.list() == []


def test_n_denies_and_stops_the_turn(project):
    run = drive(project, [WRITE, {"text": "never reached"}],
                [(READY, "write" + ENTER), (LEGEND, "n")])
    assert not run.errors
    assert not (project / "a.txt").exists()
    assert "stopped: you said no" in run.screen and "never reached" not in run.screen


def test_f_denies_and_tells_the_model_why(project):
    run = drive(project, [WRITE, {"text": "understood"}],
                [(READY, "write" + ENTER), (LEGEND, "f"), ("tell the model", "use b.txt" + ENTER)])
    assert not run.errors
    assert not (project / "a.txt").exists()
    assert any("use b.txt" in text for text in tool_results(run))
    assert "understood" in run.screen


def test_escape_denies(project):
    run = drive(project, [WRITE, {"text": "x"}], [(READY, "write" + ENTER), (LEGEND, ESC)])
    assert not run.errors and not (project / "a.txt").exists()
    assert "  denied" in run.screen


def test_ctrl_c_at_the_question_denies_and_cancels_the_turn(project):
    run = drive(project, [WRITE, {"text": "next"}],
                [(READY, "write" + ENTER), (LEGEND, CTRL_C), ("turn cancelled", "again" + ENTER),
                 ("next", "")])
    assert not run.errors and not (project / "a.txt").exists()
    assert "  denied" in run.screen and "turn cancelled" in run.screen
    # the next line typed was not swallowed: it became the next message
    assert user_messages(run) == ["write", "again"]


def test_keys_typed_during_a_turn_never_answer_a_question(project):
    slow_write = {**WRITE, "delay": 1.0}
    run = drive(project, [slow_write, {"text": "ok"}, {"text": "later"}],
                [(READY, "write" + ENTER), ("write", "yes"), (LEGEND, "n"),
                 ("you said no", ENTER)])
    assert not run.errors
    assert not (project / "a.txt").exists()          # the typed "y" did not approve
    assert user_messages(run) == ["write", "yes"]    # it was kept for the next prompt


def test_sigint_during_a_turn_cancels_it_and_the_repl_lives_on(project):
    run = drive(project, [{"text": "too slow", "delay": 20}, {"text": "fresh answer"}],
                [(READY, "think" + ENTER), ("thinking", SIGINT),
                 ("turn cancelled", "again" + ENTER), ("fresh answer", "")])
    assert not run.errors and run.code == 0
    assert "too slow" not in run.screen


def test_ctrl_c_clears_the_line_and_twice_at_an_empty_prompt_exits(project):
    run = drive(project, [{"text": "echo"}],
                [(READY, "half typed" + CTRL_C + CTRL_C), ("Ctrl-C again", CTRL_C)])
    assert not run.errors and run.code == 0
    assert "tokens:" in run.screen           # the goodbye line
    assert user_messages(run) == []          # the cleared text was never sent


def test_ctrl_d_at_the_prompt_exits(project):
    run = drive(project, [], [(READY, CTRL_D)])
    assert run.code == 0 and "resume with dm_cc --resume" in run.screen


def test_slash_commands_are_never_sent_to_the_model(project):
    # an empty script: any model call would be an error on screen
    run = drive(project, [], [(READY, "/help" + ENTER), ("Commands:", "/agent list" + ENTER),
                              ("general", "/nope" + ENTER), ("unknown command", "/why" + ENTER),
                              ("decided yet", "")])
    assert not run.errors
    assert "/permissions" in run.screen and "/compact" in run.screen
    for name in ("build", "plan", "explore", "general"):
        assert f" {name} " in run.after("/agent list")
    assert "* build" in run.screen
    assert "unknown command /nope" in run.screen
    assert "model error" not in run.screen and user_messages(run) == []


def test_plan_and_shift_tab_switch_agent_by_a_synthetic_message(project):
    run = drive(project, [WRITE, {"text": "cannot"}],
                [(READY, SHIFT_TAB), ("agent: plan", "write" + ENTER), ("cannot", "/build" + ENTER),
                 ("agent: build", "")])
    assert not run.errors
    assert not (project / "a.txt").exists()        # plan may not write: denied outright
    assert "denied by deny edit" in run.screen
    switches = [(m.agent, m.synthetic) for m in run.repl.loop.session.messages
                if m.role == "user"]
    assert switches == [("plan", True), ("plan", False), ("build", True)]


def test_alt_enter_and_a_paste_stay_one_message(project):
    paste = "\x1b[200~first pasted\nsecond pasted\x1b[201~"
    run = drive(project, [{"text": "one"}, {"text": "two"}],
                [(READY, "line one" + ALT_ENTER + "line two" + ENTER), ("one", paste + ENTER),
                 ("two", "")])
    assert not run.errors
    assert user_messages(run) == ["line one\nline two", "first pasted\nsecond pasted"]


def test_a_policy_that_fails_to_load_ends_the_session_with_file_and_line(project, policy):
    policy("rules:\n  - {permission: bash, pattern: 'x', action: maybe}\n")
    run = drive(project, [], [(READY, "hello" + ENTER)])
    assert run.code == 2
    assert "policy.yaml:2" in run.screen


def test_continue_replays_the_last_exchange(project):
    drive(project, [{"text": "first answer"}], [(READY, "first question" + ENTER),
                                                 ("first answer", "")])
    run = drive(project, [], [("first answer", "")], options=Options(continue_last=True))
    assert not run.errors
    assert "continuing session" in run.screen and "first question" in run.screen


def test_a_saves_the_edited_rule_and_a_later_session_does_not_ask(project):
    git_status = {"tool": "bash", "args": {"command": "git init -q sub"}}
    run = drive(project, [git_status, {"text": "first"}],
                [(READY, "status" + ENTER), (LEGEND, "a"),
                 ("allow bash ", "\x7f" * len("git init *") + "git init -q sub" + ENTER),
                 ("first", "")])
    assert not run.errors
    saved = run.repl.world.approvals.list()
    assert [(a.permission, a.pattern, a.agent) for a in saved] == [
        ("bash", "git init -q sub", "build")]
    # a new process: the saved approval answers; the plan agent gets nothing from it
    again = drive(project, [git_status, {"text": "second"}],
                  [(READY, "status again" + ENTER), ("second", "")])
    assert not again.errors and LEGEND not in again.screen
    assert "approval:" in again.screen          # the allow line names the saved approval
    plan = drive(project, [git_status, {"text": "third"}],
                 [(READY, "/plan" + ENTER), ("agent: plan", "status" + ENTER), ("third", "")],
                 options=Options(agent="build"))
    assert not plan.errors
    assert "allowed by" not in plan.after("agent: plan")   # build's approval opens nothing for plan


def test_an_edit_that_no_longer_covers_the_call_is_refused(project):
    run = drive(project, [{"tool": "bash", "args": {"command": "git init -q sub"}}, {"text": "ok"}],
                [(READY, "go" + ENTER), (LEGEND, "a"),
                 ("allow bash ", "\x7f" * len("git init *") + "git log *" + ENTER),
                 ("would not allow this call", ESC), (LEGEND, "y")])
    assert not run.errors
    assert run.repl.world.approvals.list() == []
    assert "allowed once" in run.screen


def test_a_corrupt_approval_store_is_reported_and_kept(project):
    from dm_cc.compose import open_world

    store = open_world(cwd=project).approvals
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_bytes(b"{not json")
    run = drive(project, [], [(READY, "")])
    assert "saved approvals not used" in run.screen and str(store.path) in run.screen
    kept = list(store.path.parent.glob(store.path.name + ".corrupt-*"))
    assert [p.read_bytes() for p in kept] == [b"{not json"]


def test_context_shows_the_project_instructions_and_compact_summarises(project):
    (project / "AGENTS.md").write_text("Run make check before committing.\n")
    turns = [{"text": f"answer {n}"} for n in range(4)]
    run = drive(project, [*turns, {"text": "SUMMARY of the early turns"}],
                [(READY, "/context" + ENTER), ("AGENTS.md", "q0" + ENTER), ("answer 0", "q1" + ENTER),
                 ("answer 1", "q2" + ENTER), ("answer 2", "q3" + ENTER), ("answer 3", "/compact" + ENTER),
                 ("compacted", "")])
    assert not run.errors
    assert "AGENTS.md" in run.after("/context")
    summary = [m for m in run.repl.loop.session.messages if m.compaction]
    assert len(summary) == 1 and "SUMMARY of the early turns" in summary[0].content


def test_ctrl_c_still_cancels_a_turn_after_a_question_was_answered(project):
    run = drive(project, [WRITE, {"text": "too slow", "delay": 20}, {"text": "after"}],
                [(READY, "write" + ENTER), (LEGEND, "y"), ("thinking", SIGINT),
                 ("turn cancelled", "again" + ENTER), ("after", "")])
    assert not run.errors and (project / "a.txt").exists()
    assert "too slow" not in run.screen


def test_clear_keeps_the_model_and_the_agent(project):
    run = drive(project, [{"text": "one"}, {"text": "two"}],
                [(READY, "/plan" + ENTER), ("agent: plan", "/plan" + ENTER),
                 ("already the plan agent", "q" + ENTER), ("one", "/clear" + ENTER),
                 ("new session", "q2" + ENTER), ("two", "")])
    assert not run.errors
    assert [(m.agent, m.content) for m in run.repl.loop.session.messages if m.role == "user"] \
        == [("plan", "q2")]
