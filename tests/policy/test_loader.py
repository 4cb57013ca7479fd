"""Loading one policy file: rules with file:line sources, and every way a file can be wrong."""

from __future__ import annotations

import re
import textwrap
import time

import pytest
from support.requests import evaluate

from dm_cc.errors import ConfigError, PolicyError
from dm_cc.permissions import Rule
from dm_cc.policy.loader import load_policy_file, parse_policy


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


VALID = dedent("""
    # team policy
    rules:                       # ordered; the last matching rule wins
      - {permission: "*",  pattern: "*",        action: ask}
      - {permission: read, pattern: "**",       action: allow}
      - permission: read
        pattern: ".env*"
        action: deny
        reason: "secrets stay local"
      - {permission: bash, pattern: "git *",    action: allow}
      - {permission: bash, pattern: "git push *", action: ask}
    agents:
      plan:
        rules: [{permission: edit, pattern: "docs/**/*.md", action: allow}]
      explore:
        permission:
          webfetch: allow
        rules:
          - {permission: bash, pattern: "make *", action: ask}
    tests:
      - {tool: bash, input: "git status", expect: allow}
      - tool: read
        input: "config/.env.local"
        expect: deny
        agent: plan
        name: secrets
""")


def test_valid_file_rules_in_order_with_file_line_sources():
    policy = parse_policy(VALID, "team.yaml")
    assert policy.path == "team.yaml"
    assert policy.rules == (
        Rule("*", "*", "ask", None, "team.yaml:3"),
        Rule("read", "**", "allow", None, "team.yaml:4"),
        Rule("read", ".env*", "deny", "secrets stay local", "team.yaml:5"),
        Rule("bash", "git *", "allow", None, "team.yaml:9"),
        Rule("bash", "git push *", "ask", None, "team.yaml:10"),
    )


def test_valid_file_agent_overrides():
    policy = parse_policy(VALID, "team.yaml")
    assert set(policy.agents) == {"plan", "explore"}
    assert policy.agents["plan"] == (Rule("edit", "docs/**/*.md", "allow", None, "team.yaml:13"),)
    # an agent's shorthand comes before its rules:, like at the top level
    assert policy.agents["explore"] == (
        Rule("webfetch", "*", "allow", None, "team.yaml:16"),
        Rule("bash", "make *", "ask", None, "team.yaml:18"),
    )


def test_valid_file_inline_tests():
    policy = parse_policy(VALID, "team.yaml")
    first, second = policy.tests
    assert (first.tool, first.input, first.expect, first.agent, first.source) == (
        "bash", "git status", "allow", None, "team.yaml:20")
    assert (second.tool, second.input, second.expect, second.agent, second.name,
            second.source) == ("read", "config/.env.local", "deny", "plan", "secrets",
                               "team.yaml:21")


def test_loaded_rules_work_in_the_engine():
    rules = parse_policy(VALID, "team.yaml").rules
    assert evaluate("bash", "git push origin", rules).source == "team.yaml:10"
    assert evaluate("read", "config/.env.local", rules).reason == "secrets stay local"


def test_opencode_style_shorthand_keeps_order_and_comes_before_rules():
    text = dedent("""
        rules:
          - {permission: bash, pattern: "rm *", action: deny}
        permission:
          bash:
            "*": ask
            "git *": allow
            "git push *": deny
          edit: deny
          webfetch: allow
    """)
    policy = parse_policy(text, "p.yaml")
    assert [(r.permission, r.pattern, r.action, r.source) for r in policy.rules] == [
        ("bash", "*", "ask", "p.yaml:5"),
        ("bash", "git *", "allow", "p.yaml:6"),
        ("bash", "git push *", "deny", "p.yaml:7"),
        ("edit", "*", "deny", "p.yaml:8"),
        ("webfetch", "*", "allow", "p.yaml:9"),
        ("bash", "rm *", "deny", "p.yaml:2"),
    ]
    assert evaluate("bash", "git status", policy.rules).action == "allow"
    assert evaluate("bash", "git push origin", policy.rules).action == "deny"
    assert evaluate("bash", "ls", policy.rules).action == "ask"
    assert evaluate("bash", "rm -rf x", policy.rules).action == "deny"


def test_shorthand_in_flow_style():
    policy = parse_policy('permission: {bash: {"*": ask, "git *": allow}, edit: deny}\n', "p.yaml")
    assert [(r.permission, r.pattern, r.action) for r in policy.rules] == [
        ("bash", "*", "ask"), ("bash", "git *", "allow"), ("edit", "*", "deny")]
    assert {r.source for r in policy.rules} == {"p.yaml:1"}


def test_version_one_is_accepted():
    assert parse_policy("version: 1\nrules: []\n", "p.yaml").rules == ()


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n"])
def test_empty_file_is_an_empty_policy(text):
    policy = parse_policy(text, "p.yaml")
    assert (policy.rules, policy.agents, policy.tests) == ((), {}, ())


def test_tab_inside_a_quoted_value_is_not_indentation():
    policy = parse_policy('rules:\n  - {permission: bash, pattern: "a\tb", action: allow}\n',
                          "p.yaml")
    assert policy.rules[0].pattern == "a\tb"


# --------------------------------------------------------------------------- malformed files

MALFORMED = {
    "yaml-syntax": ("rules:\n  - permission: bash\n    pattern: x: y\n    action: allow\n", 3),
    "yaml-bad-indent": ("rules:\n  - permission: bash\n   action: allow\n", 3),
    "yaml-unterminated-quote": ('rules:\n  - permission: "bash\n', 2),   # where it opens
    "tab-indentation": ("rules:\n  - permission: bash\n\t  pattern: x\n    action: allow\n", 3),
    "tab-indentation-late": ("version: 1\nrules:\n  - permission: bash\n    pattern: x\n"
                             "    action: allow\n  -\t{permission: read}\n\t\n\t- x\n", 8),
    "unknown-top-level-key": ("# c\nrules: []\nrulez: []\n", 3),
    "unknown-key-in-rule": ("rules:\n  - permission: bash\n    pattern: x\n    action: allow\n"
                            "    comment: hi\n", 5),
    "unknown-key-in-second-rule": ("version: 1\n\nrules:\n  - {permission: bash, pattern: x, "
                                   "action: allow}\n  - {permission: bash, pattern: y, "
                                   "action: allow, extra: 1}\n", 5),
    "unknown-action": ("rules:\n  - permission: bash\n    pattern: x\n    action: maybe\n", 4),
    "action-boolean": ("rules:\n  - {permission: bash, pattern: x, action: yes}\n", 2),
    "missing-pattern": ("rules:\n  - permission: bash\n    action: allow\n", 2),
    "missing-action": ("\nrules:\n  - permission: bash\n    pattern: x\n", 3),
    "missing-permission": ("rules:\n  - {pattern: x, action: allow}\n", 2),
    "empty-permission": ("rules:\n  - {permission: '', pattern: x, action: allow}\n", 2),
    "pattern-int": ("rules:\n  - permission: bash\n    pattern: 123\n    action: allow\n", 3),
    "pattern-null": ("rules:\n  - {permission: bash, pattern: null, action: allow}\n", 2),
    "reason-int": ("rules:\n  - {permission: bash, pattern: x, action: allow, reason: 5}\n", 2),
    "rules-mapping": ("version: 1\nrules:\n  permission: bash\n", 2),
    "rules-scalar": ("rules: everything\n", 1),
    "agents-list": ("agents:\n  - plan\n", 1),
    "agent-bad-action": ("agents:\n  plan:\n    rules:\n      - {permission: edit, pattern: x, "
                         "action: allw}\n", 4),
    "agent-unknown-key": ("agents:\n  plan:\n    rulez: []\n", 3),
    "shorthand-bad-action": ("permission:\n  bash:\n    '*': ask\n    'git *': maybe\n", 2),
    "version-2": ("version: 2\n", 1),
    "test-missing-expect": ("tests:\n  - tool: bash\n    input: ls\n", 2),
    "test-unknown-tool": ("tests:\n  - {tool: bash, input: ls, expect: allow}\n  - tool: shell\n"
                          "    input: ls\n    expect: allow\n", 3),
    "test-expect-maybe": ("tests:\n  - tool: bash\n    input: ls\n    expect: maybe\n", 4),
    "test-input-int": ("tests:\n  - {tool: bash, input: 5, expect: allow}\n", 2),
    "test-unknown-key": ("tests:\n  - {tool: bash, input: ls, expect: allow, expected: deny}\n", 2),
    "duplicate-top-level-key": ("rules: []\nagents: {}\nrules: []\n", 3),
    "duplicate-key-in-rule": ("rules:\n  - permission: bash\n    pattern: x\n    pattern: y\n"
                              "    action: allow\n", 4),
    "two-documents": ("rules: []\n---\nrules: []\n", 2),
    "two-documents-explicit": ("---\nrules: []\n...\n---\nrules: []\n", 4),
    "top-level-list": ("- permission: bash\n  pattern: x\n", 1),
    "top-level-scalar": ("hello\n", 1),
    "python-tag": ("rules: !!python/object:os.system {}\n", 1),
    "brace-explosion": ("rules:\n  - {permission: read, pattern: '" + "{a,b}" * 9 + "', "
                        "action: deny}\n", 2),
    "brace-explosion-any-permission": ("rules:\n  - {permission: '*', pattern: '"
                                       + "{a,b}" * 9 + "', action: deny}\n", 2),
}


@pytest.mark.parametrize("text, line", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_policy_names_file_and_line(text, line):
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "team/policy.yaml")
    error = caught.value
    assert re.match(rf"team/policy\.yaml:{line}(:\d+)?: ", str(error)), str(error)
    assert (error.path, error.line) == ("team/policy.yaml", line)
    assert isinstance(error, ConfigError)
    assert error.message and "Traceback" not in str(error)


@pytest.mark.parametrize("kind, needle", [
    ("unknown-top-level-key", "rulez"),
    ("unknown-key-in-rule", "comment"),
    ("unknown-action", "action"),
    ("missing-pattern", "pattern"),
    ("missing-action", "action"),
    ("test-unknown-tool", "shell"),
    ("test-missing-expect", "expect"),
    ("duplicate-top-level-key", "duplicate"),
    ("two-documents", "document"),
    ("tab-indentation", "tab"),
    ("brace-explosion", "{a,b}"),
])
def test_malformed_policy_message_says_what_is_wrong(kind, needle):
    with pytest.raises(PolicyError) as caught:
        parse_policy(MALFORMED[kind][0], "p.yaml")
    assert needle in str(caught.value)


def test_an_unclosed_quote_is_reported_where_it_opens_not_at_the_end_of_the_file():
    text = ("rules:\n  - permission: bash\n    pattern: 'git status *\n    action: allow\n"
            "  - {permission: read, pattern: x, action: allow}\n\n# the end\n")
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    assert str(caught.value) == ("p.yaml:3:14: invalid YAML: the ' opened here is never closed "
                                 "(the file ends first)")
    assert (caught.value.line, caught.value.column) == (3, 14)


def test_a_quote_left_open_that_the_next_rule_closes_is_named_where_yaml_stops():
    """The next rule's opening quote closes the one left open: YAML stops there, on a
    line that is right; the message names the line where the quote opened."""
    text = ('rules:\n  - {permission: bash, pattern: "git *, action: allow}\n'
            '  - {permission: read, pattern: "x", action: allow}\n')
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    assert str(caught.value).startswith("p.yaml:3:34: invalid YAML: ")
    assert str(caught.value).endswith('; the " opened at line 2, column 33 is closed only on '
                                      'line 3: is its closing " missing?')
    with pytest.raises(PolicyError) as caught:      # a quote closed on its own line: no word
        parse_policy('rules:\n  - {permission: bash, pattern: "git *", action: allow}}\n',
                     "p.yaml")
    assert "opened at" not in str(caught.value)


def test_an_unclosed_bracket_names_the_line_where_it_opens():
    with pytest.raises(PolicyError) as caught:
        parse_policy("rules: [{permission: bash, pattern: x, action: allow}\nagents: {}\n", "p.yaml")
    assert str(caught.value).startswith("p.yaml:2:1: invalid YAML: ")
    assert "flow sequence that starts at line 1, column 8" in str(caught.value)


@pytest.mark.parametrize("text, said", [
    ("rule:\n  - {permission: bash, pattern: x, action: allow}\n",
     "p.yaml:1: rule: unknown key 'rule' (did you mean rules?)"),
    ("rules:\n  - {permission: bash, pattern: x, acton: allow}\n",
     "p.yaml:2: rules[0].acton: unknown key 'acton' (did you mean action?)"),
    ("agents:\n  plan:\n    permision: {edit: deny}\n",
     "p.yaml:3: agents.plan.permision: unknown key 'permision' (did you mean permission?)"),
    ("hooks:\n  - {permission: bash, pattern: x, comand: ./h}\n",
     "p.yaml:2: hooks[0].comand: unknown key 'comand' (did you mean command?)"),
    ("tests:\n  - {tool: bash, input: ls, expect: allow, agnet: plan}\n",
     "p.yaml:2: tests[0].agnet: unknown key 'agnet' (did you mean agent?)"),
    ("rules: []\ncolour: red\n", "p.yaml:2: colour: unknown key 'colour'"),
])
def test_an_unknown_key_names_the_known_key_it_is_close_to(text, said):
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    first = str(caught.value).splitlines()[0]
    assert first == said        # the misspelt key first, before the field it leaves missing


def test_bad_brace_pattern_under_question_mark_permission_fails_at_load():
    text = "rules:\n  - {permission: 'rea?', pattern: '" + "{a,b}" * 9 + "', action: deny}\n"
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    assert str(caught.value).startswith("p.yaml:2: ")


def _alias_bomb(levels: int) -> str:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_rejected_quickly():
    text = _alias_bomb(8)  # 9**8 values once expanded, from a 400-byte file
    assert len(text) < 500
    start = time.perf_counter()
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    assert time.perf_counter() - start < 1.0
    assert str(caught.value).startswith("p.yaml:6:10: ")
    assert "expanding aliases" in str(caught.value)


def test_big_brace_pattern_is_fine_for_shell_rules():
    # braces are literal in the shell wildcard, nothing is expanded
    policy = parse_policy("rules:\n  - {permission: bash, pattern: '" + "{a,b}" * 9
                          + "', action: deny}\n", "p.yaml")
    assert len(policy.rules) == 1


# --------------------------------------------------------------------------- files on disk


def test_load_policy_file_uses_the_cwd_relative_path(tmp_path, monkeypatch):
    (tmp_path / ".dm_cc").mkdir()
    path = tmp_path / ".dm_cc" / "policy.yaml"
    path.write_text("rules:\n  - {permission: bash, pattern: 'ls *', action: allow}\n")
    monkeypatch.chdir(tmp_path)
    policy = load_policy_file(path)
    assert policy.path == ".dm_cc/policy.yaml"
    assert policy.rules[0].source == ".dm_cc/policy.yaml:2"


def test_load_policy_file_outside_the_cwd_uses_the_absolute_path(tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("rules:\n  - {permission: bash, pattern: x, action: wrong}\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    with pytest.raises(PolicyError) as caught:
        load_policy_file(outside)
    assert str(caught.value).startswith(f"{outside}:2: ")


def test_load_policy_file_missing(tmp_path):
    with pytest.raises(PolicyError) as caught:
        load_policy_file(tmp_path / "nope.yaml")
    assert caught.value.line is None
    assert "nope.yaml" in str(caught.value)


def test_load_policy_file_not_utf8(tmp_path):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"rules: [\xff\xfe]\n")
    with pytest.raises(PolicyError) as caught:
        load_policy_file(path)
    assert "bin.yaml" in str(caught.value)


def test_load_policy_file_empty(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    policy = load_policy_file(path)
    assert (policy.rules, policy.agents, policy.tests) == ((), {}, ())
