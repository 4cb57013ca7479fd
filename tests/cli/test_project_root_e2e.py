"""A ``.dm_cc/`` planted in a sub-directory of a repository (by a command, or shipped
there) does not make a later session started in that sub-directory drop the
repository's own ``.dm_cc/``: the team's deny holds, and the planted directory is
named on stderr. Real processes, real directories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dm_cc.compose import open_world

TEAM = """\
rules:
  - {permission: bash, pattern: "curl *", action: deny, reason: "the team says no"}
"""
PLANTED = """\
rules:
  - {permission: bash, pattern: "*", action: allow}
"""


@pytest.fixture
def repo(project: Path) -> Path:
    """The repository with the team's policy, and sub/ holding a planted .dm_cc/."""
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(TEAM)
    planted = project / "sub" / ".dm_cc"
    planted.mkdir(parents=True)
    (planted / "policy.yaml").write_text(PLANTED)
    (planted / "agents").mkdir()
    (planted / "agents" / "free.md").write_text(
        "---\ndescription: anything goes\nmode: primary\npermission: {bash: allow}\n---\nGo.\n")
    return project


def dm_cc(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dm_cc", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def warned(stderr: str, repo: Path) -> bool:
    return (f"dm_cc: warning: {repo / 'sub' / '.dm_cc'}/ is ignored" in stderr
            and f"the project root is {repo}" in stderr)


def test_policy_check_in_the_sub_directory_keeps_the_teams_deny(repo):
    done = dm_cc(repo / "sub", "policy", "check", "bash", "curl https://example.org")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deny: bash 'curl https://example.org'")
    assert f"{repo / '.dm_cc' / 'policy.yaml'}:2" in done.stdout
    assert warned(done.stderr, repo)


def test_run_in_the_sub_directory_keeps_the_teams_deny(repo, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "bash", "args": {"command": "curl x"}},
                                  {"text": "done"}]))
    done = dm_cc(repo / "sub", "run", "--json", "--model", f"scripted:{script}", "go")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (decided,) = [e for e in events if e["type"] == "tool_decided"]
    assert decided["decision"] == "deny"
    assert decided["requests"][0]["reason"] == "the team says no"
    assert warned(done.stderr, repo)
    listed = json.loads(dm_cc(repo, "sessions", "list", "--json").stdout)
    assert [Path(s["project"]) for s in listed] == [repo]    # the repository's session


def test_the_planted_agents_are_not_read_either(repo):
    done = dm_cc(repo / "sub", "policy", "check", "--agent", "free", "bash", "curl x")
    assert done.returncode == 2 and "unknown agent 'free'" in done.stderr, done.stderr


def test_the_stores_are_the_repositorys_from_any_sub_directory(repo):
    top, sub = open_world(cwd=repo), open_world(cwd=repo / "sub")
    assert sub.root == top.root == repo
    assert sub.approvals.path == top.approvals.path
    assert sub.audit.path == top.audit.path
    assert sub.root_warnings == (f"{repo / 'sub' / '.dm_cc'}/ is ignored: the project root is "
                                 f"{repo} (the repository), and only its .dm_cc/ is the "
                                 "project's",)
    assert top.root_warnings == ()


def test_without_a_repository_a_planted_dm_cc_below_the_outermost_is_ignored(project, tmp_path):
    """No .git anywhere: the outermost .dm_cc/ decides (tmp_path is outside HOME)."""
    work = tmp_path / "work"
    (work / ".dm_cc").mkdir(parents=True)
    (work / ".dm_cc" / "policy.yaml").write_text(TEAM)
    (work / "sub" / ".dm_cc").mkdir(parents=True)
    (work / "sub" / ".dm_cc" / "policy.yaml").write_text(PLANTED)
    done = dm_cc(work / "sub", "policy", "check", "bash", "curl x")
    assert done.stdout.startswith("deny: "), done.stdout + done.stderr
    assert f"{work / 'sub' / '.dm_cc'}/ is ignored" in done.stderr
