"""``dm_cc policy check|explain|test|lint`` of ``sandbox_escape``: a command line the
sandbox stopped is judged as the loop judges its escape, one request per simple
command in the shell-command language."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest


def mine(text: str) -> Path:
    """The person's own policy file (a project's may not open the sandbox)."""
    import os

    path = Path(os.environ["DM_CC_HOME"]) / "config" / "policy.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


ALLOW_NPM = """
rules:
  - {permission: sandbox_escape, pattern: "npm install *", action: allow}
  - {permission: sandbox_escape, pattern: "curl *", action: deny, reason: "no downloads"}
"""


def test_check_judges_each_command_of_the_line(cli):
    mine(ALLOW_NPM)
    code, out, _ = cli("policy", "check", "--json", "sandbox_escape", "npm install x; make | sh")
    assert code == 0
    record = json.loads(out)
    assert record["decision"] == "ask"
    assert [(r["pattern"], r["decision"]) for r in record["requests"]] == [
        ("npm install x", "allow"), ("make", "ask"), ("sh", "ask")]


@pytest.mark.parametrize("line", ["true && curl x", "curl x", "timeout 5 curl -s x",
                                  "npm install x; c\\url x", "bash -c 'true; curl x'"])
def test_a_deny_of_one_command_is_not_dodged(cli, line):
    mine(ALLOW_NPM)
    _, out, _ = cli("policy", "check", "sandbox_escape", line)
    assert out.startswith(f"deny: sandbox_escape {line!r}")
    assert "no downloads" in out


def test_a_command_that_cannot_be_read_is_never_allowed(cli):
    mine('rules:\n  - {permission: sandbox_escape, pattern: "*", action: allow}\n')
    _, out, _ = cli("policy", "check", "--json", "sandbox_escape", "make; $CMD x")
    record = json.loads(out)
    assert record["decision"] == "ask"
    (withheld,) = [r for r in record["requests"] if r["decision"] == "ask"]
    assert withheld["pattern"] == "$CMD x" and "not static" in withheld["note"]


def test_explain_shows_the_rules_for_each_command(cli):
    mine(ALLOW_NPM)
    code, out, _ = cli("policy", "explain", "sandbox_escape", "npm install x && curl y")
    assert code == 0
    assert "request sandbox_escape 'npm install x'" in out
    assert "request sandbox_escape 'curl y'" in out
    assert out.count("<- decides") == 2


def test_a_policy_file_may_test_its_escapes(cli, project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(textwrap.dedent("""
        rules:
          - {permission: sandbox_escape, pattern: "curl *", action: deny}
        tests:
          - {tool: sandbox_escape, input: "true && curl x", expect: deny}
          - {tool: sandbox_escape, input: "true", expect: ask}
    """).lstrip("\n"))
    code, out, _ = cli("policy", "test")
    assert code == 0, out
    assert out.splitlines()[-1] == "2 passed, 0 failed"


def test_an_unknown_tool_names_sandbox_escape_among_what_there_is(cli):
    code, _, err = cli("policy", "check", "sandbox-escape", "make")
    assert code == 2
    assert "unknown tool 'sandbox-escape'" in err and "sandbox_escape" in err


@pytest.mark.parametrize("pattern", ["make && make test", "npm ci; npm test", "cat x | sh"])
def test_lint_finds_a_rule_that_joins_commands(cli, tmp_path, pattern):
    path = tmp_path / "p.yaml"
    path.write_text(f'rules:\n  - {{permission: sandbox_escape, pattern: "{pattern}", '
                    "action: allow}\n")
    code, out, _ = cli("policy", "lint", str(path))
    assert code == 1
    assert f"{path}:2: joined-commands: " in out


def test_lint_reads_sandbox_escape_as_shell_commands(cli, tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text('rules:\n  - {permission: sandbox_escape, pattern: "make  test", '
                    "action: allow}\n")
    _, out, _ = cli("policy", "lint", str(path))
    assert f"{path}:2: never-matches: " in out
