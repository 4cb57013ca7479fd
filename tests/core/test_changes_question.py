"""The question about a command's changes (it ran as a transaction: docs/repl.md,
"A command's changes"), through the loop a user gets with the scripted model and
real bubblewrap: y applies the changes marked ?, n discards them and ends the turn
as at every question, f discards them and the turn goes on; nothing is remembered
and no earlier answer settles it."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest
from support.policy import COMMANDS_AND_EDITS, my_policy

from dm_cc.compose import open_world
from dm_cc.core.approval import Approval, ApprovalRequest, ScriptedApprover
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.permissions import Rule
from dm_cc.sandbox.host import availability

pytestmark = pytest.mark.skipif(not availability().usable,
                                reason=f"bubblewrap cannot confine here: {availability().reason}")

TIDY = "python3 -c " + shlex.quote(
    "import os; t = open('notes.txt').read(); open('notes.txt', 'w').write(t.replace('two', 'TWO'))"
    "; os.remove('old.txt')")


@pytest.fixture
def here(project: Path) -> Path:
    my_policy(COMMANDS_AND_EDITS, "  - {permission: delete, pattern: '**', action: ask}\n")
    (project / "notes.txt").write_text("one\ntwo\nthree\n")
    (project / "old.txt").write_text("old\n")
    return project


def make_loop(project: Path, approver, *replies) -> Loop:
    model = ScriptedModel([call("bash", command=TIDY), *replies])
    return open_world(cwd=project).open_loop(approver, model=model)


def run(loop: Loop):
    return asyncio.run(asyncio.wait_for(loop.run("tidy up"), timeout=60))


def result_of(loop: Loop) -> str:
    return next(m.content for m in loop.session.messages if m.role == "tool")


def test_the_question_lists_every_change_and_a_yes_applies_the_asked_ones(here):
    approver = ScriptedApprover(["once"])
    assert run(make_loop(here, approver, reply("tidied"))).text == "tidied"
    assert not (here / "old.txt").exists()
    assert (here / "notes.txt").read_text() == "one\nTWO\nthree\n"
    (asked,) = approver.asked
    listed = asked.changes.splitlines()
    assert "  modified notes.txt" in listed
    assert any(line.startswith("? deleted old.txt  (asked about by rule `ask delete **`")
               for line in listed)
    # the asked file's diff, then the one that lands whatever the answer, for context
    assert listed.index("-old") < listed.index("(the changes below land whatever you answer)") \
        < listed.index("-two") < listed.index("+TWO")


def test_a_no_without_a_word_discards_them_and_ends_the_turn(here):
    loop = make_loop(here, ScriptedApprover([Approval("reject")]), reply("never asked for"))
    assert run(loop).reason == "rejected"
    assert (here / "old.txt").read_text() == "old\n"
    assert (here / "notes.txt").read_text() == "one\nTWO\nthree\n"   # it was not asked
    assert "deleted old.txt" in result_of(loop) and "the user said no" in result_of(loop)


def test_a_no_with_a_word_discards_them_and_the_model_is_told(here):
    loop = make_loop(here, ScriptedApprover([Approval("reject", "keep old.txt")]),
                     reply("understood"))
    assert run(loop).text == "understood"
    assert (here / "old.txt").exists()
    assert "deleted old.txt" in result_of(loop) and "keep old.txt" in result_of(loop)


def test_it_remembers_nothing_and_no_earlier_answer_settles_it(here):
    """A rule kept from it would let any later command or tool make the change
    unasked; and an answer given meanwhile (a subagent's "always") does not answer
    it -- a conflict's requests are all allowed, and must still be asked."""
    seen: list[bool] = []

    class Meanwhile(ScriptedApprover):
        async def approve(self, request: ApprovalRequest) -> Approval:
            loop.rt.approvals.remember("build", [Rule("delete", "**", "allow")], save=False,
                                       note="another question's answer")
            seen.append(request.settled())
            return await super().approve(request)

    approver = Meanwhile(["always"])
    loop = make_loop(here, approver, reply("done"))
    run(loop)
    assert seen == [False]
    assert approver.asked[0].suggestions == ()
    assert not (here / "old.txt").exists()                     # "always" applied it
    assert [r.pattern for r in loop.rt.approvals.rules("build")] == ["**"]   # and kept nothing
