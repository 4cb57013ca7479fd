"""The loop records who decided each call; a log it cannot write is told once."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from support.requests import Request

from dm_cc.compose import open_world
from dm_cc.core.approval import Approval, ScriptedApprover
from dm_cc.core.audit import decided_by
from dm_cc.core.events import Notice
from dm_cc.core.loop import Loop
from dm_cc.llm.scripted import ScriptedModel, call, calls, reply
from dm_cc.permissions import Decision, Rule
from dm_cc.permissions.gate import Verdict
from dm_cc.session.audit import AuditLog


def make_loop(project: Path, model, approver, events: list, audit: AuditLog | None = None) -> Loop:
    world = open_world(cwd=project)
    if audit is not None:
        world.audit = audit   # a log set up to fail, where the World's would be
    return world.open_loop(approver, model=model, on_event=events.append)


def run(loop: Loop, prompt: str) -> None:
    asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def recorded(project: Path) -> list[dict]:
    return [record for _n, record in open_world(cwd=project).audit.records()]


def test_person_answers_and_the_approvals_they_leave(project):
    (project / "a.txt").write_text("a")
    model = ScriptedModel([
        call("write", path="one.txt", content="1"),     # asked: once
        call("write", path="two.txt", content="2"),     # asked: session
        call("write", path="two.txt", content="2b"),    # the session approval allows it
        call("write", path="three.txt", content="3"),   # asked: always (saved)
        call("write", path="three.txt", content="3b"),  # the saved approval allows it
        call("write", path="four.txt", content="4"),    # asked: rejected with feedback
        reply("done"),
    ])
    approver = ScriptedApprover(["once", "session", "always", Approval("reject", "not that")])
    loop = make_loop(project, model, approver, [])
    run(loop, "write")
    records = recorded(project)
    assert [(r["input"], r["decided_by"], r["decision"]) for r in records] == [
        ("one.txt", "person_once", "allow"),
        ("two.txt", "person_session", "allow"),
        ("two.txt", "session_approval", "allow"),
        ("three.txt", "person_always", "allow"),
        ("three.txt", "saved_approval", "allow"),
        ("four.txt", "person_reject", "deny"),
    ]
    assert records[4]["requests"][0]["source"].startswith("approval:apr_")
    assert records[5]["feedback"] == "not that" and records[5]["gate"] == "ask"
    assert open_world(cwd=project).audit.verify().broken is None


def test_a_log_that_cannot_be_written_is_told_once_and_the_session_goes_on(project, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    log = AuditLog(blocker / "audit" / "p.jsonl")
    model = ScriptedModel([call("read", path="x"), call("read", path="y"), reply("done")])
    events: list = []
    run(make_loop(project, model, ScriptedApprover(), events, log), "read")
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "audit log not written" in notices[0]
    assert log.failed == 2
    log.path = tmp_path / "fine.jsonl"  # writable again: the loss is told
    log.head_path = tmp_path / "fine.jsonl.head"
    log.lock_path = tmp_path / "fine.jsonl.lock"
    events.clear()
    run(make_loop(project, ScriptedModel([call("read", path="z"), reply("ok")]),
                  ScriptedApprover(), events, log), "again")
    assert [e.text for e in events if isinstance(e, Notice)] == [
        "audit log written again; 2 decisions before this one were not recorded."]


def test_a_hook_verdict_is_credited_to_the_hook():
    request = Request("bash", "make deploy")
    hook = Verdict(request, Rule("bash", "*", "deny", source="hook:/etc/dm_cc/check"), "deny",
                   "make deploy", layer="hook")
    assert decided_by(Decision("deny", (hook,))) == "hook"
    rule = Verdict(request, Rule("bash", "make *", "deny", source="p.yaml:3"), "deny",
                   "make deploy", layer="project")
    assert decided_by(Decision("deny", (rule,))) == "rule"
    assert decided_by(Decision("ask", (rule,)), Approval("reject", by="headless")) == \
        "headless_default"


class Waiting:
    """An approver whose person never answers."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def approve(self, request):
        self.asked.set()
        await asyncio.Event().wait()


def test_a_question_left_open_by_a_cancelled_turn_is_recorded(project):
    approver = Waiting()
    loop = make_loop(project, ScriptedModel([call("write", path="a.txt", content="x"),
                                             reply("x")]), approver, [])

    async def cancel_while_asking() -> None:
        turn = asyncio.ensure_future(loop.run("go"))
        await asyncio.wait_for(approver.asked.wait(), timeout=30)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn

    asyncio.run(cancel_while_asking())
    [record] = recorded(project)
    assert (record["input"], record["decision"], record["decided_by"], record["answer"]) == (
        "a.txt", "deny", "cancelled", "cancel")


def test_each_decision_goes_to_the_listeners_as_the_audit_log_keeps_it(project):
    """The telemetry exporter is a listener of this one record (Runtime.decisions);
    what a listener returns is told as a notice."""
    from dm_cc.session.telemetry import attributes

    heard: list[dict] = []

    def listener(record: dict) -> str | None:
        heard.append(record)
        return "collector down" if len(heard) == 2 else None

    model = ScriptedModel([call("write", path="one.txt", content="1"),
                           call("write", path="two.txt", content="2"), reply("done")])
    world = open_world(cwd=project)
    world.telemetry = listener      # where the World's exporter would be
    events: list = []
    loop = world.open_loop(ScriptedApprover(["once", Approval("reject", "")]), model=model,
                           on_event=events.append)
    run(loop, "write")
    kept = [{k: v for k, v in r.items() if k not in ("seq", "prev")} for r in recorded(project)]
    assert heard == kept and len(heard) == 2
    assert [e.text for e in events if isinstance(e, Notice)] == ["collector down"]
    assert [(attributes(r)["decision"], attributes(r)["source"]) for r in heard] == [
        ("accept", "user_temporary"), ("reject", "user_reject")]


WRITES = """\
rules:
  - {permission: edit, pattern: "*.txt", action: allow}
  - {permission: edit, pattern: "secret.txt", action: deny}
"""


def test_a_replys_decisions_are_on_disk_before_its_calls_act_with_one_sync(project,
                                                                          monkeypatch):
    """Write-ahead, grouped: the reply's three calls are each recorded, then one
    fdatasync makes them durable before the first of them writes its file; a denied
    call's record is synced at the reply's end, and the head then covers them all."""
    from support.trust import trusted_policy

    trusted_policy(project, WRITES)
    log = open_world(cwd=project).audit
    run(make_loop(project, ScriptedModel([call("read", path="x"), reply("ok")]),
                  ScriptedApprover(), []), "first")      # the log and its head exist
    names = ["a.txt", "b.txt", "c.txt"]
    seen: list[tuple[int, list[bool]]] = []
    real = os.fdatasync

    def watching(fd: int) -> None:
        records = log.path.read_bytes().count(b"\n")
        seen.append((records, [(project / name).exists() for name in names]))
        real(fd)

    monkeypatch.setattr(os, "fdatasync", watching)
    model = ScriptedModel([calls(*[("write", {"path": name, "content": name}) for name in names]),
                           call("write", path="secret.txt", content="x"), reply("done")])
    run(make_loop(project, model, ScriptedApprover(), []), "write")
    assert seen == [(4, [False, False, False]),   # one sync, all three records, no file yet
                    (5, [True, True, True])]       # the denial's, at the end of its reply
    assert all((project / name).exists() for name in names)
    result = log.verify()
    assert result.broken is None and result.records == 5 and not result.notes


def many_requests(count: int, action: str = "allow") -> Decision:
    """A command's decision with ``count`` requests: the bash one, then one read per
    file, the last of them denied when ``action`` is deny."""
    rule = Rule("read", "*", "allow", source="builtin:defaults")
    verdicts = [Verdict(Request("bash", "cat " + " ".join(f"f{i}" for i in range(count - 1))),
                        Rule("bash", "cat *", "allow", source="p.yaml:2"), "allow", "cat",
                        layer="project")]
    verdicts += [Verdict(Request("read", f"f{i}"), rule, "allow", f"f{i}", layer="builtin")
                 for i in range(count - 1)]
    if action == "deny":
        verdicts[-1] = Verdict(verdicts[-1].request, Rule("read", "f*", "deny", source="p.yaml:3"),
                               "deny", verdicts[-1].name, layer="project")
    return Decision(action, tuple(verdicts))


def test_a_call_with_thousands_of_requests_gets_a_bounded_record(project):
    """The record lists at most SHOWN requests (the deciding ones among them), counts
    them per verdict, and the log keeps the whole list once, beside it."""
    from dm_cc.core import audit
    from dm_cc.session import ToolCall

    actor = audit.Actor(str(project), "ses_1", "ses_1", "build")
    sizes = []
    for count in (300, 3000):
        decision = many_requests(count, "deny")
        entry = audit.record(actor, ToolCall("call_1", "bash", {"command": "cat"}), "cat",
                             decision)
        assert entry["requests_total"] == count
        assert entry["requests_by_verdict"] == {"allow": count - 1, "ask": 0, "deny": 1}
        assert len(entry["requests"]) == audit.SHOWN
        assert entry["requests"][-1]["index"] == count - 1           # the deciding one
        assert entry["requests"][-1]["decision"] == "deny"
        assert [r["index"] for r in entry["requests"][:-1]] == list(range(audit.SHOWN - 1))
        sizes.append(len(json.dumps(entry)) - len(entry["requests"][0]["pattern"]))
        full = audit.full_requests(decision)
        assert full is not None and len(full) == count
    assert sizes[1] < sizes[0] * 1.2                 # bounded: not 10x for 10x the requests
    few = many_requests(audit.FULL_UP_TO)
    entry = audit.record(actor, ToolCall("call_2", "bash", {"command": "cat"}), "cat", few)
    assert len(entry["requests"]) == audit.FULL_UP_TO and "requests_total" not in entry
    assert audit.full_requests(few) is None
