"""Rules added and removed through the world (``/permissions add|remove``): the lint
runs before anything is saved, the policy in force is read again at once, and a
project file the person changes keeps the trust they gave it (and gets no more)."""

from __future__ import annotations

import pytest
from support.requests import Request
from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.config import digest
from dm_cc.core import Approvals
from dm_cc.core.rights import Rights
from dm_cc.errors import PolicyError, UsageError
from dm_cc.policy import NewRule

PROJECT = """\
# the team's rules
rules:
  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible"}
  - {permission: bash, pattern: "npm test *", action: allow}
"""


@pytest.fixture(autouse=True)
def inside(project, monkeypatch):
    """Run where dm_cc runs, so files are named as it names them (.dm_cc/policy.yaml)."""
    project.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(project)


@pytest.fixture
def policy(project):
    path = project / ".dm_cc" / "policy.yaml"
    path.parent.mkdir()
    path.write_text(PROJECT)
    return path


def _decides(world, command: str) -> tuple[str, str]:
    _, decision = world.decide("bash", command)
    return decision.action, decision.deciding[0].rule.source


def test_a_project_rule_decides_at_once_and_the_project_stays_trusted(project, policy):
    trust_project(project)
    world = open_world(cwd=project)
    assert _decides(world, "git status") == ("allow", "builtin:defaults")
    changed = world.add_rule("project", NewRule("ask", "bash", "git status *", "look first"))
    assert changed.saved and not changed.findings
    assert changed.trust == "still trusted: the change is yours"
    assert changed.edit.rule.source == ".dm_cc/policy.yaml:5"
    assert _decides(world, "git status") == ("ask", ".dm_cc/policy.yaml:5")
    assert policy.read_text() == PROJECT + (
        '  - {permission: bash, pattern: "git status *", action: ask, reason: "look first"}\n')
    again = open_world(cwd=project)                  # the next start: trusted as it is now
    assert not again.trust.pending and _decides(again, "npm test x")[0] == "allow"
    assert again.approvals.trusted_files() == {".dm_cc/policy.yaml": digest(policy.read_bytes())}


def test_the_answer_not_now_holds_for_the_persons_own_change(project, policy):
    world = open_world(cwd=project)
    world.answer_trust(False)
    assert not open_world(cwd=project).asks_trust()
    changed = world.add_rule("project", NewRule("deny", "bash", "curl *"))
    assert changed.trust.startswith("not trusted, as you said when asked")
    again = open_world(cwd=project)
    assert not again.asks_trust() and again.trust.pending
    assert _decides(again, "curl x") == ("deny", ".dm_cc/policy.yaml:5")


def test_an_allow_that_would_not_apply_is_refused_before_anything_is_written(project, policy):
    world = open_world(cwd=project)                   # never trusted
    with pytest.raises(UsageError, match="not trusted, so an allow rule in .dm_cc/policy.yaml "
                                         "would not apply"):
        world.add_rule("project", NewRule("allow", "bash", "make *"))
    assert policy.read_text() == PROJECT
    changed = world.add_rule("project", NewRule("ask", "bash", "make *"))   # asks apply anyway
    assert changed.saved and changed.trust.startswith("not trusted: its deny and ask rules")
    assert _decides(world, "make") == ("ask", ".dm_cc/policy.yaml:5")


def test_trust_turned_off_refuses_a_project_allow(project, policy, tmp_path):
    (tmp_path / "managed").mkdir()
    (tmp_path / "managed" / "policy.yaml").write_text("trust_projects: false\n")
    with pytest.raises(UsageError, match="trusting projects is turned off"):
        open_world(cwd=project).add_rule("project", NewRule("allow", "bash", "make *"))
    assert policy.read_text() == PROJECT


def test_a_project_file_the_person_makes_is_trusted(project):
    world = open_world(cwd=project)
    changed = world.add_rule("project", NewRule("allow", "bash", "make *"))
    assert changed.saved and changed.trust == "trusted: you made it"
    assert _decides(world, "make all") == ("allow", ".dm_cc/policy.yaml:3")
    assert not open_world(cwd=project).trust.pending


def test_a_linked_project_policy_is_never_written(project, tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("rules: []\n")
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").symlink_to(outside)
    with pytest.raises(UsageError, match="is a link or lies outside"):
        open_world(cwd=project).add_rule("project", NewRule("deny", "bash", "x"))
    assert outside.read_text() == "rules: []\n"


def test_the_lint_refuses_a_rule_that_would_silence_another_and_nothing_is_saved(project, policy):
    trust_project(project)
    world = open_world(cwd=project)
    user_file = world.rule_file("user")
    changed = world.add_rule("user", NewRule("allow", "bash", "git *"))
    assert not changed.saved and not user_file.exists()
    assert [(f.source, f.kind) for f in changed.findings] == [(".dm_cc/policy.yaml:3", "shadowed")]
    assert f"the broader allow bash 'git *' at {user_file}:3;" in changed.findings[0].message
    again = world.add_rule("project", NewRule("ask", "bash", "git push *"))   # twice the same
    assert not again.saved and [f.kind for f in again.findings] == ["redundant"]
    assert policy.read_text() == PROJECT
    assert _decides(world, "git push origin") == ("ask", ".dm_cc/policy.yaml:3")


def test_what_the_lint_found_before_does_not_stop_a_new_rule(project):
    world = open_world(cwd=project)
    user_file = world.rule_file("user")
    user_file.parent.mkdir(parents=True)
    user_file.write_text('rules:\n  - {permission: read, pattern: "a", action: allow}\n'
                         '  - {permission: read, pattern: "*", action: allow}\n')
    changed = world.add_rule("user", NewRule("deny", "webfetch", "https://evil.example/**"))
    assert changed.saved and changed.findings == []
    assert open_world(cwd=project).policy.user[0].rules[-1].pattern == "https://evil.example/**"


def test_a_rule_is_removed_by_its_number_and_the_policy_read_again(project, policy):
    trust_project(project)
    world = open_world(cwd=project)
    world.add_rule("user", NewRule("deny", "bash", "npm publish *"))
    places = world.editable_rules()
    assert [(p.rule.pattern, p.rule.source.rsplit(":", 1)[1]) for p in places] == [
        ("git push *", "3"), ("npm test *", "4"), ("npm publish *", "3")]
    changed = world.remove_rule(1)
    assert changed.saved and changed.edit.lines == (
        '  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible"}',)
    assert changed.trust == "still trusted: the change is yours"
    assert _decides(world, "git push origin")[0] == "ask"          # the default, no rule now
    assert _decides(world, "npm test")[1] == ".dm_cc/policy.yaml:3"
    with pytest.raises(UsageError, match=r"no rule 9: .* \(1 to 2\)"):
        world.remove_rule(9)
    world.remove_rule(2)
    with pytest.raises(UsageError, match=r"no rule 9: .* \(only 1\)"):
        world.remove_rule(9)
    policy.write_text(PROJECT.replace("npm test", "npm ci"))        # changed by hand since
    with pytest.raises(PolicyError, match="changed since this session read it"):
        world.remove_rule(1)
    assert "npm ci" in policy.read_text()


def test_a_subagent_at_work_follows_the_policy_its_session_reads_again(project, policy):
    trust_project(project)
    world = open_world(cwd=project)
    session = world.sessions.create(world.root, agent="build")
    parent = Rights(world.in_force, world.agents, Approvals(), world.capabilities(), session)
    child = parent.child(world.sessions.create(world.root, parent_id=session.info.id,
                                               agent="general"))
    assert child.gate().decide([Request("bash", "curl x")]).action == "ask"
    world.add_rule("user", NewRule("deny", "bash", "curl *"))
    parent.policy = world.in_force
    assert child.gate().decide([Request("bash", "curl x")]).action == "deny"


def test_a_file_broken_by_hand_meanwhile_is_said_and_the_session_keeps_its_rules(project, policy):
    trust_project(project)
    world = open_world(cwd=project)
    assert _decides(world, "curl x")[0] == "ask"                   # (loaded now)
    user_file = world.rule_file("user")
    user_file.parent.mkdir(parents=True)
    user_file.write_text("rules:\n  - {permission: bash, pattern: x, action: maybe}\n")
    changed = world.add_rule("project", NewRule("deny", "bash", "curl *"))
    assert changed.saved and "policy.yaml:2" in changed.unread
    assert "curl" in policy.read_text()
    assert _decides(world, "curl x")[0] == "ask"                   # the rules it had
    user_file.write_text("rules: []\n")
    world.add_rule("project", NewRule("deny", "bash", "wget *"))
    assert _decides(world, "curl x") == ("deny", ".dm_cc/policy.yaml:5")


def test_a_rule_of_a_projects_policies_file_is_removed_there(project, policy, tmp_path):
    extra = project / ".dm_cc" / "policies" / "ci.yaml"
    extra.parent.mkdir()
    extra.write_text("rules:\n  - {permission: bash, pattern: \"npm publish *\", action: deny}\n")
    trust_project(project)
    world = open_world(cwd=project)
    assert [p.rule.pattern for p in world.editable_rules()][2] == "npm publish *"
    changed = world.remove_rule(3)
    assert changed.saved and extra.read_text() == "rules: []\n"
    assert not open_world(cwd=project).trust.pending        # both files still trusted
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.yaml").write_text(extra.read_text().replace("[]", "[{permission: bash, "
                                                                "pattern: x, action: deny}]"))
    extra.unlink()
    extra.parent.rmdir()
    extra.parent.symlink_to(elsewhere)                        # policies/ leads outside
    with pytest.raises(UsageError, match="is a link or lies outside"):
        open_world(cwd=project).remove_rule(3)
    assert "pattern: x" in (elsewhere / "x.yaml").read_text()
