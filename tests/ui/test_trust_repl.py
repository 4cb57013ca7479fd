"""The trust question at start on prompt_toolkit's pipe input: what is typed before
or while it appears is never its answer and is not lost; /trust shows where the
project's own files stand. (In a real terminal: test_trust_tmux.py.)"""

from __future__ import annotations

import pytest
from support.repl_driver import CTRL_D, ENTER, drive
from support.trust import trust_project

from dm_cc.compose import Options, open_world
from dm_cc.ui.approval_prompt import QUIET, TYPING

READY = "/help lists commands"
LOADING = "loading policy and session"   # the toolbar while the world loads
QUESTION = "? Trust this project's dm_cc files as they are now?"
LEGEND = "y trust them"
REPLY = [{"text": "On it."}]


@pytest.fixture
def cloned(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'make *', action: allow}\n")
    return project


def user_messages(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages
            if m.role == "user" and not m.synthetic]


def answered(project) -> tuple[dict[str, str], dict[str, str]]:
    """What the person trusts, and what they were asked and said no to."""
    approvals = open_world(cwd=project).approvals
    return approvals.trusted_files(), approvals.asked_files()


def test_a_message_sent_before_the_question_is_not_its_answer(cloned):
    # the world takes a moment to load: the person sends "yes …" at the first prompt
    run = drive(cloned, REPLY, [(LOADING, "yes, fix the build" + ENTER),
                                (LEGEND, "n"), ("On it.", "")], loading=1.0)
    assert not run.errors and run.code == 0, run.errors
    assert run.screen.index(QUESTION) > run.screen.index("yes, fix the build")
    assert "not trusted: only their deny and ask rules apply" in run.screen
    assert user_messages(run) == ["yes, fix the build"]        # sent once answered
    trusted, asked = answered(cloned)
    assert trusted == {} and list(asked) == [".dm_cc/policy.yaml"]


def test_keys_typed_as_the_question_appears_are_kept_for_the_prompt(cloned):
    # half a message at the prompt, the question comes, the typing goes on ("say yes"):
    # no key of it answers; once the person stops and reads, n does
    run = drive(cloned, REPLY, [(LOADING, "please "), (QUESTION, "say yes"),
                                (TYPING, ""), (QUIET + 0.3, "n"), (READY, ENTER),
                                ("On it.", "")], loading=0.5)
    assert not run.errors and run.code == 0, run.errors
    assert user_messages(run) == ["please say yes"]
    trusted, asked = answered(cloned)
    assert trusted == {} and list(asked) == [".dm_cc/policy.yaml"]


def test_a_y_answers_at_once_when_nothing_was_typed(cloned):
    run = drive(cloned, REPLY, [(LEGEND, "y"), (READY, "/trust" + ENTER),
                                ("forgets them", "")])
    assert not run.errors and run.code == 0, run.errors
    assert TYPING not in run.screen
    assert "trusted as they are now (dm_cc untrust forgets it)" in run.screen
    shown = run.after("/trust")
    assert f"This project's own dm_cc files ({cloned}):" in shown
    assert ".dm_cc/policy.yaml  trusted" in shown
    assert "`dm_cc untrust` forgets them: sessions started afterwards run without them" \
        in " ".join(shown.split())
    assert list(answered(cloned)[0]) == [".dm_cc/policy.yaml"]


def test_slash_trust_after_no_says_how_to_trust_them(cloned):
    run = drive(cloned, REPLY, [(LEGEND, CTRL_D), (READY, "/trust" + ENTER),
                                ("start dm_cc again", "/trust now" + ENTER),
                                ("usage: /trust", "")])
    assert not run.errors and run.code == 0, run.errors
    shown = " ".join(run.after("/trust").split())
    assert ".dm_cc/policy.yaml (not trusted: you said no) allow bash 'make *'" in shown
    assert "This session runs without them. To trust them, run `dm_cc trust` in a shell " \
           "and start dm_cc again" in shown
    assert list(answered(cloned)[1]) == [".dm_cc/policy.yaml"]     # Ctrl-D said no


def test_slash_trust_without_dm_cc_files_and_with_trust_project(project):
    run = drive(project, REPLY, [(READY, "/trust" + ENTER), ("nothing to trust", "")])
    assert not run.errors
    assert "This project has no dm_cc files of its own (.dm_cc/): nothing to trust." in run.screen

    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'make *', action: allow}\n")
    run = drive(project, REPLY, [(READY, "/trust" + ENTER), ("later sessions", "")],
                options=Options(trust_project=True))     # --trust-project: never asked
    assert not run.errors
    assert QUESTION not in run.screen and "not trusted" not in run.screen
    assert ".dm_cc/policy.yaml  trusted for this run (--trust-project)" in run.screen
    assert "`dm_cc trust` trusts them for later sessions too." in run.screen


def test_a_trusted_project_is_not_asked_about(cloned):
    trust_project(cloned)
    run = drive(cloned, REPLY, [(READY, "")])
    assert not run.errors
    assert QUESTION not in run.screen and "not trusted" not in run.screen
