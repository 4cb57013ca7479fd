"""Codex .rules → dm_cc policy: strictest-wins rewritten as last-match-wins; the
rules' own match/not_match examples become inline tests that pass."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.codex import codex_decision, import_codex, parse_rules
from dm_cc.policy.loader import parse_policy

FIXTURE = Path(__file__).parent / "default.rules"


def test_the_examples_in_the_rules_pass_as_inline_tests(project, monkeypatch, capsys):
    shutil.copy(FIXTURE, project / "default.rules")
    monkeypatch.chdir(project)
    assert main(["policy", "import", "codex", "default.rules", "-o", "imported.yaml"]) == 0
    err = capsys.readouterr().err
    assert "host_executable" in err and "lint:" not in err
    assert main(["policy", "test", "--policy", "imported.yaml"]) == 0, capsys.readouterr().out
    assert "12 passed, 0 failed" in capsys.readouterr().out
    assert main(["policy", "lint", "imported.yaml"]) == 0, capsys.readouterr().out


def test_arguments_are_read_as_data_never_run(tmp_path, capsys):
    source = tmp_path / "evil.rules"
    marker = tmp_path / "ran"
    source.write_text(f'prefix_rule(pattern=[open("{marker}", "w").name])\n')
    assert main(["policy", "import", "codex", str(source)]) == 2
    assert f"{source}:1: prefix_rule: pattern must be a literal" in capsys.readouterr().err
    assert not marker.exists()


def test_a_syntax_error_names_the_line(tmp_path, capsys):
    source = tmp_path / "bad.rules"
    source.write_text('prefix_rule(\n    pattern = ["ls"],\n    decision = "allow"\n')
    assert main(["policy", "import", "codex", str(source)]) == 2
    assert f"{source}:1: not a rules file" in capsys.readouterr().err


# plain words: a deny of `git reset --hard *` also catches the flag elsewhere
# (`git --hard reset`, stricter than Codex on purpose: docs/policy.md)
WORDS = ["git", "push", "reset", "hard", "npm", "test"]
tokens = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)
pattern = st.lists(st.one_of(st.sampled_from(WORDS),
                             st.lists(st.sampled_from(WORDS), min_size=1, max_size=2,
                                      unique=True)), min_size=1, max_size=3)
rule = st.tuples(pattern, st.sampled_from(["allow", "prompt", "forbidden"]))


@settings(max_examples=300, deadline=None)
@given(rules=st.lists(rule, max_size=6), commands=st.lists(tokens, min_size=1, max_size=8))
def test_random_prefix_rules_decide_as_codex(tmp_path_factory, rules, commands):
    """Random prefix rules with random decisions: the imported rules, last match wins,
    decide every command as Codex's strictest-wins does (no rule: ask)."""
    source = tmp_path_factory.mktemp("codex") / "r.rules"
    source.write_text("".join(f"prefix_rule(pattern={p!r}, decision={d!r})\n" for p, d in rules))
    imported = import_codex(source)
    policy_rules = parse_policy(render_policy(imported), "imported.yaml").rules
    parsed, _ = parse_rules(source.read_text(), "r.rules")
    for command in commands:
        expected = {"allow": "allow", "prompt": "ask", "forbidden": "deny", None: "ask"}[
            codex_decision(parsed, command)]
        got = evaluate("bash", " ".join(command), policy_rules).action
        assert got == expected, (command, rules)
