"""Codex .rules → dm_cc policy: strictest-wins rewritten as last-match-wins; the
rules' own match/not_match examples become inline tests that pass."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.codex import codex_decision, import_codex, parse_rules
from dm_cc.policy.loader import parse_policy

from . import reference_codex
from .reference_codex import AS_DM_CC

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}

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


# --------------------------------------------------------------------------- never looser

# tokens that are no plain word: quotes and shell operators are an argument's text
# in Codex, a space makes one argument of two words, `*`/`?` are literal
ODD = ["it's", 'say "hi"', "a;b", "x|y", "*", "a?", "$HOME", "back\\slash", "two words",
       "git", "push", "rm"]
odd_tokens = st.lists(st.sampled_from(ODD), min_size=1, max_size=3)
odd_pattern = st.lists(st.one_of(st.sampled_from(ODD),
                                 st.lists(st.sampled_from(ODD), min_size=1, max_size=2,
                                          unique=True)), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.lists(st.tuples(odd_pattern, st.sampled_from(["allow", "prompt", "forbidden"])),
                      max_size=5),
       commands=st.lists(odd_tokens, min_size=1, max_size=6))
def test_no_codex_import_decides_a_command_more_loosely(stage, rules, commands):
    """For rules whose tokens hold quotes, operators, wildcard characters and spaces,
    dm_cc's decision of the command (its argv quoted as a shell would need, judged by
    the whole engine) is never looser than execpolicy's (reference_codex.py)."""
    world = codex_world(stage, rules)
    for argv in commands:
        expected = AS_DM_CC[reference_codex.decide(rules, argv)]
        got = world.decide("bash", shlex.join(argv))[1].action
        assert STRICTNESS[got] >= STRICTNESS[expected], (argv, got, expected, rules)


def codex_world(stage, rules):
    source = stage.root / "r.rules"
    source.write_text("".join(f"prefix_rule(pattern={p!r}, decision={d!r})\n" for p, d in rules))
    return stage.world(render_policy(import_codex(source)))


@pytest.mark.parametrize(("token", "command"), [
    ("it's", "echo \"it's\""), ('say "hi"', "echo 'say \"hi\"'"), ("a;b", "echo 'a;b'"),
    ("*", "echo '*'"), ("$HOME", "echo '$HOME'"),
])
def test_a_forbidden_token_keeps_its_quote_and_operator_characters(stage, token, command):
    world = codex_world(stage, [(["echo"], "allow"), (["echo", token], "forbidden")])
    assert world.decide("bash", command)[1].action == "deny"
    assert world.decide("bash", "echo other")[1].action == "allow"


def test_network_rules_and_reviewers(tmp_path, capsys):
    source = tmp_path / "r.rules"
    source.write_text('network_rule(host="Evil.COM:443", protocol="https", decision="deny")\n'
                      'network_rule(host="ask.test", protocol="http", decision="prompt")\n'
                      'network_rule(host="pypi.org", protocol="https", decision="allow")\n'
                      'prefix_rule(pattern=["git"], decision="prompt", reviewer="auto_review")\n')
    imported = import_codex(source)
    rules = [(e.permission, e.pattern, e.action) for e in imported.rules if e.permission]
    assert ("network", "evil.com", "deny") in rules and ("network", "evil.com:*", "deny") in rules
    assert ("network", "ask.test", "ask") in rules
    assert not [r for r in rules if "pypi" in r[1]]          # an allow of one protocol: out
    said = "\n".join(imported.dropped)
    assert "pypi.org" in said and "reviewer: not imported" in said
    assert main(["policy", "import", "codex", str(source), "-o", str(tmp_path / "o.yaml")]) == 0
    assert main(["policy", "lint", str(tmp_path / "o.yaml")]) == 0
    source.write_text('network_rule(host=HOST, protocol="https", decision="deny")\n')
    assert main(["policy", "import", "codex", str(source)]) == 1    # not data: refused


# An imported allow is matched as dm_cc matches every rule: against the command as
# bash will run it (docs/shell.md). Codex, Claude and Gemini match the text, so a
# spelling of the same run ("ls" quoted, /usr/bin/ls, git --no-pager) is allowed by
# dm_cc where they ask: the one way an import reads an allow wider than its source,
# by design (docs/importers.md). What changes the program or how it runs still asks.
@pytest.mark.parametrize(("command", "expect"), [
    ('"ls" -la', "allow"), ("/usr/bin/ls", "allow"), ("git --no-pager status", "allow"),
    ("FOO=bar make all", "allow"),
    ("./ls", "ask"), ("/tmp/evil/ls", "ask"), ("PATH=/tmp/evil ls", "ask"),
    ("LD_PRELOAD=/tmp/x.so ls", "ask"), ("GIT_DIR=/x git status", "ask"),
    ("GIT_EXTERNAL_DIFF=/tmp/x git diff", "ask"), ("BASH_ENV=/tmp/x make", "ask"),
    ("git -c diff.external=/tmp/x diff", "ask"), ("git --config-env=a=b diff", "ask"),
    ("git --exec-path=/tmp status", "ask"),
])
def test_an_allow_reaches_other_spellings_of_the_same_run_only(stage, command, expect):
    world = codex_world(stage, [(["ls"], "allow"), (["git", "status"], "allow"),
                                (["git", "diff"], "allow"), (["make"], "allow")])
    assert world.decide("bash", command)[1].action == expect
