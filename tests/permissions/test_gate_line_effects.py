"""Effects earlier in the line (issue 22): what one sub-command creates, links or enters
changes what a later one touches.

* git run in another directory (``git -C sub``, ``cd sub && git``, ``pushd``, ``env -C``)
  finds the repository there, and a directory laid out as a git dir brings its own
  config (``core.fsmonitor`` runs on ``git status``): checked in bash 5.2 / git 2.39 with
  a harmless ``touch``. No allow but one naming ``-C`` lets it through.
* Each case is judged by the engine with only its own rules (after the default ask), or
  under the built-in defaults (``DEFAULTS``)."""

from __future__ import annotations

import pytest
from judging import A, D, R, assert_meets, judge, project_with_key

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
 # --- theme 1: links left by an extractor, a patch, a checkout, a copy ----------------
 (ALL, "bash", "tar xf a.tar && cat link/id_rsa", "not-allow"),
 (ALL, "bash", "tar -xzf a.tgz; cat l/k", "not-allow"),
 (ALL, "bash", "tar --extract --file a.tar && head -1 ./l/k", "not-allow"),
 (ALL, "bash", "tar --extr -f a.tar && cat l/k", "not-allow"),
 (ALL, "bash", "tar xf a.tar -C out && cat out/l/k", "not-allow"),
 (ALL, "bash", "tar -C out -xf a.tar && cd out && cat l/k", "not-allow"),
 (ALL, "bash", "tar xf a.tar -C out && cat $PWD/out/l/k", "not-allow"),
 (ALL, "bash", "tar xf a.tar -C out && cat /abs/project/out/l/k", "not-allow"),
 (ALL, "bash", "cd out && tar xf ../a.tar && cat l/k", "not-allow"),
 (ALL, "bash", "bsdtar -xf a.tar && wc -c l/k", "not-allow"),
 (ALL, "bash", "sudo tar xf a.tar; cat l/k", "not-allow"),
 (ALL, "bash", "unzip -q x.zip; cat l/x", "not-allow"),
 (ALL, "bash", "unzip x.zip -d out && cat out/l/x", "not-allow"),
 (ALL, "bash", "cpio -idm < a.cpio && cat l/k", "not-allow"),
 (ALL, "bash", "7z x a.7z && cat l/k", "not-allow"),
 (ALL, "bash", "git apply x.patch && cat l", "not-allow"),
 (ALL, "bash", "git apply x.patch && echo pwned > l/authorized_keys", "not-allow"),
 (ALL, "bash", "patch -p1 < x.patch && cat l/k", "not-allow"),
 (ALL, "bash", "patch -d sub -p1 -i x.patch && cat sub/l/k", "not-allow"),
 (ALL, "bash", "git checkout other-branch -- l && cat l/k", "not-allow"),
 (ALL, "bash", "git switch other && cat l/k", "not-allow"),
 (ALL, "bash", "git stash pop && cat l/k", "not-allow"),
 (ALL, "bash", "git reset --hard origin/x && cat l/k", "not-allow"),
 (ALL, "bash", "git clone ../evil repo && cat repo/l/k", "not-allow"),
 (ALL, "bash", "git clone ../evil && cat evil/l/k", "not-allow"),
 (ALL, "bash", "git worktree add ../wt x && cat ../wt/l/k", "not-allow"),
 (ALL, "bash", "rsync -a src/ . && cat l/k", "not-allow"),
 (ALL, "bash", "rsync -a src/ dst && cat dst/l/k", "not-allow"),
 (ALL, "bash", "cp -a src/. dst && cat dst/l/k", "not-allow"),
 (ALL, "bash", "cp -r src dst; cat dst/l", "not-allow"),
 (ALL, "bash", "cp -rt dst src && cat dst/src/l/k", "not-allow"),
 (ALL, "bash", "mv src/l dst && cat dst/k", "not-allow"),
 (ALL, "bash", "bash -c 'tar xf a.tar' && cat l/k", "not-allow"),
 (ALL, "bash", "tar xf a.tar | cat l/k", "not-allow"),
 # an archive extracted here may replace the repository's config: git after it asks
 (ALL, "bash", "tar xf a.tar && git status", "not-allow"),
 (ALL, "bash", "unzip -o x.zip; git diff", "not-allow"),
 # a deny still sees the path as written
 ([*ALL, R("read", "l/**", "deny")], "bash", "tar xf a.tar && cat l/k", "deny"),
 # stays allowed: nothing planted, or planted elsewhere, or read before
 (ALL, "bash", "tar xzf x.tgz", "allow"),
 (ALL, "bash", "cat l/k; tar xf a.tar", "allow"),
 (ALL, "bash", "tar czf out.tgz src && cat README.md", "allow"),
 (ALL, "bash", "tar tf a.tar && cat README.md", "allow"),
 (ALL, "bash", "tar xf a.tar -C out && cat README.md src/app.py", "allow"),
 (ALL, "bash", "unzip -l x.zip && cat README.md", "allow"),
 (ALL, "bash", "cp a.txt b.txt && cat b.txt", "allow"),
 (ALL, "bash", "git apply --check x.patch && cat README.md", "allow"),
 (ALL, "bash", "git stash list && cat README.md", "allow"),
 (ALL, "bash", "git pull && git log --oneline -5", "allow"),
 (ALL, "bash", "git checkout main && git status", "allow"),
 (ALL, "bash", "git status && cat README.md", "allow"),
 # --- theme 2: hard links (a second name whose reads and writes are the target's) ---
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash", "link ~/.ssh/id_rsa k && cat k", "deny"),
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash", "ln ~/.ssh/id_rsa k && cat k", "deny"),
 ([*ALL, R("edit", "~/.ssh/**", "deny")], "bash",
  "ln ~/.ssh/authorized_keys k; echo key >> k", "deny"),
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash", "ln -t d ~/.ssh/id_rsa && cat d/id_rsa",
  "deny"),
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash",
  "cp --link ~/.ssh/id_rsa d/ && cat d/id_rsa", "deny"),
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash", "ln -s -t d ~/.ssh && cat d/.ssh/id_rsa",
  "deny"),
 ([*ALL, R("read", "~/.ssh/**", "deny")], "bash", "ln -sft d ~/.ssh; cat d/.ssh/id_rsa",
  "deny"),
 (ALL, "bash", "ln /outside/f k && cat k", "not-allow"),
 (ALL, "bash", "ln /outside/f k && echo x > k", "not-allow"),
 (ALL, "bash", "ln -s \"$T\" k && cat k/x", "not-allow"),
 (ALL, "bash", "ln -s x \"$L\" && cat anything", "not-allow"),
 (ALL, "bash", "cp -s /outside/f k && cat k", "not-allow"),
 # stays allowed: a link inside the project, and paths not under it
 (ALL, "bash", "ln -s src/app.py app.py && cat README.md", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    where = project_with_key(tmp_path_factory.mktemp("line-effects"))
    (where.root / "sub").mkdir()
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


@pytest.mark.parametrize("line", ["link ~/.ssh/id_rsa k && cat k", "ln ~/.ssh/id_rsa k; cat k",
                                  "cp -l ~/.ssh/id_rsa k && cat k",
                                  "ln -t . ~/.ssh/id_rsa && cat id_rsa",
                                  "ln -P ~/.ssh/id_rsa k && cat k"])
def test_a_hard_link_is_read_as_its_target(line):
    files = analyse(line).files
    name = line.rsplit(" ", 1)[1]
    assert (name, "read", True) in [tuple(f)[:3] for f in files]      # unknown target
    assert ("~/.ssh/id_rsa", "read", False) in [tuple(f)[:3] for f in files]


@pytest.mark.parametrize("line", ["tar xf a.tar && cat l/k", "git apply p && cat l/k",
                                  "unzip x.zip && cd l && cat k", "cp -a s d && cat d/k"])
def test_a_path_under_what_the_line_planted_is_an_unknown_target(line):
    found = analyse(line).files
    assert found and all(f.dynamic for f in found if f.path.endswith("k"))
