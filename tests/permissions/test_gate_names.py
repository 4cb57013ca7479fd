"""Every name of a program (issue 22, item 3): a deny or ask rule on a program holds
for its other names -- case variants (a filesystem may fold case), versioned names,
git's dashed/libexec forms, npm/pnpm/cargo/docker subcommand aliases and npm's
abbreviations, ``exec -a`` -- and for guessed inner commands normalised like any
command (a path, a wrapper inside the guess). Allows never widen, and a later allow of
the name as written stands (``deny python *`` then ``allow python3 *``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from judging import A, D, R, assert_meets, project_in

from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.names import git_autocorrect
from dm_cc.permissions.shell.tables.program_names import GIT_COMMANDS

ANY_RM = [A("*"), D("rm *")]
CASES = [
 # -- case: the program name compared without case by deny and ask rules
 (ANY_RM, "bash", "RM -rf x", "deny"),
 (ANY_RM, "bash", "Rm x", "deny"),
 (ANY_RM, "bash", "/bin/RM x", "deny"),
 (ANY_RM, "bash", "sudo Rm -rf x", "deny"),
 (ANY_RM, "bash", "BASH -c 'rm x'", "deny"),
 (ANY_RM, "bash", "Sudo rm x", "deny"),
 ([A("*"), R("bash", "rm *", "ask")], "bash", "rM x", "ask"),
 ([A("*"), D("git push *")], "bash", "GIT push", "deny"),
 ([A("ls *")], "bash", "LS -la", "not-allow"),   # an allow never widens
 # -- versioned names
 ([A("*"), D("pip install *")], "bash", "pip3.11 install x", "deny"),
 ([A("*"), D("pip install *")], "bash", "pip3 install x", "deny"),
 ([A("*"), D("pip install *")], "bash", "pip-3.12 install x", "deny"),
 ([A("*"), D("pip3 install *")], "bash", "pip3.11 install x", "deny"),
 ([A("*"), D("python *")], "bash", "python3.11 x.py", "deny"),
 ([A("*"), D("python3 *")], "bash", "python3.12 -m http.server", "deny"),
 ([A("*"), D("python *")], "bash", "/usr/bin/python3.11 x.py", "deny"),
 ([A("*"), D("ruby *")], "bash", "ruby3.1 x.rb", "deny"),
 ([A("*"), D("perl *")], "bash", "perl5.36.0 -e 1", "deny"),
 ([A("*"), D("node *")], "bash", "nodejs x.js", "deny"),
 ([A("*"), D("pip install *")], "bash", "python3.11 -m pip install x", "deny"),
 ([A("*"), D("pip install *")], "bash", "python3 -m pip3.11 install x", "deny"),
 # -- git's dashed and libexec forms
 ([A("*"), D("git push *")], "bash", "git-push origin main", "deny"),
 ([A("*"), D("git push *")], "bash", "/usr/lib/git-core/git-push origin", "deny"),
 ([A("*"), D("git push *")], "bash", "/usr/libexec/git-core/git-push", "deny"),
 ([A("*"), D("git push --force *")], "bash", "git-push -f origin", "deny"),
 ([A("*"), D("git receive-pack *")], "bash", "git-receive-pack .", "deny"),
 ([A("*"), D("git push *")], "bash", "sudo git-push", "deny"),
 # -- npm aliases and abbreviations (npm/cli lib/utils/cmd-list.js)
 ([A("*"), D("npm publish *")], "bash", "npm publ", "deny"),
 ([A("*"), D("npm publish *")], "bash", "npm pu --tag x", "deny"),
 ([A("*"), D("npm publish *")], "bash", "npm publis", "deny"),
 ([A("*"), D("npm install *")], "bash", "npm add left-pad", "deny"),
 ([A("*"), D("npm install *")], "bash", "npm isntal x", "deny"),
 ([A("*"), D("npm add *")], "bash", "npm install x", "deny"),
 ([A("*"), D("npm uninstall *")], "bash", "npm r x", "deny"),
 ([A("*"), D("npm run-script *")], "bash", "npm run build", "deny"),
 ([A("*"), D("npm run *")], "bash", "npm rum build", "deny"),
 ([A("*"), D("npm ci *")], "bash", "npm clean-install", "deny"),
 ([A("*"), D("npm install-ci-test *")], "bash", "npm cit", "deny"),
 ([A("*"), D("npm unpublish *")], "bash", "npm unp x", "deny"),
 ([A("*"), D("npm unpublish *")], "bash", "npm unpublish x", "deny"),
 ([A("*"), D("npm install-test *")], "bash", "npm installTest", "deny"),
 ([A("*"), R("bash", "npm publish *", "ask")], "bash", "npm publ", "ask"),
 ([A("*"), D("npm publish *")], "bash", "NPM publ", "deny"),
 # -- pnpm, cargo, docker/podman
 ([A("*"), D("pnpm remove *")], "bash", "pnpm rm x", "deny"),
 ([A("*"), D("pnpm install *")], "bash", "pnpm i", "deny"),
 ([A("*"), D("cargo run *")], "bash", "cargo r", "deny"),
 ([A("*"), D("cargo remove *")], "bash", "cargo rm serde", "deny"),
 ([A("*"), D("docker rm *")], "bash", "docker container rm x", "deny"),
 ([A("*"), D("docker container rm *")], "bash", "docker rm -f x", "deny"),
 ([A("*"), D("docker rmi *")], "bash", "docker image remove x", "deny"),
 ([A("*"), D("docker image rm *")], "bash", "docker rmi x", "deny"),
 ([A("*"), D("docker push *")], "bash", "docker image push x", "deny"),
 ([A("*"), D("podman rm *")], "bash", "podman container rm x", "deny"),
 ([A("*"), D("docker compose *")], "bash", "docker-compose down", "deny"),
 ([A("*"), D("npm publish *")], "bash", "npm --registry https://r.example publ", "deny"),
 ([A("*"), D("npm publish *")], "bash", "npm -ddd publ", "deny"),
 ([A("*"), D("docker rm *")], "bash", "docker -H tcp://h:2375 container rm x", "deny"),
 ([A("*"), D("cargo publish *")], "bash", "cargo +nightly publish", "deny"),
 ([A("*"), D("cargo run *")], "bash", "cargo -q r", "deny"),
 # -- flag spellings under another name: the rule's own head is read canonically too
 ([A("*"), D("docker container rm -f *")], "bash", "docker rm --force x", "deny"),
 ([A("*"), D("docker rm -f *")], "bash", "docker container remove --force x", "deny"),
 ([A("*"), D("npm add -g *")], "bash", "npm i -g x", "deny"),
 ([A("*"), D("npm install -g *")], "bash", "npm -g i x", "deny"),
 # -- a subcommand is read as the program resolves it: npm's exec is a wrapper
 (ANY_RM, "bash", "npm exe rm -rf x", "deny"),
 (ANY_RM, "bash", "npm exe -- rm -rf x", "deny"),
 ([A("npm *")], "bash", "npm exe rm -rf x", "not-allow"),
 ([A("*"), D("npm config set *")], "bash", "npm c set registry x", "deny"),
 # -- exec -a: the command run is the one named after the option's value
 (ANY_RM, "bash", "exec -a ls rm -rf x", "deny"),
 (ANY_RM, "bash", "exec -cla ls rm x", "deny"),
 (ANY_RM, "bash", "exec -a ls /bin/rm x", "deny"),
 ([A("ls *")], "bash", "exec -a ls rm x", "not-allow"),
 # -- guessed inner commands of unknown programs, normalised like any command
 (ANY_RM, "bash", "fakeroot /bin/rm -rf x", "deny"),
 (ANY_RM, "bash", "fakeroot ./rm x", "deny"),
 (ANY_RM, "bash", "xvfb-run sudo rm -rf x", "deny"),
 (ANY_RM, "bash", "xvfb-run -a timeout 5 rm x", "deny"),
 (ANY_RM, "bash", "fakeroot bash -c 'rm -rf x'", "deny"),
 (ANY_RM, "bash", "xvfb-run fakeroot RM x", "deny"),
 (ANY_RM, "bash", "tool -- env X=1 /usr/bin/rm x", "deny"),
 ([A("*"), D("git push *")], "bash", "fakeroot git -C x push", "deny"),
 ([A("*"), D("npm publish *")], "bash", "fakeroot npm publ", "deny"),
 ([A("*"), R("read", "~/.ssh/*", "deny")], "bash", "fakeroot cat ~/.ssh/id_rsa", "deny"),
 ([A("*"), R("edit", "*", "allow"), R("edit", ".git/**", "deny")], "bash",
  "xvfb-run cp x .git/hooks/pre-commit", "deny"),
 ([A("*"), R("edit", "*", "allow")], "bash", "fakeroot cp a b", "allow"),
 ([A("*")], "bash", "fakeroot cat /etc/hosts", "allow"),   # a guess's files only deny
 # -- stays as it was: ordinary commands, and a later allow of the written name
 ([A("npm install *")], "bash", "npm install", "allow"),
 ([A("npm i *")], "bash", "npm i left-pad", "allow"),
 ([A("npm run *")], "bash", "npm run build", "allow"),
 ([A("npm test *")], "bash", "npm test", "allow"),
 ([A("pip install *"), R("read", "**", "allow")], "bash", "pip install -r requirements.txt",
  "allow"),
 ([A("python3 *")], "bash", "python3 -m pytest", "allow"),
 ([A("python3 *")], "bash", "python3 manage.py migrate", "allow"),
 ([A("git push *")], "bash", "git push", "allow"),
 ([A("cargo build *")], "bash", "cargo build", "allow"),
 ([A("docker ps *")], "bash", "docker ps", "allow"),
 ([A("R *")], "bash", "R --version", "allow"),
 ([D("python *"), A("python3 *")], "bash", "python3 x.py", "allow"),
 ([D("npm *"), A("npm i *")], "bash", "npm i x", "allow"),
 ([D("*"), A("npm run *")], "bash", "npm run build", "allow"),
 ([R("bash", "*", "ask"), A("pip3 *")], "bash", "pip3 install x", "allow"),
 ([A("*"), D("rm *")], "bash", "fakeroot make install", "allow"),
 ([A("*"), D("npm publish *")], "bash", "npm pack", "allow"),
 ([A("*"), D("npm publish *")], "bash", "npm p", "allow"),   # ambiguous: no command
 ([A("*"), D("git push *")], "bash", "git-lfs push", "allow"),
 # -- git's autocorrection: an unknown command is run as the one it is most like when
 #    help.autocorrect is set (the person's config, the repository's, -c, GIT_CONFIG_*)
 ([A("*"), D("git push *")], "bash", "git psuh origin", "deny"),
 ([A("*"), D("git push *")], "bash", "git -c help.autocorrect=immediate pushh origin", "deny"),
 ([A("*"), D("git push *")], "bash", "git --no-pager puhs", "deny"),
 ([A("*"), D("git push *")], "bash", "git-pussh origin", "deny"),
 ([A("*"), R("bash", "git commit *", "ask")], "bash", "git commt -m x", "ask"),
 ([A("*"), D("git push *")], "bash", "git pull origin", "allow"),   # a command: itself
 ([A("*"), D("git push *")], "bash", "git status", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("names"))


@pytest.mark.parametrize(("rules", "tool", "text", "expect"), CASES,
                         ids=[f"{c[1]}:{c[2][:40]}" for c in CASES])
def test_name(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)


def test_names_as_written_and_others():
    """The request keeps the name as written; the other names ride along."""
    command = analyse("pip3.11 install x").commands[0]
    assert command.words == ("pip3.11", "install", "x")
    assert ("pip3", "install", "x") in command.names
    assert ("pip", "install", "x") in command.names
    assert analyse("ls -la").commands[0].names == ()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_autocorrect_is_among_the_names(tmp_path):
    """Mistyped commands (one edit of each of git's commands) run by the real git with
    help.autocorrect=immediate: what git ran is always among the names offered."""
    typos = set()
    # (filter-branch warns for 10 s before it does anything, even for -h)
    for command in sorted(c for c in GIT_COMMANDS if "--" not in c
                          and c != "filter-branch")[::6]:
        for typo in (command[1:], command[:-1] + "x", command[1] + command[0] + command[2:],
                     command + "s"):
            if typo not in GIT_COMMANDS and re.fullmatch("[a-z][a-z0-9-]*", typo):
                typos.add(typo)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    ran = 0
    for typo in sorted(typos):
        done = subprocess.run(["git", "-c", "help.autocorrect=immediate", typo, "-h"],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=20)
        meant = re.search(r"you meant '([^']+)'", done.stderr)
        if meant is not None:
            ran += 1
            assert meant.group(1) in git_autocorrect(typo), typo
    assert ran > 10  # git did autocorrect: the comparison tested something
