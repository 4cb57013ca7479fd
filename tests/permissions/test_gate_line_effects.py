"""Effects earlier in the line (issue 22): what one sub-command creates, links or enters
changes what a later one touches.

* git run in another directory (``git -C sub``, ``cd sub && git``, ``pushd``, ``env -C``)
  finds the repository there, and a directory laid out as a git dir brings its own
  config (``core.fsmonitor`` runs on ``git status``): checked in bash 5.2 / git 2.39 with
  a harmless ``touch``. No allow but one naming ``-C`` lets it through.
* Each case is judged by the engine with only its own rules (after the default ask), or
  under the built-in defaults (``DEFAULTS``)."""

from __future__ import annotations

import os

import pytest
from judging import A, D, R, assert_meets, judge, project_in

from dm_cc.permissions.shell import analyse
from dm_cc.policy.defaults import DEFAULT_RULES

DEFAULTS = list(DEFAULT_RULES)
# every command, and every path inside the project, allowed: only the line's own
# effects can make it ask
ALL = [A("*"), R("read", "**", "allow"), R("edit", "**", "allow")]
GIT = [A("git *"), A("cd *"), A("pushd *"), A("popd *"), A("env *"), A("ls *"),
       R("read", "**", "allow")]

CASES = [
 # --- theme 3: a git dir planted under another name, reached by -C or cd -------------
 (DEFAULTS, "bash", "git -C sub status", "not-allow"),
 (DEFAULTS, "bash", "git -C sub diff", "not-allow"),
 (DEFAULTS, "bash", "git -C ./sub/ log --oneline -5", "not-allow"),
 (DEFAULTS, "bash", "git -C sub -C . status", "not-allow"),
 (DEFAULTS, "bash", "git --git-dir=sub status", "not-allow"),
 (DEFAULTS, "bash", "git --work-tree=. --git-dir sub status", "not-allow"),
 (DEFAULTS, "bash", "GIT_DIR=sub git status", "not-allow"),
 (DEFAULTS, "bash", "timeout 5 git -C sub status", "not-allow"),
 (GIT, "bash", "cd sub && git status", "not-allow"),
 (GIT, "bash", "cd sub; git diff --stat", "not-allow"),
 (GIT, "bash", "(cd sub && git status)", "not-allow"),
 (GIT, "bash", "cd sub/deeper && cd .. && git status", "not-allow"),
 (GIT, "bash", "pushd sub; git status", "not-allow"),
 (GIT, "bash", "pushd sub >/dev/null && git status; popd", "not-allow"),
 (GIT, "bash", "env -C sub git status", "not-allow"),
 (GIT, "bash", "sh -c 'cd sub && git status'", "not-allow"),
 (GIT, "bash", "cd \"$D\" && git status", "not-allow"),
 (GIT, "bash", "cd - && git status", "not-allow"),
 (GIT, "bash", "popd && git status", "not-allow"),
 (GIT, "bash", "cd && git status", "not-allow"),
 (GIT, "bash", "cd ~/elsewhere && git log", "not-allow"),
 (GIT, "bash", "CDPATH=/tmp cd sub && git status", "not-allow"),
 ([A("*")], "bash", "git -C sub status", "not-allow"),
 ([A("*")], "bash", "cd sub && git status", "not-allow"),
 # a deny still meets the command itself, wherever it runs
 ([A("*"), D("git push *")], "bash", "cd sub && git push", "deny"),
 # the person allowed exactly that directory
 ([*GIT, A("git -C sub *")], "bash", "git -C sub status", "allow"),
 ([*GIT, A("git -C sub *")], "bash", "cd sub && git status", "allow"),
 ([*GIT, A("git -C sub *")], "bash", "cd other && git status", "not-allow"),
 ([*GIT, A("git -C sub *")], "bash", "git -C \"$D\" status", "not-allow"),
 # stays allowed: git in the session's own directory
 (DEFAULTS, "bash", "git status", "allow"),
 (DEFAULTS, "bash", "git log --oneline -5", "allow"),
 (DEFAULTS, "bash", "ls -la && git diff --stat", "allow"),
 (DEFAULTS, "bash", "git -C . status", "allow"),
 (GIT, "bash", "cd . && git status", "allow"),
 (GIT, "bash", "cd sub && ls && cd .. && ls", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    where = project_in(tmp_path_factory.mktemp("line-effects"))
    project, home = where.root, where.home
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("k")
    (project / "sub").mkdir()
    os.symlink(home / ".ssh", project / "sshdir")
    return where


@pytest.mark.parametrize(("rules", "tool", "text", "expect"), CASES,
                         ids=[f"{c[1]}:{c[2][:40]}" for c in CASES])
def test_variant(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)


def test_git_in_the_session_directory_named_absolutely_stays_allowed(where):
    line = f"cd {where.cwd.as_posix()} && git status"
    assert judge([*GIT], "bash", line, where).action == "allow"
    assert judge([*GIT], "bash", f"git -C {where.cwd.as_posix()}/sub status",
                 where).action != "allow"


def test_git_elsewhere_says_why():
    found = analyse("cd sub && git status")
    elsewhere = [c for c in found.commands if "-C" in c.sensitive]
    assert [c.text for c in elsewhere] == ["git -C sub status"]
    assert "its own config" in (elsewhere[0].note or "")
