"""Issue 22, programs by what they can do (1): the read-only commands the built-in
policies allow (and the plan agent runs), viewers and search tools, git, tool option
variables, in-place editors, tar bundles, make variables, and options whose arity is not
certain. Each case is judged by the engine with only its own rules (after the default
ask); ``DEFAULT`` is the built-in default policy, whose allow list is the plan agent's.

Expectations: ``deny`` where a deny rule applies to what really runs, ``not-allow``
where only an allow is at stake; the "stays allowed" cases are ordinary use."""

from __future__ import annotations

import pytest
from judging import A, D, R, assert_meets, project_in

from dm_cc.policy.defaults import DEFAULT_RULES

DEFAULT = list(DEFAULT_RULES)
SSH = R("read", "~/.ssh/**", "deny")
ANY_RM = [A("*"), D("rm *")]

CASES = [
 # --- 1. what the default policy allows: options that read a file they name ---------
 (DEFAULT, "bash", "file -m a.mgc:~/.ssh/id_rsa x", "not-allow"),  # a colon-separated list
 ([*DEFAULT, SSH], "bash", "file -m/etc/magic:~/.ssh/id_rsa x", "deny"),
 ([*DEFAULT, SSH], "bash", "file --magic-file=x:~/.ssh/id_rsa y", "deny"),
 ([*DEFAULT, SSH], "bash", "file --magic=~/.ssh/id_rsa y", "deny"),  # getopt_long prefix
 ([*DEFAULT, SSH], "bash", "file -bf ~/.ssh/id_rsa", "deny"),
 (DEFAULT, "bash", "git diff -O/etc/passwd", "not-allow"),  # diff's orderfile
 (DEFAULT, "bash", "git log -p -O /etc/passwd", "not-allow"),
 ([*DEFAULT, SSH], "bash", "git show -O~/.ssh/id_rsa HEAD", "deny"),
 (DEFAULT, "bash", "git blame --ignore-revs-file=/etc/passwd x", "not-allow"),
 (DEFAULT, "bash", "git blame --ignore-revs-file /etc/passwd x", "not-allow"),
 (DEFAULT, "bash", "git blame --ignore-revs=/etc/passwd x", "not-allow"),  # a prefix
 (DEFAULT, "bash", "tree --gitfile=/etc/passwd", "not-allow"),
 (DEFAULT, "bash", "tree --gitfile /etc/passwd", "not-allow"),
 (DEFAULT, "bash", "tree --infofile=/etc/passwd", "not-allow"),
 (DEFAULT, "bash", "tree -H . --hintro=/etc/passwd", "not-allow"),
 (DEFAULT, "bash", "tree --houtro /etc/passwd", "not-allow"),
 (DEFAULT, "bash", "tree --fromfile /etc/passwd", "not-allow"),
 (DEFAULT, "bash", "wc --files0=/etc/list", "not-allow"),
 (DEFAULT, "bash", "wc --f=/etc/list", "not-allow"),
 (DEFAULT, "bash", "du --files0-fr=/etc/list", "not-allow"),
 (DEFAULT, "bash", "du -sX /etc/list .", "not-allow"),
 (DEFAULT, "bash", "sort --files0-from /etc/list", "not-allow"),
 (DEFAULT, "bash", "sort --random-source=/etc/shadow -R x", "not-allow"),
 (DEFAULT, "bash", "date -f /etc/shadow", "not-allow"),
 (DEFAULT, "bash", "date -r /etc/shadow", "not-allow"),
 (DEFAULT, "bash", "grep -f /etc/shadow x", "not-allow"),
 (DEFAULT, "bash", "grep -rhf /etc/shadow .", "not-allow"),
 (DEFAULT, "bash", "grep --exclude-from=/etc/shadow -r x .", "not-allow"),
 (DEFAULT, "bash", "grep --fil=/etc/shadow x", "not-allow"),
 (DEFAULT, "bash", "rg --ignore-file /etc/shadow x", "not-allow"),
 (DEFAULT, "bash", "rg -f /etc/shadow", "not-allow"),
 (DEFAULT, "bash", "diff --from-file=/etc/shadow a", "not-allow"),
 (DEFAULT, "bash", "diff --to-file /etc/shadow a", "not-allow"),
 (DEFAULT, "bash", "diff -X /etc/shadow a b", "not-allow"),
 (DEFAULT, "bash", "diff -rq . /etc", "not-allow"),
 (DEFAULT, "bash", "git diff --no-index .env /dev/null", "not-allow"),
 (DEFAULT, "bash", "git diff --no-ind a /etc/passwd", "not-allow"),
 (DEFAULT, "bash", "git ls-files -X /etc/shadow", "not-allow"),
 (DEFAULT, "bash", "git ls-files --exclude-from=/etc/shadow", "not-allow"),
 (DEFAULT, "bash", "git blame -S /etc/shadow x", "not-allow"),
 (DEFAULT, "bash", "git log -L 1,5:/etc/passwd", "not-allow"),
 (DEFAULT, "bash", "find ~/.ssh", "not-allow"),  # starting points are read (listed)
 (DEFAULT, "bash", "find -L /etc -name passwd", "not-allow"),
 (DEFAULT, "bash", "find -O3 -D tree /etc -name x", "not-allow"),
 ([*DEFAULT, SSH], "bash", "find ~/.ssh -type f", "deny"),
 (DEFAULT, "bash", "find -files0-from /etc/list -name x", "not-allow"),
 # ... that write
 (DEFAULT, "bash", "tree -o out.txt", "not-allow"),
 (DEFAULT, "bash", "tree -L 2 -R -H . -o index.html", "not-allow"),
 (DEFAULT, "bash", "uniq a.txt out.txt", "not-allow"),
 (DEFAULT, "bash", "uniq -c -- a.txt out.txt", "not-allow"),
 (DEFAULT, "bash", "sort -o out.txt a.txt", "not-allow"),
 (DEFAULT, "bash", "sort -uo out.txt a.txt", "not-allow"),
 (DEFAULT, "bash", "sort --out=out.txt a.txt", "not-allow"),
 (DEFAULT, "bash", "sort -T /tmp/spool a.txt", "not-allow"),  # temporaries go there
 (DEFAULT, "bash", "sort --temporary-directory=.git a.txt", "not-allow"),
 (DEFAULT, "bash", "file -C -m magic", "not-allow"),
 (DEFAULT, "bash", "file --compile -m magic", "not-allow"),
 (DEFAULT, "bash", "find . -fprint out", "not-allow"),
 (DEFAULT, "bash", "find . -fls out", "not-allow"),
 (DEFAULT, "bash", "find . -fprintf out %p", "not-allow"),
 (DEFAULT, "bash", "find . -name x -delete", "not-allow"),
 (DEFAULT, "bash", "git diff --output=x.patch", "not-allow"),
 (DEFAULT, "bash", "git log --output x.patch", "not-allow"),
 (DEFAULT, "bash", "git show --out=x.patch", "not-allow"),
 (DEFAULT, "bash", "date -s '2020-01-01'", "not-allow"),
 (DEFAULT, "bash", "date --set=tomorrow", "not-allow"),
 # ... that run a program
 (DEFAULT, "bash", "sort --compress-program=sh x", "not-allow"),
 (DEFAULT, "bash", "sort --compress=sh x", "not-allow"),
 (DEFAULT, "bash", "sort --comp sh x", "not-allow"),
 (DEFAULT, "bash", "find . -exec id \\;", "not-allow"),
 (DEFAULT, "bash", "find . -ok id \\;", "not-allow"),
 (DEFAULT, "bash", "find . -execdir id {} +", "not-allow"),
 (ANY_RM, "bash", "find . -okdir rm {} \\;", "deny"),
 (DEFAULT, "bash", "rg --pre ./x.sh foo", "not-allow"),
 (DEFAULT, "bash", "rg --pre=./x.sh --pre-glob '*' foo", "not-allow"),
 (DEFAULT, "bash", "rg --hostname-bin=./x.sh foo", "not-allow"),
 (DEFAULT, "bash", "git diff --ext-diff", "not-allow"),
 (DEFAULT, "bash", "git log -p --ext", "not-allow"),
 (DEFAULT, "bash", "git show --textconv HEAD", "not-allow"),
 (DEFAULT, "bash", "git -c diff.external=./x.sh diff", "not-allow"),
 (DEFAULT, "bash", "git -c core.pager='sh -c id' log", "not-allow"),
 (DEFAULT, "bash", "git --config-env=core.pager=X log", "not-allow"),
 (DEFAULT, "bash", "GIT_PAGER='sh -c id' git log", "not-allow"),
 (DEFAULT, "bash", "GIT_EXTERNAL_DIFF=./x.sh git diff", "not-allow"),
 (DEFAULT, "bash", "git --exec-path=/tmp log", "not-allow"),
 # stays allowed: ordinary read-only use
 (DEFAULT, "bash", "ls -la", "allow"),
 (DEFAULT, "bash", "ls -la src", "allow"),
 (DEFAULT, "bash", "git status", "allow"),
 (DEFAULT, "bash", "git log --oneline -5", "allow"),
 (DEFAULT, "bash", "git log -p -- src/app.py", "allow"),
 (DEFAULT, "bash", "git diff --stat HEAD~1", "allow"),
 (DEFAULT, "bash", "git diff --cached", "allow"),
 (DEFAULT, "bash", "git show HEAD:README.md", "allow"),
 (DEFAULT, "bash", "git blame -L 10,20 src/app.py", "allow"),
 (DEFAULT, "bash", "git ls-files -m", "allow"),
 (DEFAULT, "bash", "git rev-parse --show-toplevel", "allow"),
 (DEFAULT, "bash", "git branch --show-current", "allow"),
 (DEFAULT, "bash", "grep -rn foo src", "allow"),
 (DEFAULT, "bash", "grep -rn --include='*.py' foo .", "allow"),
 (DEFAULT, "bash", "rg -n foo src", "allow"),
 (DEFAULT, "bash", "rg --files", "allow"),
 (DEFAULT, "bash", "cat README.md | head", "allow"),
 (DEFAULT, "bash", "head -n 20 src/app.py", "allow"),
 (DEFAULT, "bash", "tail -f log.txt", "allow"),
 (DEFAULT, "bash", "wc -l src/app.py", "allow"),
 (DEFAULT, "bash", "find . -name '*.py'", "allow"),
 (DEFAULT, "bash", "find src tests -type f -name '*.py' -newer setup.py", "allow"),
 (DEFAULT, "bash", "find -L . -maxdepth 2", "allow"),
 (DEFAULT, "bash", "find", "allow"),
 (DEFAULT, "bash", "sort -u -k2,2 -t, data.csv", "allow"),
 (DEFAULT, "bash", "sort -n data.csv | uniq -c", "allow"),
 (DEFAULT, "bash", "uniq -c data.csv", "allow"),
 (DEFAULT, "bash", "cut -d, -f1 data.csv", "allow"),
 (DEFAULT, "bash", "diff -u a.txt b.txt", "allow"),
 (DEFAULT, "bash", "file src/app.py", "allow"),
 (DEFAULT, "bash", "stat -c %s src/app.py", "allow"),
 (DEFAULT, "bash", "du -sh src", "allow"),
 (DEFAULT, "bash", "tree -L 2 src", "allow"),
 (DEFAULT, "bash", "tree -a -I node_modules", "allow"),
 (DEFAULT, "bash", "df -h", "allow"),
 (DEFAULT, "bash", "echo hello", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("readonly"))


@pytest.mark.parametrize(("rules", "tool", "text", "expect"), CASES,
                         ids=[f"{c[1]}:{c[2][:50]}" for c in CASES])
def test_case(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)
