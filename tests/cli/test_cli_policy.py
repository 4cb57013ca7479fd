"""``dm_cc policy …`` end to end, in-process through ``dm_cc.cli.main`` (and twice as a process)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.trust import trust_project

from dm_cc import __version__
from dm_cc.cli import main


class Cli:
    def __init__(self, tmp_path: Path, capsys, monkeypatch) -> None:
        self.tmp = tmp_path
        self.project = tmp_path / "project"
        (self.project / ".git").mkdir(parents=True)
        self.dm_cc_home = tmp_path / "dmcc-home"
        self.dm_cc_home.mkdir()
        self.managed = tmp_path / "managed"
        self.managed.mkdir()
        self.capsys = capsys
        monkeypatch.setenv("DM_CC_HOME", str(self.dm_cc_home))
        monkeypatch.setenv("DM_CC_MANAGED_DIR", str(self.managed))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.chdir(self.project)

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def project_policy(self, text: str) -> Path:
        written = self.write(self.project / ".dm_cc" / "policy.yaml", text)
        trust_project(self.project)
        return written

    def run(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(list(argv))
        out, err = self.capsys.readouterr()
        return code, out, err


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch) -> Cli:
    return Cli(tmp_path, capsys, monkeypatch)


PUSH_DENY = """
rules:
  - {permission: bash, pattern: "git push *", action: deny, reason: "CI pushes"}
"""

# --------------------------------------------------------------------------- check


def test_check_human_output(cli):
    code, out, err = cli.run("policy", "check", "bash", "git push origin main")
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "ask: bash 'git push origin main' (agent build)"
    assert "bash git push origin main" in lines[1]
    assert "builtin:defaults" in out


def test_check_human_output_names_rule_source_and_reason(cli):
    cli.project_policy(PUSH_DENY)
    code, out, _ = cli.run("policy", "check", "bash", "git push origin main")
    assert code == 0
    assert out.startswith("deny: bash 'git push origin main' (agent build)\n")
    assert "deny bash 'git push *' (.dm_cc/policy.yaml:2): CI pushes" in out


def test_check_json_has_exactly_the_documented_keys(cli):
    cli.project_policy(PUSH_DENY)
    code, out, err = cli.run("policy", "check", "--json", "bash", "git push origin main")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert set(data) == {"decision", "agent", "approvals", "requests"}
    assert data["decision"] == "deny"
    assert data["approvals"] == 0       # saved approvals counted (none here)
    assert data["agent"] == "build"
    assert len(data["requests"]) == 1
    request = data["requests"][0]
    assert set(request) == {"permission", "pattern", "decision", "rule"}
    assert (request["permission"], request["pattern"], request["decision"]) == (
        "bash", "git push origin main", "deny")
    assert request["rule"] == {"permission": "bash", "pattern": "git push *", "action": "deny",
                               "source": ".dm_cc/policy.yaml:2", "reason": "CI pushes"}


def test_check_json_default_ask(cli):
    code, out, _ = cli.run("policy", "check", "bash", "git push origin main", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["decision"] == "ask"
    assert data["requests"][0]["rule"]["source"] == "builtin:defaults"
    assert data["requests"][0]["rule"]["action"] == "ask"


def test_check_json_for_a_path_outside_the_project(cli):
    code, out, _ = cli.run("policy", "check", "--json", "read", "/etc/hosts")
    assert code == 0
    data = json.loads(out)
    assert data["decision"] == "ask"
    assert [(r["permission"], r["pattern"]) for r in data["requests"]] == [
        ("read", "/etc/hosts"), ("external_directory", "/etc")]


@pytest.mark.parametrize("tool, text, expected", [
    ("bash", "git status", "allow"),
    ("bash", "npm install", "ask"),
    ("bash", "git push origin main", "deny"),
    ("read", "src/a.py", "allow"),
    ("read", ".env", "ask"),
    ("edit", "src/a.py", "ask"),
    ("webfetch", "https://example.com", "ask"),
    ("mcp__git__status", '{"repo": "."}', "ask"),
])
def test_check_exits_zero_whatever_the_decision(cli, tool, text, expected):
    cli.project_policy(PUSH_DENY)
    code, out, _ = cli.run("policy", "check", "--json", tool, text)
    assert code == 0
    assert json.loads(out)["decision"] == expected


def test_check_under_another_agent(cli):
    code, out, _ = cli.run("policy", "check", "--json", "--agent", "plan", "edit", "src/a.py")
    assert code == 0
    data = json.loads(out)
    assert (data["agent"], data["decision"]) == ("plan", "deny")
    assert data["requests"][0]["rule"]["source"] == "builtin:plan"


def test_check_a_subagent_as_started_by_its_ancestors(cli):
    cli.project_policy("""
        rules:
          - {permission: edit, pattern: "src/**", action: allow}
        """)
    code, out, _ = cli.run("policy", "check", "--agent", "general", "edit", "src/a.py")
    assert code == 0 and out.startswith("allow:")
    code, out, _ = cli.run("policy", "check", "--json", "--agent", "general", "--under", "build",
                           "--under", "plan", "edit", "src/a.py")
    data = json.loads(out)
    assert (data["decision"], data["under"]) == ("deny", ["build", "plan"])
    assert "plan agent that started it" in data["requests"][0]["note"]
    code, out, _ = cli.run("policy", "check", "--agent", "general", "--under", "build",
                           "todo", "")
    assert out.startswith("deny: todo '' (agent general, started by build)")
    assert "builtin:subagent" in out


def test_check_with_extra_policy_file(cli):
    extra = cli.write(cli.tmp / "extra.yaml",
                      "rules: [{permission: bash, pattern: 'npm *', action: allow}]\n")
    code, out, _ = cli.run("policy", "check", "--json", "--policy", str(extra), "bash",
                           "npm install")
    assert code == 0
    rule = json.loads(out)["requests"][0]["rule"]
    assert rule["source"] == f"{extra}:1"
    assert rule["action"] == "allow"


# --------------------------------------------------------------------------- errors: exit 2

MALFORMED = {
    "yaml-syntax": ("rules:\n  - permission: bash\n    pattern: x: y\n", 3),
    "tab": ("rules:\n  - permission: bash\n\t  pattern: x\n", 3),
    "unknown-top-level-key": ("rules: []\nrulez: []\n", 2),
    "unknown-rule-key": ("rules:\n  - permission: bash\n    pattern: x\n    action: allow\n"
                         "    why: hi\n", 5),
    "unknown-action": ("rules:\n  - permission: bash\n    pattern: x\n    action: maybe\n", 4),
    "missing-pattern": ("\n\nrules:\n  - permission: bash\n    action: allow\n", 4),
    "pattern-int": ("rules:\n  - permission: bash\n    pattern: 123\n    action: allow\n", 3),
    "rules-mapping": ("rules:\n  permission: bash\n", 1),
    "test-missing-expect": ("tests:\n  - {tool: bash, input: ls}\n", 2),
    "test-unknown-tool": ("tests:\n  - {tool: sh, input: ls, expect: allow}\n", 2),
    "test-expect-maybe": ("tests:\n  - tool: bash\n    input: ls\n    expect: maybe\n", 4),
    "duplicate-key": ("rules: []\ntests: []\nrules: []\n", 3),
    "two-documents": ("rules: []\n---\nrules: []\n", 2),
    "top-level-list": ("- {permission: bash, pattern: x, action: allow}\n", 1),
    "brace-explosion": ("rules:\n  - {permission: read, pattern: '" + "{a,b}" * 9
                        + "', action: deny}\n", 2),
    "alias-bomb": ("rules: []\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]\n" for n in range(1, 10)), 7),
    "recursive-alias": ("rules: &r [*r]\n", 1),
    "deep-nesting": ("rules:\n  - " + "[" * 500 + "]" * 500 + "\n", 2),
}


@pytest.mark.parametrize("text, line", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_project_policy_exits_2_with_file_and_line(cli, text, line):
    (cli.project / ".dm_cc").mkdir()
    (cli.project / ".dm_cc" / "policy.yaml").write_text(text)
    code, out, err = cli.run("policy", "check", "bash", "ls")
    assert code == 2
    assert out == ""
    assert re.match(rf"dm_cc: \.dm_cc/policy\.yaml:{line}(:\d+)?: ", err), err
    assert "Traceback" not in err


@pytest.mark.parametrize("text, line", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_extra_policy_exits_2_with_file_and_line(cli, text, line):
    extra = cli.tmp / "extra.yaml"
    extra.write_text(text)
    code, out, err = cli.run("policy", "check", "--policy", str(extra), "bash", "ls")
    assert code == 2
    assert out == ""
    assert re.match(rf"dm_cc: {re.escape(str(extra))}:{line}(:\d+)?: ", err), err


@pytest.mark.parametrize("argv", [
    ["policy", "check", "bash", "ls"],
    ["policy", "explain", "bash", "ls"],
    ["policy", "show"],
    ["policy", "test"],
    ["policy", "lint"],
])
def test_every_policy_command_refuses_a_malformed_policy(cli, argv):
    cli.project_policy("rules:\n  - {permission: bash, pattern: x, action: allw}\n")
    code, out, err = cli.run(*argv)
    assert code == 2
    assert err.startswith("dm_cc: .dm_cc/policy.yaml:2: "), err


def test_lint_of_a_malformed_file_argument_exits_2(cli):
    bad = cli.write(cli.tmp / "bad.yaml", "rules:\n  - {permission: bash}\n")
    code, _, err = cli.run("policy", "lint", str(bad))
    assert code == 2
    assert err.startswith(f"dm_cc: {bad}:2: ")


def test_malformed_user_policy_exits_2(cli):
    user = cli.write(cli.dm_cc_home / "config" / "policy.yaml", "rules: {}\n")
    code, _, err = cli.run("policy", "check", "bash", "ls")
    assert code == 2
    assert err.startswith(f"dm_cc: {user}:1: ")


@pytest.mark.parametrize("argv, needle", [
    (["policy", "check", "--agent", "nope", "bash", "ls"], "unknown agent 'nope'"),
    (["policy", "explain", "--agent", "nope", "bash", "ls"], "unknown agent 'nope'"),
    (["policy", "show", "--agent", "nope"], "unknown agent 'nope'"),
    (["policy", "check", "shell", "ls"], "unknown tool 'shell'"),
    (["policy", "explain", "shell", "ls"], "unknown tool 'shell'"),
    (["policy", "check", "--policy", "missing.yaml", "bash", "ls"], "missing.yaml"),
    (["policy", "show", "--policy", "missing.yaml"], "missing.yaml"),
    (["policy", "test", "--policy", "missing.yaml"], "missing.yaml"),
    (["policy", "lint", "missing.yaml"], "missing.yaml"),
    (["policy", "check", "mcp__git__status", "not json"], "mcp__git__status"),
    (["policy", "check", "mcp__git__status", "[1, 2]"], "JSON object"),
])
def test_usage_errors_exit_2(cli, argv, needle):
    code, out, err = cli.run(*argv)
    assert code == 2
    assert out == ""
    assert err.startswith("dm_cc: ")
    assert needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["policy"], ["policy", "frobnicate"], ["policy", "check", "bash"], ["--no-such-flag"],
])
def test_argparse_errors_exit_2(cli, argv):
    code, _, err = cli.run(*argv)
    assert code == 2
    assert "usage:" in err


# --------------------------------------------------------------------------- explain


def test_explain_lists_rules_and_marks_the_deciding_one(cli):
    cli.project_policy(PUSH_DENY)
    code, out, _ = cli.run("policy", "explain", "bash", "git push origin main")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "bash 'git push origin main' under agent build: deny"
    deciding = [line for line in lines if "<- decides" in line]
    assert len(deciding) == 1
    assert "'git push *'" in deciding[0] and "[.dm_cc/policy.yaml:2]" in deciding[0]
    assert "match" in deciding[0]
    # the other rules for bash are listed too, matching or not, in order
    rule_lines = [line for line in lines if "[builtin:" in line or "[.dm_cc" in line]
    assert any("'git status *'" in line and "match" not in line for line in rule_lines)
    assert any("* '*' [builtin:defaults]" in line and "match" in line for line in rule_lines)
    assert rule_lines.index(deciding[0]) > next(
        i for i, line in enumerate(rule_lines) if "'git status *'" in line)
    assert lines[-1].strip() == "=> deny"


def test_explain_marks_one_deciding_rule_per_request(cli):
    code, out, _ = cli.run("policy", "explain", "read", "/etc/hosts")
    assert code == 0
    assert out.count("<- decides") == 2
    assert out.count("\nrequest ") == 2
    assert "request external_directory '/etc'" in out


def test_explain_for_the_plan_agent(cli):
    code, out, _ = cli.run("policy", "explain", "--agent", "plan", "bash", "npm install")
    assert code == 0
    deciding = [line for line in out.splitlines() if "<- decides" in line]
    assert len(deciding) == 1
    assert "[builtin:plan]" in deciding[0] and "deny" in deciding[0]


# --------------------------------------------------------------------------- show


def test_show_lists_layers_with_sources(cli):
    cli.project_policy(PUSH_DENY)
    code, out, _ = cli.run("policy", "show")
    assert code == 0
    assert "[builtin]" in out and "[project]" in out and "[guardrails]" in out
    assert ".dm_cc/policy.yaml:2" in out
    assert out.index("[builtin]") < out.index("[project]") < out.index("[guardrails]")
    assert "builtin:plan" not in out


def test_show_json(cli):
    cli.project_policy(PUSH_DENY)
    code, out, _ = cli.run("policy", "show", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["agent"] == "build"
    for rule in data["rules"]:
        assert set(rule) == {"layer", "permission", "pattern", "action", "source", "reason"}
    project = [r for r in data["rules"] if r["layer"] == "project"]
    assert project == [{"layer": "project", "permission": "bash", "pattern": "git push *",
                        "action": "deny", "source": ".dm_cc/policy.yaml:2",
                        "reason": "CI pushes"}]
    layers = list(dict.fromkeys(r["layer"] for r in data["rules"]))
    assert layers[0] == "builtin"
    assert layers.index("builtin") < layers.index("project") < layers.index("guardrails")


def test_show_agent_plan_includes_builtin_plan_rules(cli):
    code, out, _ = cli.run("policy", "show", "--agent", "plan", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["agent"] == "plan"
    plan = [r for r in data["rules"] if r["source"] == "builtin:plan"]
    # its own rules, then what it may do at all: a bound of every layer
    assert plan and {r["layer"] for r in plan} == {"agent:plan", "may:plan"}
    assert {"permission": "edit", "pattern": ".dm_cc/plans/*.md", "action": "allow"}.items() \
        <= plan[0].items()
    code, out, _ = cli.run("policy", "show", "--agent", "plan")
    assert "[agent:plan]" in out and "builtin:plan" in out


def test_show_includes_agent_overrides_and_extra_files(cli):
    cli.project_policy("agents: {plan: {permission: {webfetch: allow}}}\n")
    extra = cli.write(cli.tmp / "x.yaml", "permission: {bash: allow}\n")
    code, out, _ = cli.run("policy", "show", "--json", "--agent", "plan", "--policy", str(extra))
    assert code == 0
    by_layer = {}
    for rule in json.loads(out)["rules"]:
        by_layer.setdefault(rule["layer"], []).append(rule)
    assert [r["source"] for r in by_layer["agents.plan"]] == [".dm_cc/policy.yaml:1"]
    assert [r["source"] for r in by_layer["--policy"]] == [f"{extra}:1"]


# --------------------------------------------------------------------------- test


def test_policy_test_all_pass_exits_0(cli):
    cli.project_policy("""
        rules:
          - {permission: bash, pattern: "git push *", action: deny}
        tests:
          - {tool: bash, input: "git push origin main", expect: deny}
          - {tool: bash, input: "git status", expect: allow}
          - {tool: read, input: "config/.env.local", expect: ask}
          - {tool: edit, input: "src/a.py", expect: deny, agent: plan}
    """)
    code, out, _ = cli.run("policy", "test")
    assert code == 0
    assert "FAIL" not in out
    assert out.count("PASS") == 4
    assert "PASS .dm_cc/policy.yaml:4:" in out
    assert out.splitlines()[-1] == "4 passed, 0 failed"


def test_policy_test_failure_exits_1_and_names_the_source_line(cli):
    cli.project_policy("""
        tests:
          - {tool: bash, input: "git status", expect: allow}
          - {tool: bash, input: "git status", expect: deny}
    """)
    code, out, _ = cli.run("policy", "test")
    assert code == 1
    fail = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fail) == 1
    assert fail[0].startswith("FAIL .dm_cc/policy.yaml:3:")
    assert "expected deny, got allow" in fail[0]
    assert "builtin:defaults" in out  # the deciding rule is shown
    assert out.splitlines()[-1] == "1 passed, 1 failed"


def test_policy_test_with_unknown_agent_fails_rather_than_crashing(cli):
    cli.project_policy("tests:\n  - {tool: bash, input: ls, expect: allow, agent: nope}\n")
    code, out, _ = cli.run("policy", "test")
    assert code == 1
    assert "FAIL .dm_cc/policy.yaml:2:" in out
    assert "nope" in out


def test_policy_test_runs_tests_of_extra_files(cli):
    extra = cli.write(cli.tmp / "x.yaml", "tests:\n  - {tool: bash, input: ls, expect: deny}\n")
    code, out, _ = cli.run("policy", "test", "--policy", str(extra))
    assert code == 1
    assert f"FAIL {extra}:2:" in out


def test_policy_test_with_no_tests_exits_0(cli):
    code, out, _ = cli.run("policy", "test")
    assert code == 0
    assert "0 passed, 0 failed" in out


# --------------------------------------------------------------------------- lint

LINT_CASES = {
    "shadowed": ('rules:\n  - {permission: bash, pattern: "rm *", action: deny}\n'
                 '  - {permission: bash, pattern: "*", action: allow}\n', 2, "shadowed"),
    "shadowed-path": ('rules:\n  - {permission: read, pattern: ".env", action: deny}\n'
                      '  - {permission: read, pattern: "*", action: allow}\n', 2, "shadowed"),
    "redundant": ('rules:\n  - {permission: read, pattern: "src/**", action: allow}\n'
                  '  - {permission: read, pattern: "**", action: allow}\n', 2, "redundant"),
    "redundant-shell": ('rules:\n  - {permission: bash, pattern: "git status", action: allow}\n'
                        '  - {permission: bash, pattern: "git *", action: allow}\n', 2,
                        "redundant"),
    "unknown-wildcard": ('rules:\n  - {permission: "rd*", pattern: "*", action: allow}\n', 2,
                         "unknown-permission"),
    "etc-passwd": ('rules:\n  - {permission: read, pattern: "etc/passwd", action: deny}\n', 2,
                   "not-absolute"),
    "dollar-home": ('rules:\n  - {permission: read, pattern: "$HOME/.ssh/**", action: deny}\n', 2,
                    "not-absolute"),
    "dotdot": ('rules:\n  - {permission: read, pattern: "../x", action: deny}\n', 2,
               "never-matches"),
    "double-slash": ('rules:\n  - {permission: edit, pattern: "a//b", action: deny}\n', 2,
                     "never-matches"),
    "double-space": ('rules:\n  - {permission: bash, pattern: "git  push", action: deny}\n', 2,
                     "never-matches"),
    "mcp-not-json": ('rules:\n  - {permission: mcp__git__push, pattern: "main", action: deny}\n',
                     2, "never-matches"),
    "mcp-json-text-allow": ('rules:\n  - {permission: mcp__git__push, pattern: \'*"branch": "d*\','
                            ' action: allow}\n', 2, "never-allows"),
    "in-agent-override": ('agents:\n  plan:\n    rules:\n'
                          '      - {permission: "rd*", pattern: "*", action: allow}\n', 4,
                          "unknown-permission"),
    "unknown-agent": ('agents:\n  paln:\n    rules:\n'
                      '      - {permission: edit, pattern: "*", action: allow}\n', 2,
                      "unknown-agent"),
    "beyond-a-read-only-agent": ('agents:\n  plan:\n    rules:\n'
                                 '      - {permission: edit, pattern: "docs/**", action: allow}\n',
                                 4, "never-allows"),
}


@pytest.mark.parametrize("text, line, kind", LINT_CASES.values(), ids=LINT_CASES.keys())
def test_lint_reports_findings_for_a_file_argument(cli, text, line, kind):
    path = cli.write(cli.tmp / "p.yaml", text)
    code, out, _ = cli.run("policy", "lint", str(path))
    assert code == 1
    findings = [f for f in out.splitlines() if f.startswith(f"{path}:")]
    assert findings, out
    assert any(f.startswith(f"{path}:{line}: {kind}: ") for f in findings), out


@pytest.mark.parametrize("text, line, kind", LINT_CASES.values(), ids=LINT_CASES.keys())
def test_lint_reports_findings_for_the_loaded_project_policy(cli, text, line, kind):
    cli.project_policy(text)
    code, out, _ = cli.run("policy", "lint")
    assert code == 1
    assert f".dm_cc/policy.yaml:{line}: {kind}: " in out


UNKNOWN_PERMISSION = {
    "bsh": ('rules:\n  - {permission: bsh, pattern: "ls", action: allow}\n', 2,
            "did you mean bash?"),
    "write": ('# comment\nrules:\n'
              '  - {permission: write, pattern: "src/**", action: allow}\n', 3, "'edit'"),
    "in-agent-override": ('agents:\n  plan:\n    rules:\n'
                          '      - {permission: bsh, pattern: "*", action: allow}\n', 4, "bash"),
    "reed": ('permission:\n  reed: allow\n', 2, "did you mean read?"),
}


@pytest.mark.parametrize("argv", [("policy", "lint"), ("policy", "check", "bash", "ls"),
                                  ("run", "--model", "offline", "hi")])
@pytest.mark.parametrize("text, line, hint", UNKNOWN_PERMISSION.values(),
                         ids=UNKNOWN_PERMISSION.keys())
def test_an_unknown_permission_stops_dm_cc_with_file_line_and_a_suggestion(cli, argv, text,
                                                                         line, hint):
    cli.project_policy(text)
    code, out, err = cli.run(*argv)
    assert code == 2, (out, err)
    assert err.startswith(f"dm_cc: .dm_cc/policy.yaml:{line}: unknown permission "), err
    assert hint in err


def test_an_unknown_agent_name_is_a_warning_at_load(cli):
    cli.project_policy('agents:\n  paln:\n    rules:\n'
                       '      - {permission: edit, pattern: "*", action: allow}\n')
    code, out, err = cli.run("policy", "check", "bash", "ls")
    assert code == 0, (out, err)
    assert "dm_cc: warning: .dm_cc/policy.yaml:2: unknown agent 'paln'" in err
    assert "did you mean plan?" in err


CLEAN = """
rules:
  - {permission: "*", pattern: "*", action: ask}
  - {permission: read, pattern: "**", action: allow}
  - {permission: read, pattern: ".env*", action: deny, reason: "secrets stay local"}
  - {permission: read, pattern: "/etc/**", action: deny}
  - {permission: read, pattern: "~/.ssh/**", action: deny}
  - {permission: bash, pattern: "git *", action: allow}
  - {permission: bash, pattern: "git push *", action: ask}
  - {permission: "mcp__git__*", pattern: "*", action: allow}
  - {permission: mcp__git__push, pattern: '{"force": true*', action: deny}
agents:
  general:
    rules: [{permission: edit, pattern: "docs/**/*.md", action: allow}]
tests:
  - {tool: bash, input: "git status", expect: allow}
"""


def test_lint_clean_file_exits_0(cli):
    path = cli.write(cli.tmp / "clean.yaml", CLEAN)
    code, out, _ = cli.run("policy", "lint", str(path))
    assert code == 0
    assert "no findings" in out


def test_lint_clean_loaded_policy_exits_0(cli):
    cli.project_policy(CLEAN)
    code, out, _ = cli.run("policy", "lint")
    assert code == 0
    assert "1 file, no findings" in out


def test_lint_with_nothing_to_lint_exits_0(cli):
    code, out, _ = cli.run("policy", "lint")
    assert code == 0
    assert "no policy files found" in out


def test_lint_does_not_call_a_case_insensitive_deny_shadowed_by_an_exact_case_allow(cli):
    text = ('rules:\n  - {permission: read, pattern: "src/secret.txt", action: deny}\n'
            '  - {permission: read, pattern: "src/*", action: allow}\n')
    cli.project_policy(text)
    code, out, _ = cli.run("policy", "check", "--json", "read", "SRC/secret.txt")
    assert json.loads(out)["decision"] == "deny"  # the "shadowed" rule decides this request
    code, out, _ = cli.run("policy", "lint")
    assert "shadowed" not in out


# --------------------------------------------------------------------------- schema, version, help


def test_schema_is_json_with_the_policy_properties(cli):
    code, out, _ = cli.run("policy", "schema")
    assert code == 0
    schema = json.loads(out)
    assert {"rules", "agents", "tests", "permission"} <= set(schema["properties"])
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False


def test_version(cli):
    code, out, _ = cli.run("--version")
    assert code == 0
    assert out.strip() == f"dm_cc {__version__}"


def test_policy_help(cli):
    code, out, _ = cli.run("policy", "--help")
    assert code == 0
    for command in ("check", "explain", "show", "test", "lint", "schema"):
        assert command in out


# --------------------------------------------------------------------------- as a process


def _process_env(cli: Cli) -> dict[str, str]:
    env = dict(os.environ)
    env.update(DM_CC_HOME=str(cli.dm_cc_home), DM_CC_MANAGED_DIR=str(cli.managed))
    return env


def test_python_dash_m_dm_cc_policy_check(cli):
    cli.project_policy(PUSH_DENY)
    done = subprocess.run([sys.executable, "-m", "dm_cc", "policy", "check", "bash", "ls"],
                          cwd=cli.project, env=_process_env(cli), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("allow: bash 'ls' (agent build)")
    done = subprocess.run([sys.executable, "-m", "dm_cc", "policy", "check", "bash", "x"],
                          cwd=cli.tmp, env=_process_env(cli) | {"DM_CC_HOME": str(cli.tmp / "h")},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- one world

DOCS_AGENT = """
---
description: writes documentation only
mode: primary
permission:
  bash: {"*": deny, "ls *": allow}
---
You write docs.
"""


def test_project_agents_are_known_to_check_test_and_run_alike(cli):
    """`run --agent docs` and `policy check --agent docs` were wired apart and
    disagreed; both now ask the one composition root."""
    cli.write(cli.project / ".dm_cc" / "agents" / "docs.md", DOCS_AGENT)
    cli.project_policy("""
        tests:
          - {tool: bash, input: "ls", expect: allow, agent: docs}
          - {tool: bash, input: "rm -rf build", expect: deny, agent: docs}
        """)
    code, out, _ = cli.run("policy", "check", "--agent", "docs", "bash", "rm -rf build")
    assert code == 0 and out.startswith("deny: ") and "docs.md:5" in out
    code, out, _ = cli.run("policy", "check", "--agent", "docs", "bash", "ls")
    assert code == 0 and out.startswith("allow: ")
    code, out, _ = cli.run("policy", "test")
    assert code == 0 and "2 passed, 0 failed" in out
    code, out, _ = cli.run("policy", "show", "--agent", "docs")
    assert code == 0 and "[agent:docs]" in out
    code, out, _ = cli.run("run", "--agent", "docs", "--model", "offline", "run rm -rf build")
    assert code == 0 and "denied" in out and "docs.md:5" in out


def test_a_malformed_project_agent_stops_policy_commands_too(cli):
    cli.write(cli.project / ".dm_cc" / "agents" / "docs.md", "---\nmode: primary\n---\nx\n")
    code, _, err = cli.run("policy", "check", "bash", "ls")
    assert code == 2 and "docs.md:2" in err and "description" in err


def test_lint_reports_a_user_allow_silencing_a_project_ask(cli):
    cli.project_policy('rules:\n  - {permission: bash, pattern: "git push *", action: ask}\n')
    cli.write(cli.dm_cc_home / "config" / "policy.yaml",
              'permission:\n  bash:\n    "git *": allow\n')
    code, out, _ = cli.run("policy", "lint")
    assert code == 1
    assert (".dm_cc/policy.yaml:2: shadowed: ask bash 'git push *' is silenced by the broader "
            "allow bash 'git *' at ") in out
    assert "config/policy.yaml:3" in out


# --------------------------------------------------------------------------- import's tests

IMPORT_FIXTURES = Path(__file__).parent.parent / "policy" / "importers"


def test_an_import_stricter_than_its_source_writes_tests_it_passes(cli):
    """Claude asks `npm` (Bash(npm:*)); the deny Bash(npm * *) is written wider and
    denies it: the import's own test expects the deny, its comment says Claude's ask
    and why, and `dm_cc policy test` passes right after the import."""
    source = cli.write(cli.tmp / "settings.json", json.dumps(
        {"permissions": {"ask": ["Bash(npm:*)", "Bash(make:*)"], "deny": ["Bash(npm * *)"]}}))
    code, _, err = cli.run("policy", "import", "claude", str(source), "-o", "out.yaml")
    assert code == 0, err
    assert "stricter than its source, so the test expects dm_cc's decision: test bash " \
           "'npm'" in err
    text = (cli.project / "out.yaml").read_text()
    assert "  # Claude Code decides ask (stricter here because the rule deny bash " \
           "'npm * *')\n  - {tool: \"bash\", input: \"npm\", expect: deny" in text
    assert '{tool: "bash", input: "make", expect: ask' in text    # the same: untouched
    code, out, _ = cli.run("policy", "test", "--policy", "out.yaml")
    assert (code, out.splitlines()[-1]) == (0, "2 passed, 0 failed")


@pytest.mark.parametrize(("source", "file", "lossy"), [
    ("claude", "claude-project/.claude/settings.json", False),
    ("claude", "claude-odd/.claude/settings.local.json", True),
    ("opencode", "opencode.jsonc", False),
    ("gemini", "gemini-policy.toml", False),
    ("codex", "default.rules", False),
])
def test_every_fixture_import_passes_its_own_tests(cli, source, file, lossy):
    code, _, err = cli.run("policy", "import", source, str(IMPORT_FIXTURES / file),
                           "-o", "out.yaml", *(["--lossy"] if lossy else []))
    assert code == 0, err
    code, out, _ = cli.run("policy", "test", "--policy", "out.yaml", "--no-approvals")
    assert code == 0 and out.splitlines()[-1].endswith(" 0 failed"), out


def test_an_import_its_own_tests_find_looser_is_not_written(cli, monkeypatch):
    """An importer bug -- a test pinning the source's deny that the imported rules
    allow -- fails the import, naming the test, and writes nothing."""
    from dm_cc.policy import IMPORTERS
    from dm_cc.policy.importers import Entry, Imported, InlineTestEntry

    def buggy(path: Path) -> Imported:
        return Imported(str(path), "claude", rules=[Entry("bash", "make *", "allow")],
                        tests=[InlineTestEntry("bash", "make", "deny", name="pinned deny")])

    monkeypatch.setitem(IMPORTERS, "claude", ("buggy", buggy))
    source = cli.write(cli.tmp / "settings.json", "{}")
    code, _, err = cli.run("policy", "import", "claude", str(source), "-o", "out.yaml")
    assert code == 1
    assert "test bash 'make' [pinned deny]: Claude Code decides deny, the imported policy " \
           "allow (the rule allow bash 'make *')" in err
    assert "nothing written" in err and not (cli.project / "out.yaml").exists()
