"""Decision hooks (dm_cc/core/hooks.py): real hook scripts run with this Python,
their answers combined with the rules' verdicts by strictness."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from support.requests import Request

from dm_cc.core.hooks import CallFacts, HookAnswer, combined, consult_hooks
from dm_cc.permissions import Gate, Layer, Rule, Verdict
from dm_cc.permissions.rules import STRICTNESS
from dm_cc.policy.hooks import Hook

FACTS = CallFacts("bash", "git push", {"command": "git push"}, "build", "s1", "/")


def script(tmp_path: Path, name: str, body: str) -> tuple[str, ...]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return (sys.executable, str(path))


def hook(command: tuple[str, ...], *, permission: str = "bash", pattern: str = "*",
         timeout: float = 5, layer: str = "user") -> Hook:
    return Hook(permission, pattern, command, timeout, "policy.yaml:7", layer)


def answering(tmp_path: Path, decision: str, reason: str = "because") -> tuple[str, ...]:
    return script(tmp_path, f"answer_{decision}", f"""
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({{"decision": {decision!r}, "reason": {reason!r}}}))
    """)


def decide(command: str, rules: list[Rule], hooks: list[Hook], failure: str = "ask",
           layers: list[Layer] | None = None):
    gate = Gate(layers or [Layer("user", tuple(rules))])
    decision = gate.decide([Request("bash", command)])
    return asyncio.run(consult_hooks(decision, hooks, gate, FACTS, failure=failure))  # type: ignore[arg-type]


ALLOW_GIT = [Rule("bash", "git *", "allow", source="policy.yaml:2")]


def test_a_hook_denies_what_the_rules_allow_and_says_why(tmp_path):
    decision = decide("git push", ALLOW_GIT, [hook(answering(tmp_path, "deny", "no pushes"))])
    assert decision.action == "deny"
    verdict = decision.verdicts[0]
    assert verdict.layer == "hook"
    assert verdict.rule.reason == "no pushes"
    assert verdict.rule.source.startswith("hook ") and "(policy.yaml:7)" in verdict.rule.source
    assert "the rules said allow" in (verdict.note or "")


def test_the_hook_reads_the_request_and_the_rules_verdict_on_stdin(tmp_path):
    seen = tmp_path / "seen.json"
    command = script(tmp_path, "record", f"""
        import json, sys
        data = json.load(sys.stdin)
        open({str(seen)!r}, "w").write(json.dumps(data))
        print('{{"decision": "abstain"}}')
    """)
    decide("git push", ALLOW_GIT, [hook(command)])
    import json

    data = json.loads(seen.read_text())
    assert data["permission"] == "bash" and data["pattern"] == "git push"
    assert data["tool"] == "bash" and data["arguments"] == {"command": "git push"}
    assert data["agent"] == "build" and data["session"] == "s1" and data["cwd"] == "/"
    assert data["rules"]["decision"] == "allow"
    assert data["rules"]["rule"]["source"] == "policy.yaml:2"


def test_only_hooks_whose_permission_and_pattern_match_run(tmp_path):
    marker = tmp_path / "ran"
    command = script(tmp_path, "mark", f"""
        open({str(marker)!r}, "w").write("x")
        print('{{"decision": "deny"}}')
    """)
    decision = decide("git status", ALLOW_GIT, [hook(command, pattern="git push *"),
                                                hook(command, permission="edit")])
    assert decision.action == "allow" and not marker.exists()
    # a deny-style match: other flag spellings of the pattern meet it too
    decision = decide("git -C sub push", ALLOW_GIT, [hook(command, pattern="git push *")])
    assert decision.action == "deny" and marker.exists()


def test_abstain_changes_nothing_but_is_told(tmp_path):
    decision = decide("git push", ALLOW_GIT, [hook(answering(tmp_path, "abstain"))])
    assert decision.action == "allow"
    verdict = decision.verdicts[0]
    assert verdict.layer == "user" and "answered abstain" in (verdict.note or "")


def test_a_trusted_hook_turns_an_ask_into_allow(tmp_path):
    decision = decide("make", [], [hook(answering(tmp_path, "allow", "builds are fine"))])
    assert decision.action == "allow"
    assert decision.verdicts[0].layer == "hook"
    assert "the rules said ask" in (decision.verdicts[0].note or "")


def test_an_untrusted_hook_cannot_allow_what_asks(tmp_path):
    decision = decide("make", [], [hook(answering(tmp_path, "allow"), layer="project")])
    assert decision.action == "ask"


def test_a_hook_never_beats_a_configured_deny(tmp_path):
    rules = [Rule("bash", "make *", "deny", source="policy.yaml:3")]
    decision = decide("make", rules, [hook(answering(tmp_path, "allow"))])
    assert decision.action == "deny" and decision.verdicts[0].layer == "user"


def test_a_hook_never_beats_a_managed_ask(tmp_path):
    layers = [Layer("managed", (Rule("bash", "make *", "ask", source="m.yaml:1"),), binding=True),
              Layer("user", ())]
    decision = decide("make", [], [hook(answering(tmp_path, "allow"))], layers=layers)
    assert decision.action == "ask"
    assert "managed rule decided it" in (decision.verdicts[0].note or "")


def test_a_hook_never_allows_what_cannot_be_judged_statically(tmp_path):
    gate = Gate([Layer("user", ())])
    request = Request("bash", "$CMD", allowable=False, note="built from a variable")
    decision = asyncio.run(consult_hooks(gate.decide([request]), [hook(answering(tmp_path, "allow"))],
                                   gate, FACTS))
    assert decision.action == "ask"


def test_another_hooks_ask_keeps_the_ask(tmp_path):
    hooks = [hook(answering(tmp_path, "allow")), hook(answering(tmp_path, "ask"))]
    assert decide("make", [], hooks).action == "ask"


def test_a_failing_hook_counts_as_ask_or_headless_deny_with_the_reason(tmp_path):
    command = script(tmp_path, "crash", """
        import sys
        sys.stderr.write("boom: no config\\n")
        sys.exit(3)
    """)
    decision = decide("git push", ALLOW_GIT, [hook(command)])
    assert decision.action == "ask"
    reason = decision.verdicts[0].rule.reason or ""
    assert "exit status 3" in reason and "boom: no config" in reason
    assert decide("git push", ALLOW_GIT, [hook(command)], failure="deny").action == "deny"


def test_a_hook_that_cannot_start_counts_as_ask(tmp_path):
    decision = decide("git push", ALLOW_GIT, [hook((str(tmp_path / "missing"),))])
    assert decision.action == "ask"
    assert "could not start" in (decision.verdicts[0].rule.reason or "")


def test_garbage_counts_as_ask(tmp_path):
    for body in ('print("yes")', 'print(\'{"decision": "maybe"}\')', "pass",
                 'print(\'{"decision": "allow", "reason": 3}\')'):
        command = script(tmp_path, "garbage", body)
        decision = decide("git push", ALLOW_GIT, [hook(command)])
        assert decision.action == "ask", body
        assert "not an answer" in (decision.verdicts[0].rule.reason or "")


def test_a_hook_that_times_out_is_killed_with_its_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    command = script(tmp_path, "slow", f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
    """)
    started = time.monotonic()
    decision = decide("git push", ALLOW_GIT, [hook(command, timeout=1)])
    assert time.monotonic() - started < 10
    assert decision.action == "ask"
    assert "no answer within 1 s" in (decision.verdicts[0].rule.reason or "")
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by whoever adopted it) is dead
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_hooks_of_a_call_run_concurrently(tmp_path):
    command = script(tmp_path, "nap", """
        import json, sys, time
        json.load(sys.stdin)
        time.sleep(1)
        print('{"decision": "abstain"}')
    """)
    gate = Gate([Layer("user", tuple(ALLOW_GIT))])
    requests = [Request("bash", f"git log -{n}") for n in range(4)]
    started = time.monotonic()
    asyncio.run(consult_hooks(gate.decide(requests), [hook(command)], gate, FACTS))
    assert time.monotonic() - started < 3


# ---------------------------------------------------------------------- the property

ACTION = st.sampled_from(["allow", "ask", "deny"])
ANSWER = st.tuples(st.sampled_from(["allow", "ask", "deny", "abstain"]),
                   st.sampled_from(["user", "managed", "--policy", "project", ""]),
                   st.booleans())


@given(ACTION, st.lists(ANSWER, max_size=4), st.booleans(), st.sampled_from(["user", "managed"]),
       st.booleans())
def test_a_hook_loosens_only_a_loosenable_ask_and_only_when_trusted(
        action, answers, allowable, layer, noted):
    request = Request("bash", "x", allowable=allowable)
    rules_verdict = Verdict(request, Rule("bash", "*", action), action, "x",
                            "a ceiling applies" if noted else None, layer)
    found = [HookAnswer(Hook("bash", "*", ("h",), layer=hook_layer), decision, None, failed)
             for decision, hook_layer, failed in answers]
    result = combined(rules_verdict, found, frozenset({"managed"}))
    if STRICTNESS[result.action] < STRICTNESS[action]:
        assert action == "ask" and result.action == "allow"
        assert allowable and not noted and layer != "managed"
        assert any(a.hook.layer in {"user", "managed", "--policy"} and a.decision == "allow"
                   for a in found)
        assert all(a.decision in ("allow", "abstain") for a in found)
    stricter = [a.decision for a in found if a.decision in STRICTNESS]
    assert STRICTNESS[result.action] >= max((STRICTNESS[d] for d in stricter), default=0)


# ---------------------------------------------------------------------- in the loop

def test_a_hooks_ask_is_put_to_the_person_and_an_earlier_answer_does_not_settle_it(
        project, tmp_path):
    import json

    from dm_cc.compose import Options, open_world
    from dm_cc.core.approval import ScriptedApprover
    from dm_cc.llm.scripted import ScriptedModel, call, reply

    team = tmp_path / "team.yaml"
    command = json.dumps(list(answering(tmp_path, "ask", "a person should look")))
    team.write_text("rules:\n  - {permission: read, pattern: '**', action: allow}\n"
                    f"hooks:\n  - {{permission: read, pattern: 'notes.txt', command: {command}}}\n")
    (project / "notes.txt").write_text("hello\n")
    world = open_world(Options(policies=(str(team),)), cwd=project)
    approver = ScriptedApprover(["once"])
    loop = world.open_loop(approver, model=ScriptedModel([call("read", path="notes.txt"),
                                                          reply("done")]))
    asyncio.run(asyncio.wait_for(loop.run("read it"), timeout=30))
    [asked] = approver.asked
    assert asked.decision.action == "ask"
    verdict = asked.decision.verdicts[0]
    assert verdict.layer == "hook" and verdict.rule.reason == "a person should look"
    assert not asked.settled()          # the rules allow it; the hook still asks
    assert asked.suggestions == ()      # "always" could not silence the hook
    assert "hello" in loop.session.messages[-2].content


def test_a_policy_read_again_mid_session_brings_its_hooks_with_its_rules(project, tmp_path):
    """What ``/permissions`` does after a change (the World reads the policy again,
    the session's rights decide with it): a hook the person added to their own file
    meanwhile is consulted from the next call on, in the session and its subagents."""
    import json

    from support.policy import my_policy

    from dm_cc.compose import open_world
    from dm_cc.core.approval import HeadlessApprover
    from dm_cc.llm.scripted import ScriptedModel, call, reply

    rules = "  - {permission: read, pattern: '**', action: allow}\n"
    my_policy(rules)
    (project / "notes.txt").write_text("hello\n")
    world = open_world(cwd=project)
    loop = world.open_loop(HeadlessApprover("deny"), model=ScriptedModel([
        call("read", path="notes.txt"), reply("read"),
        call("read", path="notes.txt"), reply("denied")]))
    asyncio.run(asyncio.wait_for(loop.run("read it"), timeout=30))
    assert "hello" in loop.session.messages[-2].content
    command = json.dumps(list(answering(tmp_path, "deny", "notes are private now")))
    my_policy(rules + f"hooks:\n  - {{permission: read, pattern: 'notes.txt', command: {command}}}\n")
    world.reload_policy()
    loop.rights.policy = world.in_force
    asyncio.run(asyncio.wait_for(loop.run("read it again"), timeout=30))
    told = loop.session.messages[-2]
    assert told.is_error and "notes are private now" in told.content, told.content
