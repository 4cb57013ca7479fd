"""Variants for issue 10, themes 4, 5, 6 and 9: option tables audited against the
programs' own documentation, protected files reached other ways, reads through git,
and programs that run commands through their own syntax. Each is judged by the engine
with only its own rules (after the default ask)."""

from __future__ import annotations

import pytest
from judging import A, D, R, assert_meets, project_in

READ = R("read", "**", "allow")
EDIT = R("edit", "**", "allow")
SECRET = R("read", ".env*", "deny")
SSH = R("read", "~/.ssh/**", "deny")


def allowing(command, *more):
    """`command *` allowed, reads and edits in the project allowed."""
    return [A(f"{command} *"), READ, EDIT, *more]


CASES = [
    # --- 4. option tables: a wrong arity must not hide the next option
    (allowing("sed"), "sed -s -i s/a/b/ f", "allow"),  # edits f: allowed by edit **
    ([A("sed *"), READ], "sed -s -i s/a/b/ f", "not-allow"),
    ([A("sed *"), READ], "sed -s -n 1p f", "allow"),
    ([A("stat *"), READ, SECRET], "stat -t .env", "deny"),
    ([A("shuf *"), READ], "shuf -e -o out a b", "not-allow"),
    ([A("xxd *"), READ], "xxd -C -r a b", "not-allow"),
    ([A("gzip *"), READ], "gzip -L f", "not-allow"),
    # options that read a file
    ([A("file *"), READ, SSH], "file -m ~/.ssh/id_rsa x", "deny"),
    ([A("file *"), READ, SSH], "file --magic-file=~/.ssh/id_rsa x", "deny"),
    ([A("find *"), READ, SSH], "find -files0-from ~/.ssh/id_rsa", "deny"),
    ([A("rsync *"), READ, SSH], "rsync --read-batch=~/.ssh/id_rsa a b", "deny"),
    ([A("rsync *"), READ], "rsync --write-batch=/tmp/w a b", "not-allow"),
    ([A("rsync *"), READ, EDIT], "rsync --only-write-batch=~/.bashrc a b", "not-allow"),
    ([A("curl *"), READ], "curl -w '%output{/tmp/x}y' https://example.com", "not-allow"),
    ([A("curl *"), READ, SSH], "curl -w @~/.ssh/id_rsa https://example.com", "deny"),
    ([A("wget *"), READ], "wget --config /tmp/rc https://example.com", "not-allow"),
    ([A("less *"), READ], "less --lesskey-content='x' README", "not-allow"),
    ([A("git ls-files *"), READ, SSH], "git ls-files --exclude-from=~/.ssh/id_rsa", "deny"),
    ([A("git ls-files *"), READ, SSH], "git ls-files -X ~/.ssh/id_rsa", "deny"),
    # options that write, and GNU abbreviations of them
    ([A("sort *"), READ], "sort --o=out f", "not-allow"),
    ([A("sort *"), READ], "sort --ou out f", "not-allow"),
    ([A("sort *"), READ], "sort -k 1 -o out f", "not-allow"),
    ([A("git diff *"), READ], "git diff --outp=x", "not-allow"),
    ([A("patch *"), READ, EDIT], "patch -d .git -p1 -i x.diff", "not-allow"),
    ([A("patch *"), READ], "patch -r /tmp/rej f x.diff", "not-allow"),
    # options that change directory
    ([A("make *"), READ], "make -C /tmp/evil", "not-allow"),
    ([A("make *"), READ], "make -C docs html", "allow"),
    ([A("npm *"), READ], "npm --prefix /tmp/evil test", "not-allow"),
    ([A("npm *"), READ], "npm -C /tmp/evil test", "not-allow"),
    ([A("npm *"), READ], "npm --prefix sub test", "allow"),
    # wrappers' own long options, abbreviated as GNU getopt allows, still take their value
    ([A("*"), D("rm *")], "nice --adj 5 rm -rf x", "deny"),
    ([A("*"), D("rm *")], "env --s 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "env --chd /tmp rm -rf x", "deny"),
    ([A("*"), D("rm *")], "timeout --sig KILL 5 rm -rf x", "deny"),
    ([A("*"), D("rm *")], "sudo --us root rm -rf x", "deny"),
    ([A("*"), D("rm *")], "stdbuf --out L rm x", "deny"),
    ([A("*"), D("rm *")], "ionice --cla 2 rm x", "deny"),
    ([A("*"), D("rm *")], "flock --comm 'rm -rf x' f", "deny"),
    ([A("*"), D("rm *")], "su --comm='rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "xargs --max-a 1 rm", "deny"),
    # wrappers the tables did not know
    ([A("*"), D("rm *")], "tmux neww -d -n w 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "tmux splitw -h -l 10 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "tmux display-popup -E 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "capsh --drop=cap_net_raw -- -c 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "at 10:00 tomorrow <<EOF\nrm -rf x\nEOF", "deny"),
    ([A("*"), D("rm *")], "echo 'rm -rf x' | batch", "not-allow"),
    ([A("*"), D("rm *")], "su -l root --session-command 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "oc rsh -c app mypod rm -rf x", "deny"),
    ([A("*"), D("rm *")], "heroku run -a app rm -rf x", "deny"),
    ([A("*"), D("rm *")], "sops exec-file s.yaml 'rm -rf x {}'", "deny"),
    ([A("*"), D("rm *")], "flyctl ssh console -a app --command 'rm -rf x'", "deny"),
    ([A("*"), D("rm *")], "npm explore lodash -- rm -rf x", "deny"),
    ([A("*"), D("rm *")], "envchain aws rm -rf x", "deny"),
    ([A("*"), READ, SSH], "xargs cat <<< ~/.ssh/id_rsa", "deny"),
    ([A("*"), READ, SECRET], "xargs -n1 head <<EOF\n.env\nEOF", "deny"),
    ([A("*"), D("rm *")], "xargs <<< 'rm -rf x'", "allow"),
    ([A("*"), D("rm *")], "coreutils --coreutils-prog=rm -rf x", "deny"),
    ([A("*"), D("rm -rf *")], "coreutils --coreutils-p=rm -rf x", "deny"),
    # deny rules catch the flags whatever their spelling: abbreviations down to one
    # letter, options that imply others, values that mean a flag
    ([A("*"), D("rm -rf *")], "rm --r --f x", "deny"),
    ([A("*"), D("rm -rf *")], "rm --rec --forc x", "deny"),
    ([A("*"), D("rm -rf *")], "rm -r --interactive=never x", "deny"),
    ([A("*"), D("cp -r *")], "cp -a src dst", "deny"),
    ([A("*"), D("cp -r *")], "cp --archive src dst", "deny"),
    ([A("*"), D("npm install -g *")], "npm install --location=global evil", "deny"),
    ([A("*"), D("rm -rf *"), EDIT], "rm -r x", "allow"),
    ([A("*"), D("npm install -g *")], "npm i -g evil", "deny"),
    ([A("*"), D("npm install -g *")], "npm add --global evil", "deny"),
    ([A("*"), D("npm install -g *")], "npm isntall -g evil", "deny"),
    ([A("*"), D("pip install *")], "python3 -m pip install evil", "deny"),
    ([A("*"), D("docker rm -f *")], "docker container rm -f x", "deny"),
    ([A("*"), D("docker rmi *")], "docker image rm x", "deny"),
    ([A("*"), D("npm install -g *")], "npm i evil", "allow"),
    # --- awk programs whose risky parts hide behind comments or unusual regexes
    ([A("awk *"), READ], "awk 'BEGIN { # \"\n system(\"id\") }'", "not-allow"),
    ([A("awk *"), READ], "awk 'BEGIN { y = 2 ? /\"/ : 0; system(\"id\") }'", "not-allow"),
    ([A("gawk *"), READ], "gawk 'BEGIN { f = \"system\"; @f(\"id\") }'", "not-allow"),
    ([A("awk *"), READ], "awk 'BEGIN { while ((getline line < \"/etc/x\") > 0) print line }'",
     "not-allow"),
    ([A("awk *"), READ], "awk 'BEGIN { # \"\n print \"x\" > \"/tmp/f\" }'", "not-allow"),
    # files a program names in its own syntax are requested
    ([A("awk *"), READ, SSH], "awk 'BEGIN { while ((getline l < \"~/.ssh/id_rsa\") > 0) print l }'",
     "not-allow"),
    ([A("*"), READ, SECRET], "awk 'BEGIN { getline x < \".env\"; print x }'", "deny"),
    ([A("*"), READ, SECRET], "gawk '{ print > \".env.local\" }' f", "not-allow"),
    ([A("*"), READ, SECRET], "yq -n 'load_str(\".env\")'", "deny"),
    ([A("*"), READ, SECRET], "yq e -n 'load(\"config/.env.yaml\")'", "deny"),
    ([A("*"), READ, SECRET], "jq -n 'include \".env\"; 1'", "deny"),
    ([A("yq *"), READ], "yq -i '.a = 1' f.yaml", "not-allow"),
    ([A("yq *"), READ], "yq '.a' f.yaml", "allow"),
    ([A("awk *"), READ], "awk '$1 > 5 { print $2 }' f", "allow"),
    ([A("awk *"), READ], "awk -F: '{ print $1 }' f", "allow"),
    # --- 5. protected files by what is done to them
    ([A("*"), READ, EDIT], "echo x > .GIT/config", "not-allow"),
    ([A("*"), READ, EDIT], "ln .git/config x", "not-allow"),
    ([A("*"), READ, EDIT], "cp -l .git/config x", "not-allow"),
    ([A("*"), READ, EDIT], "cp --link .git/hooks/pre-commit x", "not-allow"),
    ([A("*"), READ, EDIT], "install -t .git/hooks evil", "not-allow"),
    ([A("*"), READ, EDIT], "install --target-directory=.git/hooks evil", "not-allow"),
    ([A("*"), READ, EDIT], "ln --target-directory=.dm_cc x", "not-allow"),
    ([A("*"), READ, EDIT], "cp -t .git/hooks evil", "not-allow"),
    ([A("*"), READ, EDIT], "mv -t .dm_cc evil", "not-allow"),
    ([A("*"), READ, EDIT], "tar -x -C .git -f a.tar", "not-allow"),
    ([A("*"), READ, EDIT], "unzip -d .dm_cc a.zip", "not-allow"),
    ([A("*"), READ, SSH], "tar -C ~ -cf /tmp/a.tar .ssh/id_rsa", "deny"),
    ([A("*"), READ, SSH], "tar -czf - -C ~/.ssh id_rsa", "deny"),
    ([A("*"), READ, EDIT], "rsync evil .git/hooks/pre-commit", "not-allow"),
    ([A("*"), READ, EDIT], "git mv evil .git/hooks/pre-commit", "not-allow"),
    ([A("*"), READ, EDIT], "git rm .dm_cc/policy.yaml", "not-allow"),
    ([A("*"), READ, EDIT], "git apply --directory=.git x.patch", "not-allow"),
    ([A("*"), READ, EDIT], "git checkout HEAD -- .dm_cc/policy.yaml", "not-allow"),
    ([A("*"), READ, EDIT], "git restore --source=HEAD~3 .git/hooks", "not-allow"),
    ([A("*"), READ, EDIT], "git --git-dir=planted log", "not-allow"),
    # a symlink made earlier in the line: paths through it are also judged at its target
    ([A("*"), READ, SSH], "ln -s ~/.ssh k && cat k/id_rsa", "deny"),
    ([A("*"), READ, SSH], "mkdir d; ln -s ../../h d/up && cat d/up/.ssh/id_rsa", "not-allow"),
    ([A("*"), READ, EDIT], "ln -s .git g && echo x > g/config", "not-allow"),
    ([A("*"), READ, EDIT], "git --work-tree=/ status", "not-allow"),
    # a git directory under another name: every git directory has a HEAD file
    ([A("*"), READ, EDIT], "mkdir -p d/refs d/objects && echo 'ref: refs/heads/m' > d/HEAD",
     "not-allow"),
    ([A("*"), READ, EDIT], "cp x d/head", "not-allow"),
    ([A("*"), READ, EDIT], "git init --bare d", "not-allow"),
    ([A("*"), READ, EDIT], "git init --separate-git-dir=d w", "not-allow"),
    ([A("*"), READ, EDIT], "git clone --mirror https://example.com/r d", "not-allow"),
    ([A("*"), READ, EDIT], "git clone --bare https://example.com/r d", "not-allow"),
    ([A("git init *"), READ, EDIT], "git init", "allow"),
    ([A("tar *"), READ, EDIT], "tar -tzf a.tgz", "allow"),
    ([A("tar *"), READ, EDIT], "tar -czf a.tgz src", "allow"),
    ([A("git checkout *"), READ], "git checkout main", "allow"),
    ([A("git rm *"), READ, EDIT], "git rm old.txt", "allow"),
    ([A("git mv *"), READ, EDIT], "git mv a.txt b.txt", "allow"),
    # --- 6. reads through git
    ([A("git show *"), READ, SECRET], "git show HEAD:.env", "deny"),
    ([A("git show *"), READ, SECRET], "git show HEAD~2:config/.env.production", "deny"),
    ([A("git show *"), READ, SECRET], "git show :.env", "deny"),
    ([A("git cat-file *"), READ, SECRET], "git cat-file -p HEAD:.env", "deny"),
    ([A("git blame *"), READ, SECRET], "git blame .env", "deny"),
    ([A("git blame *"), READ, SECRET], "git blame -L 1,5 HEAD -- .env", "deny"),
    ([A("git log *"), READ, SECRET], "git log -p -- .env", "deny"),
    ([A("git log *"), READ, SECRET], "git log -p .env", "deny"),
    ([A("git log *"), READ, SECRET], "git log -L 1,5:.env", "deny"),
    ([A("git log *"), READ, SECRET], "git log -L:main:src/a.py", "allow"),
    ([A("git diff *"), READ, SSH], "git diff ~/.ssh/id_rsa /dev/null", "deny"),
    ([A("git diff *"), READ], "git diff /etc/passwd x", "not-allow"),
    ([A("git grep *"), READ, SECRET], "git grep KEY -- .env", "deny"),
    ([A("git grep *"), READ, SECRET], "git grep -f .env x", "deny"),
    ([A("git archive *"), READ, SECRET], "git archive HEAD .env", "deny"),
    ([A("git show *"), READ, SECRET], "git show HEAD", "allow"),
    ([A("git log *"), READ, SECRET], "git log --oneline -5 main", "allow"),
    ([A("git diff *"), READ, SECRET], "git diff main origin/main", "allow"),
    ([A("git blame *"), READ, SECRET], "git blame src/a.py", "allow"),
    # --- 9. programs that run commands through their own syntax
    ([A("make *"), READ], "make X='$(shell touch y)'", "not-allow"),
    ([A("make *"), READ], "make 'X!=touch y'", "not-allow"),
    ([A("make *"), READ], "make X:=`id`", "not-allow"),
    ([A("make *"), READ], "make MAKEFLAGS=--eval=x", "not-allow"),
    ([A("make *"), READ], "make .SHELLFLAGS=-c", "not-allow"),
    ([A("make *"), READ], "make -e test", "not-allow"),
    ([A("make *"), READ], "make --environment-overrides", "not-allow"),
    ([A("make *"), READ], "make -I /tmp/evil", "not-allow"),
    ([A("make *"), READ], "make test VERBOSE=1", "allow"),
    ([A("make *"), READ], "make PREFIX=/usr/local install", "allow"),
    ([A("*"), D("rm *")], "cmake -E rm -rf x", "deny"),
    ([A("cmake *"), READ], "cmake -E touch x", "not-allow"),
    ([A("cmake *"), READ], "cmake -P script.cmake", "not-allow"),
    ([A("cmake *"), READ], "cmake -C /tmp/init.cmake -S . -B build", "not-allow"),
    ([A("cmake *"), READ], "cmake --build build", "allow"),
    ([A("cmake *"), READ], "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "allow"),
    ([A("cmake *"), READ], "cmake -B build -DCMAKE_C_COMPILER_LAUNCHER=/tmp/x", "not-allow"),
    ([A("cmake *"), READ], "cmake -B b -D CMAKE_PROJECT_TOP_LEVEL_INCLUDES=/tmp/x.cmake",
     "not-allow"),
    ([A("make *"), READ], "make -E '$(shell id)'", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --basetemp=/home/x", "not-allow"),
    ([A("pytest *"), READ], "pytest --basetemp=tmp", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest -p evil", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest -pevil", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest -o cache_dir=/tmp/c", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest -o addopts='-p evil'", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --override-ini=addopts=-pevil", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --rootdir=/tmp/r", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest -c /tmp/pytest.ini", "not-allow"),
    ([A("pytest *"), READ], "pytest --junitxml=out.xml", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --junit-xml=/tmp/out.xml", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --pastebin=all", "not-allow"),
    ([A("pytest *"), READ, EDIT], "pytest --debug=/tmp/x", "not-allow"),
    ([A("python -m pytest *"), READ, EDIT], "python -m pytest --basetemp=/x", "not-allow"),
    ([A("pytest *"), READ], "pytest -k x -q tests", "allow"),
    ([A("pytest *"), READ], "pytest -p no:cacheprovider -q tests", "allow"),
    ([A("gawk *"), READ], "gawk -o/tmp/x '{ print }' f", "not-allow"),
    ([A("gawk *"), READ, EDIT], "gawk --dump-variables=.git/config '{ print }' f",
     "not-allow"),
    ([A("gawk *"), READ], "gawk -D/tmp/cmds -f p.awk f", "not-allow"),
    ([A("tar *"), READ], "tar -g /tmp/snap -cf a.tar src", "not-allow"),
    ([A("tar *"), READ, EDIT], "tar --index-file=.git/config -cvf a.tar src", "not-allow"),
    ([A("zip *"), READ], "zip -O /tmp/out.zip a.zip", "not-allow"),
    ([A("man *"), READ, SSH], "man -l ~/.ssh/id_rsa", "deny"),
    ([A("file *"), READ], "file -C -m m", "not-allow"),
    ([A("jq *"), READ], "jq -L /tmp/mods -n 'import \"x\" as x; 1'", "not-allow"),
    ([A("pytest *"), READ], "pytest -x -m 'not slow' tests/a.py", "allow"),
    ([A("npm *"), READ], "npm config set script-shell /tmp/evil", "not-allow"),
    ([A("npm *"), READ], "npm set script-shell=/tmp/evil", "not-allow"),
    ([A("*"), D("rm *")], "npm exec -- rm -rf x", "deny"),
    ([A("*"), D("git push *")], "git -c alias.p=push p origin main", "deny"),
    ([A("*"), D("rm *")], "git -c 'alias.p=!rm -rf x' p", "deny"),
    ([A("*"), D("rm *")], "tar --to-command='rm -rf x' -xf a.tar", "not-allow"),
    ([A("tar *"), READ, EDIT], "tar --use-comp=/tmp/x -cf a.tar b", "not-allow"),
    ([A("tar *"), READ, EDIT], "tar --checkpoint-action=exec=id -cf a.tar b", "not-allow"),
    ([A("rsync *"), READ, EDIT], "rsync -e 'sh -c id' a host:b", "not-allow"),
    ([A("ssh *")], "ssh -o ProxyCommand=id host", "not-allow"),
    ([A("ssh *")], "ssh -oproxycommand=id host", "not-allow"),
    ([A("*"), D("rm *")], "env -S 'rm -rf x'", "deny"),
    ([A("find *"), READ], "find . -fprint /tmp/x", "not-allow"),
    ([A("sed *"), READ, EDIT], "sed '1e id' f", "not-allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    where = project_in(tmp_path_factory.mktemp("hardening-tables"))
    project, home = where.root, where.home
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("k")
    (project / ".env").write_text("K=v")
    return where


#: Edits by the file tools, not the shell.
WRITES = [
    ([EDIT], ".Git/hooks/pre-commit", "not-allow"),
    ([EDIT], ".GIT/config", "not-allow"),
    ([EDIT], "sub/.DM_CC/policy.yaml", "not-allow"),
    ([EDIT], "src/gitconfig.py", "allow"),
    ([EDIT], "planted/HEAD", "not-allow"),
    ([EDIT], "docs/header.md", "allow"),
]


@pytest.mark.parametrize(("rules", "text", "expect"), CASES, ids=[c[1][:50] for c in CASES])
def test_variant(rules, text, expect, where):
    assert_meets(rules, "bash", text, expect, where)


@pytest.mark.parametrize(("rules", "path", "expect"), WRITES, ids=[c[1] for c in WRITES])
def test_write(rules, path, expect, where):
    assert_meets(rules, "write", path, expect, where)
