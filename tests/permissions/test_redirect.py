"""The `redirect` request (issue 25): one per simple command run with a redirection,
a heredoc or a here-string -- its own or an enclosing compound command's -- named as
the command's `bash` request. Allowed unless a rule naming `redirect` says otherwise,
so nothing asks about it under the defaults, a `* *` rule or a read-only agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.config import HostFilesystem
from dm_cc.core.approval import suggested_rules
from dm_cc.permissions import REDIRECT, PathContextDirs, Rule, decide
from dm_cc.permissions.requests import shell_requests
from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.judge import MAX_REFERENCES
from dm_cc.policy.defaults import DEFAULT_RULES
from dm_cc.policy.effects import Capabilities, limit_rules
from dm_cc.tools.catalog import effects_of, known_permissions

ROOT = Path("/nonexistent-project")
WHERE = PathContextDirs(root=ROOT, cwd=ROOT, home=Path("/nonexistent-home"), fs=HostFilesystem())


def redirected(line: str) -> list[str]:
    return [c.text for c in analyse(line).commands if c.redirected]


@pytest.mark.parametrize(("line", "expect"), [
    ("git status", []),
    ("git status 2>&1", ["git status"]),
    ("git status 2>/dev/null", ["git status"]),
    ("git status >&2", ["git status"]),
    ("git diff > out.patch", ["git diff"]),
    ("sort < in.txt", ["sort"]),
    ("cat <<EOF\nhi\nEOF", ["cat"]),
    ("python3 <<< 'print(1)'", ["python3"]),
    ("ls && git log > f", ["git log"]),          # a list's redirect: its last command's
    ("git log > f && ls", ["git log"]),
    ("{ git log; ls; } > f", ["git log", "ls"]),  # a compound command's: every command inside
    ("(git log; ls) 2>&1", ["git log", "ls"]),
    ("for i in 1 2; do echo $i; done > f", ["echo $i"]),
    ("f() { ls; } > log; f", ["ls"]),
    ("echo $(git status 2>&1)", ["git status"]),
    ("bash -c 'ls > f'", ["ls"]),                 # in the script bash runs
    ("! git diff --quiet 2>/dev/null", ["git diff --quiet"]),
])
def test_the_commands_run_redirected(line, expect):
    assert redirected(line) == expect


@pytest.mark.parametrize("line", ["> out.txt", "2>&1", "< in.txt", "{ x=1; } > f",
                                  "ls; > f"])
def test_a_redirection_no_command_carries_is_one_request_named_as_the_line(line):
    """`> f` truncates f with no command: the line's one `redirect` request (what
    Gemini CLI sees as a redirected line)."""
    found = [r for r in shell_requests("bash", line, WHERE) if r.permission == REDIRECT]
    assert [(r.pattern, r.language) for r in found] == [(line, "shell")]
    assert not analyse("ls > f; > g").redirected   # a command carries one: its request


def test_one_redirect_request_per_redirected_command_named_as_its_bash_request():
    requests = shell_requests("bash", "git status 2>&1 && ls > /dev/null; git status", WHERE)
    bash = [r.pattern for r in requests if r.permission == "bash"]
    redirect = [(r.pattern, r.words, r.language) for r in requests if r.permission == REDIRECT]
    assert bash == ["git status", "ls"]           # each command once, redirected if once so
    assert redirect == [("git status", ("git", "status"), "shell"), ("ls", ("ls",), "shell")]
    assert not [r for r in shell_requests("bash", "git status | head", WHERE)
                if r.permission == REDIRECT]


@pytest.mark.parametrize("line", ["git status 2>&1", "git log --oneline 2>/dev/null | head -5",
                                  "cat <<EOF\nx\nEOF", "ls > /dev/null", "grep -c x <<< abc",
                                  "> out.txt", "2>&1", "{ x=1; } > f"])
@pytest.mark.parametrize("later", [[], [Rule("*", "*", "ask", source="me")],
                                   [Rule("*", "*", "deny", source="me"),
                                    Rule("bash", "*", "allow", source="me")]])
def test_nothing_asks_about_it_unless_a_rule_names_it(line, later):
    """The defaults allow it; a wildcard permission (`* * ask`, `* * deny`) does not
    cover it; with no rule at all it is allowed: the line is decided as before."""
    requests = shell_requests("bash", line, WHERE)
    assert any(r.permission == REDIRECT for r in requests)
    without = [r for r in requests if r.permission != REDIRECT]
    for rules in ([*DEFAULT_RULES, *later], later):
        assert decide(requests, rules).action == decide(without, rules).action, rules


def test_a_rule_naming_it_decides_and_always_suggests_the_commands_prefix():
    rules = [*DEFAULT_RULES, Rule("redirect", "*", "ask", source="me"),
             Rule("redirect", "git *", "allow", source="me")]
    assert decide(shell_requests("bash", "git log 2>&1", WHERE), rules).action == "allow"
    asked = decide(shell_requests("bash", "ls -la 2>&1", WHERE), rules)
    assert asked.action == "ask"
    asking = [v.request for v in asked.verdicts if v.action == "ask"]
    assert [r.permission for r in asking] == [REDIRECT]
    assert suggested_rules(asking, "bash") == (
        Rule("redirect", "ls *", "allow", reason="approved for bash", source="approval:session"),)
    denied = [*rules, Rule("redirect", "python3 *", "deny", source="me")]
    assert decide(shell_requests("bash", "python3 <<EOF\nprint(1)\nEOF", WHERE),
                  denied).action == "deny"
    assert decide(shell_requests("bash", "python3 x.py", WHERE),
                  [*denied, Rule("bash", "python3 *", "allow", source="me")]).action == "allow"


@pytest.mark.parametrize("agent", ["plan", "explore", "reviewer"])
def test_a_read_only_agent_may_redirect_what_it_may_run(agent):
    """A redirect only reads by itself (its file's request says what is written): a
    read-only agent's ceiling allows it; a redirect to a file is still an edit."""
    assert effects_of(REDIRECT) == frozenset({"read"})
    capabilities = Capabilities({p: effects_of(p) for p in known_permissions()})
    ceiling = list(limit_rules(BUILTIN_AGENTS[agent], capabilities))
    assert decide(shell_requests("bash", "git log 2>&1 | head", WHERE),
                  ceiling).action == "allow"
    assert decide(shell_requests("bash", "git log > log.txt", WHERE), ceiling).action == "deny"


def test_at_most_one_redirect_request_per_command():
    """The request cost: a redirected command adds one request, never more (a line of
    many redirected commands at most doubles its command requests)."""
    line = "; ".join(f"echo {i} 2>&1 >> log" for i in range(MAX_REFERENCES // 16))
    requests = shell_requests("bash", line, WHERE)
    bash = [r for r in requests if r.permission == "bash"]
    redirect = [r for r in requests if r.permission == REDIRECT]
    assert [r.pattern for r in redirect] == [r.pattern for r in bash]
