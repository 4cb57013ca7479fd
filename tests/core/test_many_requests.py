"""One call with thousands of requests through the real loop (issue 26): decided as
before, in time linear in its requests -- counted in gate judgements, not timed, so it
cannot flake -- and, headless, without building the "always" suggestions nobody
would answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dm_cc.compose import open_world
from dm_cc.core import settle
from dm_cc.core.approval import (
    HEADLESS_FEEDBACK,
    Approval,
    HeadlessApprover,
    ScriptedApprover,
    suggested_rules,
)
from dm_cc.core.hooks import HOOKS_AT_ONCE, CallFacts, consult_hooks
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.permissions import Request, Rule
from dm_cc.permissions.gate import Gate, Layer
from dm_cc.policy.hooks import Hook
from dm_cc.tools.catalog import input_requests

BOUND = 120     # seconds: generous; what is checked is the count of judgements


def removing(count: int) -> str:
    """``rm 0 1 … ``: one bash request and one edit request per operand, every one asks."""
    return "rm " + " ".join(f"{i:x}" for i in range(count))


class Counted:
    """Gate.judge, counted: every judgement of a request (ceilings' too)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.judged = 0
        judge = Gate.judge

        def counting(gate: Gate, request):
            self.judged += 1
            return judge(gate, request)

        monkeypatch.setattr(Gate, "judge", counting)


def through_loop(project: Path, command: str, approver) -> tuple[list, list]:
    """``command`` as one bash call of a fresh loop (the loop a user gets); the
    tool results and the audit records."""
    world = open_world(cwd=project)
    loop = world.open_loop(approver, model=ScriptedModel([call("bash", command=command),
                                                          reply("done")]), fresh=True)
    result = asyncio.run(asyncio.wait_for(loop.run("go"), timeout=BOUND))
    assert result.reason == "done"
    audit = [json.loads(line) for path in sorted((project.parent / "dmhome").rglob("*.jsonl"))
             if "audit" in str(path) for line in path.read_text().splitlines()]
    return [m for m in loop.session.messages if m.role == "tool"], audit


def test_thousands_of_requests_headless_are_denied_in_linear_judgements(project, monkeypatch):
    (project / "a").write_text("kept\n")       # operand 0xa: it must not be removed
    counted = Counted(monkeypatch)
    judged = {}
    for count in (1_000, 4_000):
        counted.judged = 0
        results, audit = through_loop(project, removing(count), HeadlessApprover("deny"))
        judged[count] = counted.judged
        # judged once each, with the ceilings: a few judgements per request, whatever
        # the count (judging each once per suggestion was ~500x that at 1,000)
        assert judged[count] <= 4 * (count + 2)
        assert results[-1].is_error and HEADLESS_FEEDBACK in results[-1].content
        record = audit[-1]
        assert (record["gate"], record["decision"], record["decided_by"]) == \
            ("ask", "deny", "headless_default")
    assert (project / "a").read_text() == "kept\n"
    assert judged[4_000] / judged[1_000] < 6     # quadratic would be 16


def test_headless_builds_no_suggestion(project, monkeypatch):
    built = []
    real = settle.suggested_for

    def counting(requests, tool):
        built.append(tool)
        return real(requests, tool)

    monkeypatch.setattr(settle, "suggested_for", counting)
    results, _audit = through_loop(project, removing(50), HeadlessApprover("deny"))
    assert HEADLESS_FEEDBACK in results[-1].content and built == []
    asked = ScriptedApprover([Approval("reject", "not now")])
    through_loop(project, removing(50), asked)
    assert built == ["bash"] and asked.asked[0].suggestions   # a person is offered them


def test_suggestions_for_a_person_cost_one_judgement_per_request(project, monkeypatch):
    counted = Counted(monkeypatch)
    judged, offered = {}, {}
    for count in (500, 2_000):
        counted.judged = 0
        approver = ScriptedApprover([Approval("reject", "not now")])
        through_loop(project, removing(count), approver)
        judged[count] = counted.judged
        assert judged[count] <= 8 * (count + 1)
        offered[count] = approver.asked[0].suggestions
    # every operand's exact path, and the command: all would allow their request
    assert {rule.pattern for rule in offered[500] if rule.permission == "edit"} == \
        {f"{i:x}" for i in range(500)}
    assert judged[2_000] / judged[500] < 6


# --------------------------------------------------------- the same suggestions as before

POLICY = """\
rules:
  - {permission: bash, pattern: "git push *", action: ask}
  - {permission: read, pattern: "*.pem", action: ask, reason: keys}
"""
MANAGED = """\
rules:
  - {permission: bash, pattern: "git push *", action: ask, reason: reviewed pushes}
  - {permission: edit, pattern: notes.txt, action: ask}
"""

COMMANDS = [
    "git push origin main", "npm run build && npm test", "rm -rf build dist", "cat a.pem b.txt",
    "git push --force origin", "python setup.py install; make",
    "cp a.txt b.txt && mv b.txt c.txt", "curl -o out.html https://example.com/", "cat *.pem",
    "bash -c 'rm x'", "rm x; rm x; rm y", "sed -i s/a/b/ f.txt g.txt", "chmod +x run.sh",
    "git push origin main && npm test", "rm notes.txt other.txt", "mv notes.txt x; rm notes.txt",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_suggestions_are_those_that_allowed_any_request_before(project, command):
    """Each suggestion judged only on the requests it was suggested for offers what
    judging it on every asking request of its permission offered (the old way);
    a managed rule's ask keeps its suggestion out."""
    managed = project.parent / "managed"
    managed.mkdir(exist_ok=True)
    (managed / "policy.yaml").write_text(MANAGED)
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(POLICY)
    from support.trust import trust_project
    trust_project(project)
    world = open_world(cwd=project)
    loop = world.open_loop(ScriptedApprover(), model=ScriptedModel([]))
    rights = loop.rights
    decision = rights.gate().decide(input_requests("bash", command, world.where))
    assert decision.action == "ask"
    asking = [v.request for v in decision.verdicts if v.action == "ask"]
    approvals = rights.approvals.rules(rights.agent.name)

    def covered_before(rule):
        gate = rights.gate_with((*approvals, rule))
        return any(gate.judge(r).action == "allow" for r in asking
                   if r.permission == rule.permission)

    before = tuple(rule for rule in suggested_rules(asking, "bash") if covered_before(rule))
    judged = settle.Judged(call("bash", command=command).tool_calls[0], loop.calls.tools["bash"],
                           loop.calls.tools["bash"].Params(command=command), decision)
    now = loop.settle.question(judged, loop.context()).suggestions
    assert now == before


# ------------------------------------------------------------------ hooks, bounded

def test_hooks_of_a_call_with_many_requests_run_a_few_at_a_time(tmp_path):
    """One hook per request, but never more than HOOKS_AT_ONCE processes at once: each
    answers how many it saw running (a file each in ``running/`` while it sleeps)."""
    running = tmp_path / "running"
    running.mkdir()
    hook_sh = tmp_path / "hook.sh"
    hook_sh.write_text(f"""#!/bin/sh
cat > /dev/null
touch {running}/$$
sleep 0.05
n=$(ls {running} | wc -l)
rm {running}/$$
echo '{{"decision": "abstain", "reason": "'$n'"}}'
""")
    hook_sh.chmod(0o755)
    count = 3 * HOOKS_AT_ONCE
    gate = Gate([Layer("user", (Rule("*", "*", "ask", source="policy.yaml:1"),))])
    decision = gate.decide([Request("edit", f"f{i}") for i in range(count)])
    hooked = asyncio.run(consult_hooks(
        decision, [Hook("edit", "*", (str(hook_sh),), 30, "policy.yaml:2", "user")], gate,
        CallFacts("bash", "rm", {}, "build", "s1", str(tmp_path)), failure="deny"))
    seen = [int(v.note.rsplit("(", 1)[1].rstrip(")")) for v in hooked.verdicts]
    assert [v.action for v in hooked.verdicts] == ["ask"] * count   # every hook answered
    assert max(seen) <= HOOKS_AT_ONCE
