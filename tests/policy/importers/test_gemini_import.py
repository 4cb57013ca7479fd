"""Gemini CLI policy TOML → dm_cc policy: highest priority wins, rewritten as last
match wins; regular expressions and other modes are reported, not guessed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.compose import Options, open_world
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.gemini import gemini_decision, import_gemini, parse_rules
from dm_cc.policy.loader import parse_policy

FIXTURE = Path(__file__).parent / "gemini-policy.toml"


@pytest.fixture
def imported(project, monkeypatch, capsys):
    shutil.copy(FIXTURE, project / "team.toml")
    monkeypatch.chdir(project)
    assert main(["policy", "import", "gemini", "team.toml", "-o", "imported.yaml"]) == 0
    err = capsys.readouterr().err
    for what in ("google_web_search", "commandRegex", "modes ['autoEdit']"):
        assert what in err
    assert "lint:" not in err
    return project / "imported.yaml"


# Gemini CLI's decision (highest priority wins) for each call of the fixture's shape
GEMINI_DECIDES = [
    ("bash", "git status", "allow"),          # 100 beats git's 50
    ("bash", "git diff HEAD", "allow"),
    ("bash", "git push origin main", "ask"),   # git (50) beats any command (10)
    ("bash", "rm -rf build", "deny"),          # 500
    ("bash", "make", "ask"),                   # priority 10: any shell command asks
    ("read", "src/app.py", "allow"),
    ("edit", "src/app.py", "ask"),
]


@pytest.mark.parametrize(("tool", "text", "expect"), GEMINI_DECIDES,
                         ids=[f"{t} {x}" for t, x, _ in GEMINI_DECIDES])
def test_imported_policy_decides_as_gemini(imported, tool, text, expect):
    world = open_world(Options(policies=(str(imported),)), cwd=imported.parent)
    _gate, decision = world.decide(tool, text)
    assert decision.action == expect, [(v.request.pattern, v.rule.describe())
                                       for v in decision.verdicts]


def test_generated_tests_pass_and_lint_is_clean(imported, capsys):
    assert main(["policy", "test", "--policy", str(imported)]) == 0, capsys.readouterr().out
    assert "5 passed, 0 failed" in capsys.readouterr().out
    assert main(["policy", "lint", str(imported)]) == 0, capsys.readouterr().out


def test_bad_toml_names_the_line(tmp_path, capsys):
    source = tmp_path / "bad.toml"
    source.write_text('[[rule]]\ntoolName = "run_shell_command"\ndecision = \n')
    assert main(["policy", "import", "gemini", str(source)]) == 2
    assert f"{source}:3: not valid TOML" in capsys.readouterr().err


WORDS = ["git", "push", "status", "npm", "test", "rm"]     # none a prefix of another
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
rule = st.tuples(st.one_of(st.none(), words), st.sampled_from(["allow", "ask_user", "deny"]),
                 st.integers(0, 3))


@settings(max_examples=300, deadline=None)
@given(rules=st.lists(rule, max_size=6), commands=st.lists(words, min_size=1, max_size=8))
def test_random_rules_decide_as_gemini(tmp_path_factory, rules, commands):
    """Random shell rules with random priorities: the imported rules, last match wins,
    decide every command as Gemini's highest-priority-wins (no rule: ask)."""
    text = "".join(
        "[[rule]]\ntoolName = \"run_shell_command\"\n"
        + (f"commandPrefix = {prefix!r}\n" if prefix else "")
        + f"decision = {decision!r}\npriority = {priority}\n"
        for prefix, decision, priority in rules)
    source = tmp_path_factory.mktemp("gemini") / "p.toml"
    source.write_text(text)
    policy_rules = parse_policy(render_policy(import_gemini(source)), "imported.yaml").rules
    parsed, _ = parse_rules(text, "p.toml")
    for command in commands:
        expected = gemini_decision(parsed, command) or "ask"
        assert evaluate("bash", command, policy_rules).action == expected, (command, text)
