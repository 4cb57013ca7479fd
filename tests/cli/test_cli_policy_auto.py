"""``dm_cc policy check|explain|show`` in auto mode: the decision as it will happen
where commands run as transactions ("allow — runs confined, effects judged"), what
it is elsewhere, and the auto layer listed -- without trying bubblewrap."""

from __future__ import annotations

import json
import textwrap

import pytest

from dm_cc.cli import main
from dm_cc.sandbox import host


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)

    def no_probe(*args: object) -> object:
        raise AssertionError("dm_cc policy … tried bubblewrap")

    monkeypatch.setattr(host, "availability", no_probe)
    return project


def run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_check_shows_the_decision_as_it_will_happen(project, capsys):
    out = run(capsys, "policy", "check", "--policy", "builtin:auto", "bash", "npm install")
    assert out.splitlines()[:2] == [
        "allow — runs confined, effects judged: bash 'npm install' (agent build)",
        "  (where commands run as transactions; otherwise ask)"]
    assert "[layer auto]" in out and "builtin:auto:" in out


def test_check_for_the_auto_agent_says_it_would_otherwise_ask_as_build(project, capsys):
    out = run(capsys, "policy", "check", "--agent", "auto", "bash", "npm install")
    assert out.splitlines()[:2] == [
        "allow — runs confined, effects judged: bash 'npm install' (agent auto)",
        "  (where commands run as transactions; otherwise ask, as in build)"]
    out = run(capsys, "policy", "check", "--agent", "auto", "edit", "src/app.py")
    assert out.startswith("allow — undo covers it: edit 'src/app.py' (agent auto)\n")
    # a command that writes a file: the command's words
    out = run(capsys, "policy", "check", "--agent", "auto", "bash", "echo x > notes.txt")
    assert out.startswith("allow — runs confined, effects judged: ")


def test_check_says_nothing_of_auto_mode_where_it_changes_nothing(project, capsys):
    out = run(capsys, "policy", "check", "--agent", "auto", "bash", "git status")
    assert out.startswith("allow: bash 'git status' (agent auto)\n")    # build allows it too
    assert "transactions" not in out
    for call in (("edit", ".envrc"), ("bash", "rm -rf /"), ("read", ".env")):
        out = run(capsys, "policy", "check", "--agent", "auto", *call)
        assert out.split(":")[0] in ("ask", "deny") and "transactions" not in out, out


def test_check_json_says_what_auto_mode_does(project, capsys):
    out = run(capsys, "policy", "check", "--agent", "auto", "--json", "bash", "npm install")
    data = json.loads(out)
    assert data["decision"] == "allow"
    assert data["auto_mode"] == {"means": "runs confined, effects judged",
                                 "without_transactions": "ask"}
    data = json.loads(run(capsys, "policy", "check", "--json", "bash", "npm install"))
    assert data["decision"] == "ask" and "auto_mode" not in data


def test_check_assumes_transactions_even_where_the_sandbox_is_off(project, capsys, tmp_path):
    config = tmp_path / "dmhome" / "config" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text('sandbox: "off"\n')
    out = run(capsys, "policy", "check", "--agent", "auto", "bash", "npm install")
    assert out.startswith("allow — runs confined, effects judged")


def test_a_users_deny_still_denies_under_builtin_auto(project, capsys, tmp_path):
    policy = tmp_path / "dmhome" / "config" / "policy.yaml"
    policy.parent.mkdir(parents=True)
    policy.write_text(textwrap.dedent("""
        rules:
          - {permission: bash, pattern: "rm *", action: deny, reason: "no deletes"}
    """))
    out = run(capsys, "policy", "check", "--policy", "builtin:auto", "bash", "rm -rf build")
    assert out.startswith("deny: bash 'rm -rf build'") and "no deletes" in out


def test_check_says_a_commands_removal_only_a_catch_all_asks_about_lands(project, capsys,
                                                                        tmp_path):
    """``delete`` is a command's removal alone: where only a catch-all asks, it lands
    (core/effects.py lifts that ask), so check says allow; a ``delete`` rule, a
    protected path, a deny keep their word. ``edit`` asks (the edit tool), and says
    what becomes of a command's change."""
    out = run(capsys, "policy", "check", "delete", "build/x")
    assert out.splitlines()[:2] == [
        "allow: delete 'build/x' (agent build)",
        "  (the rules say ask, but only a catch-all rule asks: a command's removal of it "
        "lands without a question, as its other changes do)"]
    data = json.loads(run(capsys, "policy", "check", "--json", "delete", "build/x"))
    assert data["decision"] == "ask" and data["as_a_command_change"] == "allow"
    out = run(capsys, "policy", "check", "edit", "src/a.py")
    assert out.splitlines()[:2] == [
        "ask: edit 'src/a.py' (agent build)",
        "  (only a catch-all rule asks: a command's change of it lands without a question, "
        "as its other changes do)"]
    out = run(capsys, "policy", "check", "delete", ".envrc")            # protected
    assert out.startswith("ask: delete '.envrc'") and "lands" not in out
    policy = tmp_path / "dmhome" / "config" / "policy.yaml"
    policy.parent.mkdir(parents=True)
    policy.write_text(textwrap.dedent("""
        rules:
          - {permission: delete, pattern: "build/**", action: ask}
          - {permission: delete, pattern: "keep/**", action: deny}
    """))
    for path, said in (("build/x", "ask"), ("keep/a", "deny")):
        out = run(capsys, "policy", "check", "delete", path)
        assert out.startswith(f"{said}: delete '{path}'") and "lands" not in out, out
    assert json.loads(run(capsys, "policy", "check", "--json", "delete", "build/x")).keys() \
        .isdisjoint({"as_a_command_change"})


def test_explain_and_show(project, capsys):
    out = run(capsys, "policy", "explain", "--agent", "auto", "bash", "npm test")
    assert out.splitlines()[0] == (
        "bash 'npm test' under agent auto: allow — runs confined, effects judged (where "
        "commands run as transactions; otherwise ask, as in build)")
    out = run(capsys, "policy", "show", "--agent", "auto")
    assert "\n[auto] (where commands run as transactions; like an approval, it turns an ask " \
           "into an allow, never a configured deny nor a managed rule)\n" in out
    assert "allow bash         '*'" in out.split("[auto]")[1]
    assert "[auto]" not in run(capsys, "policy", "show", "--agent", "build")
    data = json.loads(run(capsys, "policy", "show", "--agent", "auto", "--json"))
    assert [(r["permission"], r["pattern"]) for r in data["rules"] if r["layer"] == "auto"] == [
        ("bash", "*"), ("edit", "**")]


def test_the_shipped_auto_policy_is_listed(project, capsys):
    out = run(capsys, "policy", "builtin")
    assert "builtin:auto " in out and "commands run confined without asking" in out
