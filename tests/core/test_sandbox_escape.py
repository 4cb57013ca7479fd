"""A command the sandbox stopped runs again unconfined only through a
``sandbox_escape`` request: asked by default, denied headless, deniable by rule."""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path

import pytest
from support.bwrap import kept_out as kept_out_of
from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.core.approval import Approval, HeadlessApprover, ScriptedApprover
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.sandbox.host import availability

pytestmark = pytest.mark.skipif(not availability().usable,
                                reason=f"bubblewrap cannot confine here: {availability().reason}")

POLICY = """rules:
  - {permission: bash, pattern: "python3 *", action: allow}
"""


def writer(target: Path) -> str:
    code = f"open({str(target)!r},'w').write('escaped')"  # one word: an exact rule names it
    return f"python3 -c {shlex.quote(code)}"


def read(target: Path) -> str:
    """The writer's command as the shell analysis reads it: its words, quotes removed."""
    return f"python3 -c open({str(target)!r},'w').write('escaped')"


def make_loop(project: Path, model, approver, policy: str = POLICY) -> Loop:
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(policy)
    trust_project(project)
    return open_world(cwd=project).open_loop(approver, model=model)


def run(loop: Loop, prompt: str = "go"):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=60))


def kept_out(loop: Loop, target: Path) -> str:
    assert loop.rt.sandbox is not None
    return kept_out_of(loop.rt.sandbox.transactional, target)


def result_of(loop: Loop) -> str:
    return next(m.content for m in loop.session.messages if m.role == "tool")


def test_the_person_lets_a_stopped_command_run_outside(project, tmp_path):
    target = tmp_path / "outside.txt"
    approver = ScriptedApprover(["once"])
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)), reply("ok")]),
                     approver)
    run(loop)
    assert target.read_text() == "escaped"
    (asked,) = approver.asked
    (escape,) = [v.request for v in asked.decision.verdicts]
    assert (escape.permission, escape.pattern) == ("sandbox_escape", read(target))
    assert "sandbox" in escape.note
    # the person sees why: what the sandbox kept from happening, not a guess from its output
    assert kept_out(loop, target) in asked.stopped
    assert result_of(loop).endswith("(run outside the sandbox)")


def test_a_refusal_with_feedback_keeps_the_confined_result_and_the_turn_goes_on(
        project, tmp_path):
    target = tmp_path / "outside.txt"
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)),
                                             reply("understood")]),
                     ScriptedApprover([Approval("reject", "write it in the project")]))
    assert run(loop).text == "understood"
    assert not target.exists()
    text = result_of(loop)
    assert kept_out(loop, target) in text
    assert "did not let it run outside the sandbox: write it in the project" in text


def test_a_refusal_without_a_word_stops_the_turn_as_at_any_question(project, tmp_path):
    """One settle path: "no" without feedback ends the turn, for the escape as for
    the first question; the confined run's result is still the call's."""
    target = tmp_path / "outside.txt"
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)),
                                             reply("never asked for")]),
                     ScriptedApprover([Approval("reject")]))
    assert run(loop).reason == "rejected"
    assert not target.exists()
    text = result_of(loop)
    assert kept_out(loop, target) in text and "did not let it run outside the sandbox" in text


def test_headless_never_escapes(project, tmp_path):
    target = tmp_path / "outside.txt"
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)), reply("ok")]),
                     HeadlessApprover("deny"))
    run(loop)
    assert not target.exists()
    assert "sandbox" in result_of(loop)


def test_a_deny_rule_refuses_the_escape_without_asking(project, tmp_path):
    target = tmp_path / "outside.txt"
    approver = ScriptedApprover([])
    policy = POLICY + '  - {permission: sandbox_escape, pattern: "*", action: deny}\n'
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)), reply("ok")]),
                     approver, policy)
    run(loop)
    assert not target.exists() and not approver.asked
    assert "may not run outside the sandbox" in result_of(loop)


def test_an_escape_is_remembered_exactly_for_the_session_and_never_saved(project, tmp_path):
    """What a command does outside depends on files the project can change: an escape
    answer lasts the session, even when an approver answers "always"."""
    target = tmp_path / "outside.txt"
    command = writer(target)
    approver = ScriptedApprover(["always"])
    loop = make_loop(project, ScriptedModel([call("bash", command=command),
                                             call("bash", command=command), reply("ok")]),
                     approver)
    run(loop)
    assert len(approver.asked) == 1  # the second time the session's answer decides
    assert not approver.asked[0].may_save     # the REPL offers no "always"
    kept = [r for r in loop.rt.approvals.rules("build") if r.permission == "sandbox_escape"]
    assert [r.pattern for r in kept] == [read(target)]
    assert open_world(cwd=project).approvals.rules_for("build") == ()


def test_a_command_that_works_inside_is_never_asked_about(project):
    approver = ScriptedApprover([])
    loop = make_loop(project, ScriptedModel([
        call("bash", command="python3 -c \"open('inside.txt','w').write('x')\""), reply("ok")]),
        approver)
    run(loop)
    assert (project / "inside.txt").read_text() == "x" and not approver.asked


def test_in_required_mode_no_escape_is_offered(project, tmp_path):
    target = tmp_path / "outside.txt"
    config = Path(os.environ["DM_CC_HOME"]) / "config"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text("sandbox: required\n")
    approver = ScriptedApprover([])
    loop = make_loop(project, ScriptedModel([call("bash", command=writer(target)), reply("ok")]),
                     approver)
    run(loop)
    assert not target.exists() and not approver.asked
    assert "The sandbox is required here, so it cannot run outside it" in result_of(loop)


# ------------------------------------------------------- judged per simple command


def escaping(project: Path, rules: str) -> None:
    """The person's own policy file (a project's may not open the sandbox)."""
    mine = Path(os.environ["DM_CC_HOME"]) / "config" / "policy.yaml"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("rules:\n" + rules)


def test_a_command_that_cannot_be_known_statically_is_never_let_out_by_a_rule(project, tmp_path):
    """`sandbox_escape "*" allow` allows every command it can read; a script piped into
    a shell cannot be read, so its escape asks (here: no, with feedback)."""
    target, evil = tmp_path / "outside.txt", tmp_path / "evil.txt"
    escaping(project, '  - {permission: sandbox_escape, pattern: "*", action: allow}\n')
    command = f"{writer(target)}; echo {shlex.quote(f'touch {evil}')} | sh"
    approver = ScriptedApprover(["once", Approval("reject", "not that")])
    loop = make_loop(project, ScriptedModel([call("bash", command=command), reply("ok")]),
                     approver)
    run(loop)
    assert not target.exists() and not evil.exists()
    first, escape = approver.asked
    asking = [v for v in escape.decision.verdicts if v.action == "ask"]
    assert [(v.request.permission, v.request.pattern) for v in asking] == [("sandbox_escape", "sh")]
    assert "read from a pipe" in (asking[0].note or "")
    assert {v.request.pattern for v in escape.decision.verdicts
            if v.action == "allow" and not v.request.speculative} == {
        f"echo touch {evil}", read(target)}
    assert escape.suggestions == ()       # nothing "always" could remember for `sh`
    assert "did not let it run outside the sandbox: not that" in result_of(loop)


def test_session_remembers_each_command_that_asked_exactly(project, tmp_path):
    """Not the arity prefix bash suggests (`python3 *` would let any Python out), and
    not the whole line: each simple command that asked, as it was read."""
    target = tmp_path / "outside.txt"
    command = f"true && {writer(target)}"
    approver = ScriptedApprover(["session"])
    loop = make_loop(project, ScriptedModel([call("bash", command=command),
                                             call("bash", command=f"{writer(target)} || true"),
                                             reply("ok")]),
                     approver, POLICY + '  - {permission: bash, pattern: "true", action: allow}\n')
    run(loop)
    (asked,) = approver.asked          # the second line's commands were each remembered
    assert {(r.permission, r.pattern) for r in asked.suggestions} == {
        ("sandbox_escape", "true"), ("sandbox_escape", read(target))}
    saved = {r.pattern for r in loop.rt.approvals.rules("build")
             if r.permission == "sandbox_escape"}
    assert saved == {"true", read(target)}
