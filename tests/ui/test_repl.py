"""The REPL on prompt_toolkit's pipe input: every approval key, Ctrl-C and Ctrl-D at
the prompt and during a turn, slash commands, Shift+Tab, multi-line input. The real
loop, the real tools in tmp_path, a scripted model."""

from __future__ import annotations

import re

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
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
from support.trust import trust_project

from dm_cc.compose import Options
from dm_cc.ui import slash
from dm_cc.ui.approval_prompt import QUIET, TYPING

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
        trust_project(project)
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
    (project / "mk.py").write_text("import os, sys\nos.mkdir(sys.argv[1])\n")
    made = ["python3 mk.py one", "python3 mk.py two"]   # s keeps `python3 mk.py *`
    run = drive(project, [*({"tool": "bash", "args": {"command": c}} for c in made), {"text": "ok"}],
                [(READY, "go" + ENTER), (LEGEND, "s"), ("allow bash ", ENTER)])
    assert not run.errors
    assert (project / "one").is_dir() and (project / "two").is_dir()
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
    # the y was typed before the question appeared: it is no answer, and the legend
    # says so; once the person stops typing and reads, n answers
    run = drive(project, [slow_write, {"text": "ok"}, {"text": "later"}],
                [(READY, "write" + ENTER), ("write", "yes"), (TYPING, ""), (QUIET + 0.1, "n"),
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
    run = drive(project, [], [(READY, "/sessions" + ENTER), ("resume one with", CTRL_D)])
    assert "has no message yet" in run.after("/sessions")   # nothing saved, nothing listed
    assert run.code == 0 and "no message, so the session is not kept" in run.screen
    assert "resume with" not in run.screen and run.repl.world.sessions.list(empty=True) == []


def test_slash_commands_are_never_sent_to_the_model(project):
    # an empty script: any model call would be an error on screen
    run = drive(project, [], [(READY, "/help" + ENTER), ("Commands:", "/agent list" + ENTER),
                              ("general", "/nope" + ENTER), ("unknown command", "/why" + ENTER),
                              ("decided yet", "")])
    assert not run.errors
    assert "/permissions" in run.screen and "/compact" in run.screen
    helped = run.after("Commands:").split("@NAME TASK")[0].splitlines()
    assert max(len(line) for line in helped) <= 80    # wrapped between words, not by the terminal
    assert "  /context                   what the next model call holds: system prompt" in helped
    assert " " * 29 + "(AGENTS.md …), tools, messages" in helped
    assert "@NAME TASK starts that subagent yourself (@explore find X)" in run.screen
    for name in ("build", "plan", "explore", "general"):
        assert f" {name} " in run.after("/agent list")
    assert "* build" in run.screen
    assert "unknown command /nope" in run.screen
    assert "model error" not in run.screen and user_messages(run) == []


def test_agent_capabilities_counts_the_rules_that_decide_particular_inputs(project, policy):
    policy("rules:\n  - {permission: webfetch, pattern: 'https://docs.python.org/*', "
           "action: allow}\n")
    run = drive(project, [], [(READY, "/agent capabilities" + ENTER), ("webfetch", "")])
    assert not run.errors
    shown = {line.split()[1]: line for line in run.after("agent build").splitlines()[1:]
             if len(line.split()) > 2}
    assert shown["webfetch"].split()[0] == "ask"
    assert shown["webfetch"].endswith("; 1 more specific rule for particular inputs "
                                      "(/permissions)")
    assert shown["todo"].split() == ["allow", "todo", "allow", "todo", "'*'", "(builtin:defaults)"]


def test_tab_completes_command_names_and_a_commands_first_argument():
    complete = slash.SlashCompleter()

    def words(text: str) -> list[str]:
        return [c.text for c in complete.get_completions(Document(text), CompleteEvent())]

    assert words("/c") == ["/cost", "/context", "/compact", "/clear"]
    assert words("/agent ") == ["list", "switch", "capabilities"]
    assert words("/tasks c") == ["cancel"]
    assert words("/model ") == words("/nope x") == words("hi") == words("/agent\n") == []


def test_plan_and_shift_tab_switch_agent_by_a_synthetic_message(project):
    # Shift+Tab cycles the primary agents: build → (build) accept edits → auto → plan
    run = drive(project, [WRITE, {"text": "cannot"}],
                [(READY, SHIFT_TAB), ("accept edits", SHIFT_TAB), ("agent: auto", SHIFT_TAB),
                 ("agent: plan", "write" + ENTER),
                 ("cannot", "/build" + ENTER), ("agent: build", "")])
    assert not run.errors
    assert not (project / "a.txt").exists()        # plan may not write: denied outright
    assert "denied by deny edit" in run.screen and "the plan agent may only read" in run.screen
    switches = [(m.agent, m.synthetic) for m in run.repl.loop.session.messages
                if m.role == "user"]
    assert switches == [("auto", True), ("plan", True), ("plan", False), ("build", True)]


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


MKDIR = "python3 make_sub.py"


def test_a_saves_the_edited_rule_and_a_later_session_does_not_ask(project):
    (project / "make_sub.py").write_text("import os\nos.makedirs('sub', exist_ok=True)\n")
    git_status = {"tool": "bash", "args": {"command": MKDIR}}
    run = drive(project, [git_status, {"text": "first"}],
                [(READY, "status" + ENTER), (LEGEND, "a"),
                 ("allow bash ", "\x7f" * len(f"{MKDIR} *") + MKDIR + ENTER),
                 ("first", "")])
    assert not run.errors
    saved = run.repl.world.approvals.list()
    assert [(a.permission, a.pattern, a.agent) for a in saved] == [
        ("bash", MKDIR, "build")]
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
    run = drive(project, [{"tool": "bash", "args": {"command": MKDIR}}, {"text": "ok"}],
                [(READY, "go" + ENTER), (LEGEND, "a"),
                 ("allow bash ", "\x7f" * len(f"{MKDIR} *") + "git log *" + ENTER),
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


# ---------------------------------------------------------------------- subagents

def task(description: str, prompt: str, agent: str = "explore", **more: object) -> dict:
    return {"tool": "task", "args": {"description": description, "prompt": prompt,
                                     "subagent_type": agent, **more}}


def label_of(screen: str, description: str) -> str:
    """The label a started line gave the subagent doing ``description``."""
    found = re.search(r"\[(\w+ #\d+)\] started[^:]*: " + re.escape(description), screen)
    assert found, f"no started line for {description!r}"
    return found.group(1)


def test_two_parallel_subagents_show_their_calls_and_done_lines(project):
    (project / "auth.py").write_text("def login(): pass\n")
    script = {"replies": [{"calls": [task("find auth", "look for the auth code"),
                                     task("find models", "look for the models")]},
                          {"text": "Both reported back."}],
              "tasks": {"auth code": [{"tool": "grep", "args": {"pattern": "def login"}},
                                      {"text": "AUTH-REPORT: auth.py:1"}],
                        "the models": [{"tool": "glob", "args": {"pattern": "*.py"}},
                                       {"text": "MODELS-REPORT: none"}]}}
    run = drive(project, script, [(READY, "look around" + ENTER), ("Both reported back.", "")])
    assert not run.errors
    screen = run.screen
    auth, models = label_of(screen, "find auth"), label_of(screen, "find models")
    assert {auth, models} == {"explore #1", "explore #2"}
    # each child's call, indented under it and led by its label, drawn as a top-level one
    assert f'  [{auth}] ● grep "def login" in .' in screen
    assert f"  [{auth}]   allowed by allow grep" in screen
    assert f"  [{auth}]   │ auth.py:1:def login(): pass" in screen
    assert f'  [{models}] ● glob "*.py" in .' in screen and f"  [{models}]   │ auth.py" in screen
    assert f"✓ [{auth}] done · 1 tool, " in screen and f"✓ [{models}] done · 1 tool, " in screen
    # the children's answers are the parent model's to read, not the person's answer
    assert "AUTH-REPORT" not in screen and "MODELS-REPORT" not in screen
    assert "task_id:" not in screen
    assert screen.index(f"✓ [{auth}] done") < screen.index("Both reported back.")


def test_a_subagents_question_names_it_and_the_answer_counts(project):
    script = {"replies": [task("write the file", "please write a.txt", "general"),
                          {"text": "The subagent wrote it."}],
              "tasks": {"write a.txt": [WRITE, {"text": "written"}]}}
    run = drive(project, script, [(READY, "delegate" + ENTER), (LEGEND, "y"),
                                  ("The subagent wrote it.", "")])
    assert not run.errors
    assert (project / "a.txt").read_text() == "hello\n"
    assert "? [general #1] wants to use write" in run.screen
    assert "+hello" in run.after("[general #1] wants to use write")
    assert "✓ [general #1] done · 1 tool" in run.screen


def test_two_subagents_asking_at_once_get_one_question_after_the_other(project):
    write = {name: {"tool": "write", "args": {"path": f"{name}.txt", "content": name + "\n"}}
             for name in ("one", "two")}
    script = {"replies": [{"calls": [task("first", "write one.txt", "general"),
                                     task("second", "write two.txt", "general")]},
                          {"text": "Both written."}],
              "tasks": {"one.txt": [write["one"], {"text": "ok"}],
                        "two.txt": [write["two"], {"text": "ok"}]}}
    run = drive(project, script, [(READY, "go" + ENTER), (LEGEND, "y"), (LEGEND, "y"),
                                  ("Both written.", "")])
    assert not run.errors
    assert (project / "one.txt").read_text() == "one\n" and (project / "two.txt").exists()
    questions = re.findall(r"\? \[(general #\d)\] wants to use write", run.screen)
    assert sorted(questions) == ["general #1", "general #2"]
    # one whole question, its answer, then the next: never two legends without an answer
    between = run.screen[run.screen.index(LEGEND):run.screen.rindex(LEGEND)]
    assert "allowed once" in between and run.screen.count("allowed once") == 2


def test_nothing_comes_between_a_question_and_its_keys(project):
    (project / "auth.py").write_text("def login(): pass\n")
    script = {"replies": [{"calls": [task("write it", "please write a.txt", "general"),
                                     task("search", "look for the auth code")]},
                          {"text": "All done."}],
              "tasks": {"write a.txt": [WRITE, {"text": "written"}],
                        "auth code": [{"tool": "grep", "args": {"pattern": "def login"},
                                       "delay": 0.2}, {"text": "found"}]}}
    run = drive(project, script, [(READY, "go" + ENTER), (LEGEND, ""), (1.0, "y"),
                                  ("All done.", "")])
    assert not run.errors
    screen = run.screen
    searcher = label_of(screen, "search")
    question = screen.index("wants to use write")
    answer = screen.index("allowed once")
    # the search ran while the question was open; its lines waited for the answer
    assert f"✓ [{searcher}] done" not in screen[question:answer]
    assert f"[{searcher}] ● grep" not in screen[question:answer]
    assert answer < screen.index(f"[{searcher}] ● grep") < screen.index(f"✓ [{searcher}] done")


def test_a_queued_question_an_earlier_always_covers_is_not_asked(project):
    script = {"replies": [{"calls": [task("first", "write it once", "general"),
                                     task("second", "write it twice", "general")]},
                          {"text": "Both written."}],
              "tasks": {"it once": [WRITE, {"text": "ok"}],
                        "it twice": [WRITE, {"text": "ok"}]}}
    run = drive(project, script, [(READY, "go" + ENTER), (LEGEND, "a"),
                                  ("Enter keeps it", ENTER), ("Both written.", "")])
    assert not run.errors
    assert run.screen.count("wants to use write") == 1
    assert "write a.txt: allowed by your earlier answer" in run.screen


def test_tasks_lists_a_running_background_child_and_cancels_it(project):
    script = {"replies": [task("slow survey", "survey everything", background=True),
                          {"text": "Started it in the background."},
                          {"text": "Noted."}],
              "tasks": {"survey everything": [{"text": "never", "delay": 30}]}}
    run = drive(project, script, [
        (READY, "survey" + ENTER), ("Started it in the background.", "/tasks" + ENTER),
        ("running subagents", "/tasks cancel #1" + ENTER), ("cancelled [explore #1]", "/tasks" + ENTER),
        ("no subagent is running", "next" + ENTER), ("Noted.", "")], timeout=10)
    assert not run.errors
    listing = run.after("running subagents")
    child = [info for info in run.repl.world.sessions.list() if info.parent_id]
    assert len(child) == 1
    assert "[explore #1] slow survey · explore · " in listing and " background · " in listing
    assert child[0].id in listing and "0 tools" in listing
    assert "■ [explore #1] cancelled · 0 tools" in run.screen
    # the model heard about it with the next message
    delivered = [m.content for m in run.repl.loop.session.messages if m.synthetic]
    assert any("explore #1" in text and "cancelled" in text for text in delivered)


def test_a_background_child_done_at_the_prompt_is_announced(project):
    script = {"replies": [task("quick look", "look quickly", background=True),
                          {"text": "It runs."}, {"text": "Thanks for the report."}],
              "tasks": {"look quickly": [{"text": "QUICK-REPORT", "delay": 0.5}]}}
    run = drive(project, script, [(READY, "look" + ENTER), ("It runs.", ""),
                                  ("reaches the model with your next message", "and?" + ENTER),
                                  ("Thanks for the report.", "")])
    assert not run.errors
    done = run.after("It runs.")
    assert "✓ [explore #1] done · 0 tools" in done and "QUICK-REPORT" not in run.screen
    delivered = [m.content for m in run.repl.loop.session.messages if m.synthetic]
    assert any("QUICK-REPORT" in text for text in delivered)


def test_a_background_childs_question_at_the_prompt_keeps_what_was_typed(project):
    script = {"replies": [task("write later", "write a.txt soon", "general", background=True),
                          {"text": "It runs."}, {"text": "got both"}],
              "tasks": {"a.txt soon": [{**WRITE, "delay": 1.0}, {"text": "written"}]}}
    run = drive(project, script, [(READY, "go" + ENTER), ("It runs.", "half typed"),
                                  (LEGEND, ""), (QUIET + 0.1, "y"),
                                  ("reaches the model", " and more" + ENTER),
                                  ("got both", "")])
    assert not run.errors
    assert (project / "a.txt").exists()
    assert "? [general #1] wants to use write" in run.screen
    assert user_messages(run) == ["go", "half typed and more"]


def test_exit_cancels_background_children(project):
    script = {"replies": [task("endless", "work for ever", background=True), {"text": "Off it goes."}],
              "tasks": {"for ever": [{"text": "never", "delay": 30}]}}
    run = drive(project, script, [(READY, "go" + ENTER), ("Off it goes.", CTRL_D)], timeout=10)
    assert not run.errors and run.code == 0
    assert "■ [explore #1] cancelled" in run.screen
    assert run.screen.index("■ [explore #1] cancelled") < run.screen.index("resume with")
    child = next(info for info in run.repl.world.sessions.list() if info.parent_id)
    assert not run.repl.loop.subagents.running and child.messages >= 1


def test_a_read_says_how_many_lines_and_a_grep_what_it_looks_for(project):
    (project / "src").mkdir()
    (project / "src" / "big.py").write_text("".join(f"x = {n}\n" for n in range(120)))
    (project / "src" / "one.py").write_text("def login(): pass\n")
    run = drive(project, [{"tool": "read", "args": {"path": "src/big.py"}},
                          {"tool": "read", "args": {"path": "src/one.py"}},
                          {"tool": "grep", "args": {"pattern": "def login", "path": "src",
                                                    "include": "*.py"}},
                          {"text": "Looked."}],
                [(READY, "look" + ENTER), ("Looked.", "")])
    assert not run.errors
    lines = run.after("look").replace("\r", "").splitlines()
    assert lines[lines.index("● read src/big.py") + 2] == "  Read 120 lines"
    assert lines[lines.index("● read src/one.py") + 2] == "  Read 1 line"
    assert '● grep "def login" in src (*.py)' in lines
    assert "  │ src/one.py:1:def login(): pass" in lines


def test_a_large_paste_shows_as_a_placeholder_and_the_model_gets_all_of_it(project):
    log = "".join(f"row {n}\n" for n in range(3000))
    paste = "\x1b[200~" + log.replace("\n", "\r\n") + "\x1b[201~"     # bracketed, as terminals send
    run = drive(project, [{"text": "Read it."}, {"text": "Small one."}],
                [(READY, "explain " + paste + " please" + ENTER),
                 ("Read it.", "and\x1b[200~two\r\nlines\x1b[201~" + ENTER), ("Small one.", "")])
    assert not run.errors
    assert "explain [pasted 3000 lines #1] please" in run.screen
    assert "row 2999" not in run.screen
    model = run.repl.loop.rt.model
    sent = [m.content for m in model.calls[0][1] if m.role == "user"]
    assert sent[-1] == f"explain {log} please"                 # the whole text, as pasted
    assert user_messages(run) == [f"explain {log} please", "andtwo\nlines"]  # small: as it is


def test_sessions_shows_subagents_sessions_under_their_parent(project):
    script = {"replies": [task("look", "look at it"), {"text": "Looked."}],
              "tasks": {"look at it": [{"text": "seen"}]}}
    run = drive(project, script, [(READY, "look" + ENTER), ("Looked.", "/sessions" + ENTER),
                                  ("resume one with", "")])
    assert not run.errors
    parent = run.repl.loop.session.info
    child = next(info for info in run.repl.world.sessions.list() if info.parent_id)
    listing = run.after("/sessions").splitlines()
    top = next(n for n, line in enumerate(listing) if parent.id in line)
    head = listing[top - 1]     # 80 columns: the agents' column gives the title room
    assert head.split() == ["session", "last", "active", "msgs", "title"]
    assert listing[top].startswith(f"* {parent.id}")
    assert listing[top + 1].startswith(f"   └ {child.id}") and '"look (@explore)"' in listing[top + 1]
    # the columns line up under the header, the child's indent notwithstanding
    assert {line.index('"') for line in listing[top:top + 2]} == {head.index("title")}


def test_a_grandchilds_lines_are_indented_one_step_further(project, policy):
    policy("agents:\n  general: {rules: [{permission: task, pattern: '*', action: allow}]}\n")
    script = {"replies": [task("outer job", "do the outer job", "general"), {"text": "All done."}],
              "tasks": {"outer job": [task("inner look", "inner look around"), {"text": "outer ok"}],
                        "inner look": [{"tool": "glob", "args": {"pattern": "*.py"}},
                                       {"text": "inner ok"}]}}
    run = drive(project, script, [(READY, "nest" + ENTER), ("All done.", "")])
    assert not run.errors
    lines = run.after("nest").replace("\r", "").splitlines()
    assert "▸ [general #1] started: outer job" in "\n".join(lines)
    assert any(line.startswith("  [general #1] ● task explore") for line in lines)
    assert any(line.startswith("  ▸ [explore #2] started: inner look") for line in lines)
    assert any(line.startswith('    [explore #2] ● glob "*.py" in .') for line in lines)
    assert any(line.startswith("  ✓ [explore #2] done · 1 tool") for line in lines)
    assert any(line.startswith("✓ [general #1] done · 1 tool") for line in lines)


def test_ctrl_c_cancels_the_turn_and_the_subagents_it_waits_for(project):
    script = {"replies": [{"calls": [task("slow one", "slow thing one"),
                                     task("slow two", "slow thing two")]},
                          {"text": "fresh answer"}],
              "tasks": {"thing one": [{"text": "never", "delay": 30}],
                        "thing two": [{"text": "never", "delay": 30}]}}
    run = drive(project, script, [(READY, "go" + ENTER), ("started: slow two", SIGINT),
                                  ("turn cancelled", "again" + ENTER), ("fresh answer", "")],
                timeout=10)
    assert not run.errors
    assert "■ [explore #1] cancelled · 0 tools" in run.screen
    assert "■ [explore #2] cancelled · 0 tools" in run.screen
    assert "by the user" not in run.screen        # the model's text for the cut calls
    assert not run.repl.loop.subagents.running
