"""A command's output as it comes, and what is left of it when the turn is cancelled
under it: the real loop (compose's), the scripted model, the real bash tool. What
the command printed until Ctrl-C is the call's result, for the model too; a
transaction's changes are discarded and the model is told so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.policy import COMMANDS_AND_EDITS, my_policy

from dm_cc.compose import open_world
from dm_cc.config import config_dir
from dm_cc.core import HeadlessApprover, Loop
from dm_cc.core.approval import Approval, ApprovalRequest
from dm_cc.llm.scripted import ScriptedModel, call, calls, reply
from dm_cc.sandbox import wait_removed
from dm_cc.session import Message

SLOW = "echo first; touch made.txt; echo second >&2; sleep 30"   # made before "second" shows


def open_loop(project: Path, model: ScriptedModel, printed: list[str | None], approver=None,
              *, sandbox: str = "off") -> Loop:
    (config_dir() / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.yaml").write_text(f"sandbox: {sandbox}\n")
    my_policy(COMMANDS_AND_EDITS)
    world = open_world(cwd=project)
    return world.open_loop(approver or HeadlessApprover("deny"), model=model,
                           on_output=lambda call, text: printed.append(text))


def shown(printed: list[str | None]) -> str:
    return "".join(text for text in printed if text is not None)


async def cancel_once(loop: Loop, printed: list[str | None], seen: str) -> None:
    """Run a turn, and cancel it once ``seen`` was printed (as Ctrl-C does)."""
    turn = asyncio.ensure_future(loop.run("go"))
    for _ in range(500):
        if seen in shown(printed):
            break
        await asyncio.sleep(0.01)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn


def results(loop: Loop) -> list[Message]:
    return [m for m in loop.session.messages if m.role == "tool"]


def test_what_a_cancelled_command_printed_is_its_result_for_the_model(project):
    model = ScriptedModel([call("bash", command=SLOW), reply("seen")])
    printed: list[str | None] = []
    loop = open_loop(project, model, printed)
    asyncio.run(cancel_once(loop, printed, "second"))
    assert "first\n" in shown(printed) and printed[-1] is None   # shown as it came, then ended
    result = results(loop)[0]
    assert result.is_error
    assert result.content.startswith("first\nsecond\n(cancelled by the user after ")
    assert "the output above is what it printed until then" in result.content
    assert (project / "made.txt").exists()                 # unconfined: it did it
    asyncio.run(loop.run("what happened?"))
    _system, sent, _tools = model.calls[1]
    assert any(m.role == "tool" and "first\nsecond\n(cancelled" in m.content for m in sent)


def test_each_of_calls_run_at_once_keeps_its_own(project):
    model = ScriptedModel([calls(("bash", {"command": "echo one; sleep 30"}),
                                 ("bash", {"command": "sleep 0.1; echo two; sleep 30"}))])
    printed: list[str | None] = []
    loop = open_loop(project, model, printed)
    asyncio.run(cancel_once(loop, printed, "two"))
    one, two = results(loop)
    assert one.content.startswith("one\n(cancelled by the user after ")
    assert two.content.startswith("two\n(cancelled by the user after ")


@needs_bwrap
def test_a_cancelled_transaction_changes_nothing_and_says_so(project):
    model = ScriptedModel([call("bash", command=SLOW)])
    printed: list[str | None] = []
    loop = open_loop(project, model, printed, sandbox="required")
    if not loop.rt.sandbox or not loop.rt.sandbox.transactional:
        pytest.skip("commands do not run as transactions here")
    asyncio.run(cancel_once(loop, printed, "second"))
    result = results(loop)[0].content
    assert "first\nsecond\n(cancelled by the user after " in result
    assert "(none of its 1 change to the project landed: a cancelled command's changes " \
           "are discarded)" in result
    assert not (project / "made.txt").exists()
    assert wait_removed(30)
    assert not list(loop.rt.sandbox.transactions_dir.iterdir())   # its view is gone


class Waits:
    """A person who never answers: the turn is cancelled while they are asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        await asyncio.Event().wait()
        raise AssertionError("never answered")


@needs_bwrap
def test_cancelled_at_the_question_about_its_changes_the_output_stays(project):
    model = ScriptedModel([call("bash", command=(
        "python3 -c \"import pathlib; print('wrote it'); pathlib.Path('.envrc').write_text('x')\""))])
    waits = Waits()
    loop = open_loop(project, model, [], waits, sandbox="required")
    if not loop.rt.sandbox or not loop.rt.sandbox.transactional:
        pytest.skip("commands do not run as transactions here")

    async def scenario() -> None:
        turn = asyncio.ensure_future(loop.run("go"))
        for _ in range(500):
            if waits.asked:
                break
            await asyncio.sleep(0.01)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn

    asyncio.run(scenario())
    assert waits.asked and waits.asked[0].changes            # the question about .envrc
    result = results(loop)[0]
    assert result.content.startswith("wrote it\n")
    assert result.content.endswith("(the turn was cancelled while the user was asked about "
                                   "this command; what it changed in the project did not land)")
    assert not (project / ".envrc").exists()
