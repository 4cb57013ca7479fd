"""``dm_cc policy check|explain|show|test`` decide with the project's saved approvals,
as a session does, say so and which approval decided; ``--no-approvals`` judges the
policy alone (issue 23, item 6)."""

from __future__ import annotations

import json
import textwrap
import time

from support.trust import trust_project

from dm_cc.compose import open_world


def save(project, permission: str, pattern: str, agent: str = "build") -> str:
    return open_world(cwd=project).approvals.add(permission, pattern, agent=agent,
                                                 note="approved for bash in session ses_1").id


def test_check_counts_a_saved_approval_and_names_it(project, cli):
    code, out, _ = cli("policy", "check", "bash", "npm test -q")
    assert code == 0 and out.startswith("ask: bash 'npm test -q'") and "saved approval" not in out
    approval = save(project, "bash", "npm test *")
    today = time.strftime("%Y-%m-%d")
    code, out, _ = cli("policy", "check", "bash", "npm test -q")
    assert out.startswith("allow: bash 'npm test -q' (agent build)")
    assert "counted 1 saved approval of agent build" in out and "--no-approvals" in out
    assert (f"rule: allow bash 'npm test *' (approval:{approval}): saved {today}: approved for "
            "bash in session ses_1  [layer approvals]") in out
    assert (f"← saved approval {approval} decided: dm_cc approvals revoke {approval} takes it "
            "back") in out
    code, out, _ = cli("policy", "check", "bash", "npm test -q", "--no-approvals")
    assert out.startswith("ask: ") and approval not in out and "counted" not in out


def test_check_json_says_which_approval_decided(project, cli):
    approval = save(project, "bash", "npm test *")
    _, out, _ = cli("policy", "check", "--json", "bash", "npm test -q")
    data = json.loads(out)
    assert data["decision"] == "allow" and data["approvals"] == 1
    (request,) = data["requests"]
    assert request["decided_by"] == "approval" and request["approval"] == approval
    _, out, _ = cli("policy", "check", "--json", "--no-approvals", "bash", "npm test -q")
    data = json.loads(out)
    assert (data["decision"], data["approvals"]) == ("ask", "left out")
    assert "decided_by" not in data["requests"][0]


def test_an_approval_never_beats_a_configured_deny_here_either(project, cli):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        'rules:\n  - {permission: bash, pattern: "git push *", action: deny}\n')
    trust_project(project)
    save(project, "bash", "git *")
    code, out, _ = cli("policy", "check", "bash", "git push origin main")
    assert out.startswith("deny: ") and "decided: dm_cc approvals revoke" not in out


def test_approvals_count_per_agent_and_bound_a_subagent(project, cli):
    save(project, "bash", "make *", agent="plan")
    _, out, _ = cli("policy", "check", "bash", "make")
    assert out.startswith("ask: ")                     # build's own: none
    _, out, _ = cli("policy", "check", "--agent", "general", "--under", "build", "bash", "make")
    assert out.startswith("ask: ")
    save(project, "bash", "make *", agent="general")
    _, out, _ = cli("policy", "check", "--agent", "general", "--under", "build", "bash", "make")
    assert out.startswith("allow: ")   # the child's answer counts in its parent's bound too


def test_explain_and_show_include_the_approvals_layer(project, cli):
    approval = save(project, "bash", "npm test *")
    _, out, _ = cli("policy", "explain", "bash", "npm test")
    assert out.startswith("bash 'npm test' under agent build: allow")
    assert f"match allow bash 'npm test *' [approval:{approval}]  <- decides" in out
    _, out, _ = cli("policy", "explain", "--no-approvals", "bash", "npm test")
    assert approval not in out and "counted" not in out
    _, out, _ = cli("policy", "show")
    assert "the [approvals] layer holds them" in out
    section = out[out.index("\n[approvals]") + 1:].splitlines()
    assert section[0] == "[approvals]"
    assert "'npm test *'" in section[1] and approval in section[1]
    _, out, _ = cli("policy", "show", "--no-approvals")
    assert "[approvals]" not in out
    _, out, _ = cli("policy", "show", "--json")
    assert {"layer": "approvals", "permission": "bash", "pattern": "npm test *",
            "action": "allow", "source": f"approval:{approval}",
            "reason": f"saved {time.strftime('%Y-%m-%d')}: approved for bash in session ses_1"} \
        in json.loads(out)["rules"]


def test_inline_tests_run_with_the_approvals_and_say_so(project, cli):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(textwrap.dedent("""\
        tests:
          - {tool: bash, input: "npm test", expect: ask}
          - {tool: bash, input: "ls", expect: allow}
        """))
    trust_project(project)
    assert cli("policy", "test")[0] == 0
    save(project, "bash", "npm test *")
    code, out, _ = cli("policy", "test")
    assert code == 1 and "FAIL .dm_cc/policy.yaml:2: bash 'npm test': expected ask, got allow" in out
    assert ("1 failed as decided by saved approvals of this project (dm_cc approvals list); "
            "--no-approvals tests the policy alone") in out
    code, out, _ = cli("policy", "test", "--no-approvals")
    assert code == 0 and "2 passed, 0 failed" in out


def test_a_damaged_store_is_reported_and_the_policy_judged_alone(project, cli):
    save(project, "bash", "npm test *")
    path = open_world(cwd=project).approvals.path
    path.write_text("{not json")
    code, out, err = cli("policy", "check", "bash", "npm test")
    assert code == 0 and out.startswith("ask: ")
    assert "saved approvals not counted" in err and "moved aside" in err
