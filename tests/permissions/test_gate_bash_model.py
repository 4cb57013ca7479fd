"""Issue 22, items 2 and 6: a positive model of bash, and a parser fallback that keeps
denies. Only constructs the analyser models completely may end in ``allow``; anything
else (a command name re-pointed through bash's own tables, a shell reading a script
from a stdin or descriptor an enclosing construct supplies, ``source`` of anything but a
plain file, a heredoc delimiter read unlike bash) makes the line dynamic, and where bash
may run a hidden command, deny rules still see it. Each case was checked in bash 5.2
(with a stand-in ``rm`` that only logs). Judged by the engine with only its own rules."""

from __future__ import annotations

import pytest
from judging import A, D, R, assert_meets, project_in

from dm_cc.permissions.shell import analyse

RM = [A("*"), D("rm *")]
ANY = [A("*")]

CASES = [
 # heredoc delimiters in other quoting forms: bash's body, not tree-sitter's
 (RM, "bash", "cat <<$'EOF'\nEOF\nrm -rf x\n$'EOF'", "deny"),
 (RM, "bash", 'cat <<$"EOF"\nEOF\nrm -rf x\n$"EOF"', "deny"),
 (RM, "bash", "cat <<$'\\x45OF'\nEOF\nrm -rf x\n$'\\x45OF'", "deny"),
 (RM, "bash", "cat <<$\"E\"'O'F\nEOF\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "cat <<''\nhello\n\nrm -rf x", "deny"),
 (RM, "bash", "cat <<'E F'\nE F\nrm -rf x", "deny"),
 (RM, "bash", "bash <<$'EOF'\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "bash <<$'EOF' >/dev/null\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "cat <<$'EOF' | cat; rm -rf x\nhi\nEOF", "deny"),
 (RM, "bash", "cat <<-$'EOF'\n\tEOF\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "cat <<$'EOF' <<X\na\nEOF\nb\nX\nrm -rf x", "deny"),
 ([A("cat *")], "bash", "cat <<$'EOF'\n$(rm -rf x)\nEOF", "allow"),  # quoted: no expansion
 ([A("cat *")], "bash", "cat << \\EOF\n$(rm -rf x)\nEOF", "allow"),
 ([A("cat *")], "bash", "cat <<$'EOF'\nhello\nEOF", "allow"),
 # deprecated arithmetic and evaluating contexts
 (RM, "bash", "echo $[ $(rm -rf x) ]", "deny"),
 (RM, "bash", "echo $[ a[$(rm -rf x)] ]", "deny"),
 (RM, "bash", "echo $[1<<2]\nrm -rf x", "deny"),
 (RM, "bash", "a=(1); echo ${a[1<<0]}\nrm -rf x", "deny"),
 (ANY, "bash", "x='a[$(rm -rf y)]'; echo $[x]", "not-allow"),
 (RM, "bash", "[[ -v a[$(rm -rf x)] ]]", "deny"),
 (RM, "bash", "test -v 'a[$(rm -rf x)]'", "deny"),
 (RM, "bash", "[ -v 'b[`rm -rf x`]' ]", "deny"),
 (RM, "bash", "printf -v 'a[$(rm -rf x)]' 1", "deny"),
 (RM, "bash", "read 'a[$(rm -rf x)]' <<< 1", "deny"),
 (RM, "bash", "declare 'a[$(rm -rf x)]=1'", "deny"),
 (RM, "bash", "f() { local -a 'a[$(rm -rf x)]=1'; }; f", "deny"),
 (RM, "bash", "a=(1); unset 'a[$(rm -rf x)]'", "deny"),
 (RM, "bash", ": ${a[$(rm -rf x)]=}", "deny"),
 (RM, "bash", ": $(( a[$(rm -rf x)] ))", "deny"),
 (RM, "bash", "let 'a[$(rm -rf x)]=1'", "deny"),
 (RM, "bash", "(( a[$(rm -rf x)] ))", "deny"),
 (RM, "bash", "mapfile -t 'a[$(rm -rf x)]' < /dev/null", "deny"),  # stricter than bash 5.2
 # bash's own tables re-pointing a command name
 (RM, "bash", "BASH_CMDS[ls]=/bin/rm; ls -rf x", "deny"),
 (RM, "bash", "BASH_CMDS['ls']=/usr/bin/rm\nls -rf x", "deny"),
 (ANY, "bash", "BASH_CMDS[ls]=/tmp/evil; ls", "not-allow"),
 (ANY, "bash", "declare -A BASH_CMDS=([ls]=/tmp/evil); ls", "not-allow"),
 (ANY, "bash", "BASH_CMDS+=([ls]=/tmp/evil); ls", "not-allow"),
 (RM, "bash", "hash -p /bin/rm ls; ls x", "deny"),
 (RM, "bash", "hash -p /bin/rm -- ls; ls x", "deny"),
 (RM, "bash", "printf -v 'BASH_CMDS[ls]' %s /bin/rm; ls x", "deny"),
 (ANY, "bash", "read -a BASH_CMDS <<< /tmp/evil; ls", "not-allow"),
 (RM, "bash", "BASH_ALIASES[ls]=rm; shopt -s expand_aliases\nls x", "deny"),
 (ANY, "bash", "BASH_ALIASES[ls]=rm; ls x", "not-allow"),
 (RM, "bash", "shopt -s expand_aliases; alias ls='rm -rf'\nls x", "deny"),
 (RM, "bash", "shopt -s expand_aliases\nalias l=rm\nl x", "deny"),
 (ANY, "bash", "shopt -s expand_aliases; alias ls=/tmp/evil\nls", "not-allow"),
 (ANY, "bash", "enable -f /tmp/x.so ls; ls", "not-allow"),
 (ANY, "bash", "enable -n echo; echo x", "not-allow"),
 (ANY, "bash", "enable -d ls", "not-allow"),
 (RM, "bash", "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls", "deny"),
 (ANY, "bash", "declare -n r=BASH_CMDS; r[ls]=/tmp/evil; ls", "not-allow"),
 (ANY, "bash", "declare -n r=PATH; r=/tmp; ls", "not-allow"),
 (ANY, "bash", "typeset -n r=BASH_ALIASES; r[ls]=rm; ls", "not-allow"),
 (ANY, "bash", "PATH=/tmp; ls", "not-allow"),
 (ANY, "bash", "BASH_ENV=/tmp/x bash -c ls", "not-allow"),
 (ANY, "bash", "EXECIGNORE=/usr/bin/ls; ls", "not-allow"),
 # a shell whose stdin an enclosing construct supplies
 (RM, "bash", "{ bash; } <<< 'rm -rf x'", "deny"),
 (RM, "bash", "if :; then sh; fi <<EOF\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "f() { sh; }; f <<< 'rm -rf x'", "deny"),
 (RM, "bash", "exec <<< 'rm -rf x'; bash", "deny"),
 (RM, "bash", "exec 0<<< 'rm -rf x'; sh", "deny"),
 (RM, "bash", "( sh ) <<< 'rm -rf x'", "deny"),
 (RM, "bash", "{ true; bash; } <<< 'rm -rf x'", "deny"),
 (RM, "bash", "for i in 1; do bash; done <<< 'rm -rf x'", "deny"),
 (RM, "bash", "case a in a) bash;; esac <<< 'rm -rf x'", "deny"),
 (RM, "bash", "while :; do bash; break; done <<EOF\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "{ python3; } <<< 'rm -rf x' ; rm -rf y", "deny"),
 (ANY, "bash", "while read l; do bash; done < file", "not-allow"),
 (ANY, "bash", "echo 'rm -rf x' | ( bash )", "not-allow"),
 (ANY, "bash", "cat x | { bash; }", "not-allow"),
 (ANY, "bash", "cat x | { cat; bash; }", "not-allow"),
 (ANY, "bash", "echo ls | if :; then bash; fi", "not-allow"),
 (ANY, "bash", "f() { bash; }; echo ls | f", "not-allow"),
 (ANY, "bash", "exec < script.sh; bash", "not-allow"),
 (ANY, "bash", "exec <&3; bash", "not-allow"),
 (ANY, "bash", "while :; do bash; exec <<< ls; done", "not-allow"),
 (ANY, "bash", "echo ls | { python3 -; }", "not-allow"),
 # source / . / --rcfile from a descriptor, a pipe or a process substitution
 (RM, "bash", "source /dev/stdin <<< 'rm -rf x'", "deny"),
 (RM, "bash", ". /proc/self/fd/0 <<< 'rm -rf x'", "deny"),
 (RM, "bash", ". /dev/fd/3 3<<< 'rm -rf x'", "deny"),
 (RM, "bash", "source /dev/fd/4 4<<EOF\nrm -rf x\nEOF", "deny"),
 (ANY, "bash", "source <(echo ls)", "not-allow"),
 (ANY, "bash", ". <(echo ls)", "not-allow"),
 (ANY, "bash", "source /dev/fd/3", "not-allow"),
 (ANY, "bash", "bash --init-file <(echo ls) -i", "not-allow"),
 (ANY, "bash", "bash --rcfile /dev/fd/3 -i", "not-allow"),
 (RM, "bash", "bash --rcfile /dev/stdin -i <<< 'rm -rf x'", "deny"),
 (RM, "bash", "bash /dev/stdin <<< 'rm -rf x'", "deny"),
 # descriptors beyond plain redirection
 (RM, "bash", "exec 3<<<'rm -rf x'; bash /dev/fd/3", "deny"),
 (RM, "bash", "exec 3<<<'rm -rf x'; bash <&3", "deny"),
 (RM, "bash", "{ bash <&3; } 3<<<'rm -rf x'", "deny"),
 (RM, "bash", "exec 3<<<'rm -rf x'; bash 0<&3", "deny"),
 (RM, "bash", "bash 3<<<'rm -rf x' 0<&3", "deny"),
 (RM, "bash", "exec {fd}<<<'rm -rf x'; bash /dev/fd/$fd", "deny"),
 (RM, "bash", "{ sh /dev/fd/5; } 5<<EOF\nrm -rf x\nEOF", "deny"),
 (ANY, "bash", "bash <&3", "not-allow"),
 (ANY, "bash", "sh 0<&4", "not-allow"),
 (ANY, "bash", "bash 0<>script", "not-allow"),
 # valid bash that tree-sitter rejects: the deny rules still see each command
 (RM, "bash", "for x in a; { rm -rf y; }", "deny"),
 (RM, "bash", "for x in a b\n{ rm -rf y; }", "deny"),
 (RM, "bash", "for ((;;)) { rm -rf x; break; }", "deny"),
 (RM, "bash", "select x in a; { rm -rf y; break; } <<< 1", "deny"),
 (RM, "bash", "function f { rm -rf x; }; f", "deny"),
 (RM, "bash", "for x in a; { echo; }; rm -rf y", "deny"),
 (RM, "bash", "for x in a; { echo $(rm -rf y); }", "deny"),
 (RM, "bash", "for x in a; { echo `rm -rf y`; }", "deny"),
 (RM, "bash", "for x in a; { nice rm -rf y; }", "deny"),
 (RM, "bash", "for x in a; { \"r\"m -rf y; }", "deny"),
 (RM, "bash", "for x in a; { if :; then rm -rf y; fi; }", "deny"),
 (ANY, "bash", "for x in a; { ls; }", "not-allow"),
 # stays allowed: ordinary use
 ([A("ls *")], "bash", "ls -la", "allow"),
 ([A("ls *")], "bash", "ls -la 2>/dev/null", "allow"),
 ([A("ls *"), A("head *")], "bash", "ls 2>&1 >/dev/null | head", "allow"),
 ([A("git *")], "bash", "git log --oneline -5", "allow"),
 ([A("grep *"), R("read", "**", "allow")], "bash", "grep -rn foo src 2>&1", "allow"),
 ([A("cat *"), A("head *"), R("read", "**", "allow")], "bash", "cat README.md | head", "allow"),
 ([A("pytest *")], "bash", "pytest -q >&2", "allow"),
 ([A("cat *")], "bash", "cat <<EOF\nhello\nEOF", "allow"),
 ([A("cat *")], "bash", "cat <<'EOF'\n$(rm -rf x)\nEOF", "allow"),
 ([A("cat *")], "bash", "cat <<-EOF\n\thello\n\tEOF", "allow"),
 ([A("cat *")], "bash", "cat <<< hello", "allow"),
 ([A("python3 *")], "bash", "python3 manage.py migrate", "allow"),
 ([A("bash *"), A("ls *")], "bash", "bash -c 'ls' <<< x", "allow"),
 ([A("bash *"), A("ls *")], "bash", "bash <<EOF\nls\nEOF", "allow"),
 ([A("sh *"), A("ls *")], "bash", "sh <<< 'ls'", "allow"),
 ([A("echo *"), A("ls *")], "bash", "{ echo a; ls; } 2>&1", "allow"),
 ([A("echo *")], "bash", "for x in a b; do echo x; done", "allow"),
 ([A("cat *"), A("git *"), R("edit", "**", "allow"), R("read", "**", "allow")],
  "bash", "git commit -F- <<EOF\nrm -rf is a command\nEOF", "allow"),
 ([A("*"), D("rm *"), R("edit", "**", "allow"), R("read", "**", "allow")],
  "bash", "git commit -F- <<EOF\nrm -rf is a command\nEOF", "allow"),
 ([A("*"), D("rm *")], "bash", "cat <<EOF\nrm -rf x\nEOF", "allow"),
 ([A("hash *")], "bash", "hash -r", "allow"),
 ([A("type *")], "bash", "type ls", "allow"),
 # shells whose code is not sh (fish, csh, tcsh): their inline code, in every form
 # fish(1) takes it, is parsed for deny rules, and never allowed outright
 (RM, "bash", "fish -C 'rm -rf x' ok.fish", "deny"),
 (RM, "bash", "fish --init-command='rm -rf x' ok.fish", "deny"),
 (RM, "bash", "fish --command 'rm -rf x'", "deny"),
 (RM, "bash", "fish -ic 'rm -rf x'", "deny"),
 (RM, "bash", "fish -c'rm -rf x'", "deny"),
 (RM, "bash", "/usr/bin/fish -d all -c 'rm -rf x'", "deny"),
 (RM, "bash", "fish <<'EOF'\nrm -rf x\nEOF", "deny"),
 (RM, "bash", "tcsh -fc 'rm -rf x'", "deny"),
 (ANY, "bash", "fish -c 'true; and echo hi'", "not-allow"),   # `and` is no command in sh
 (ANY, "bash", "fish -c 'echo hi'", "not-allow"),
 (ANY, "bash", "csh -c 'echo hi'", "not-allow"),
 (ANY, "bash", "fish <<'EOF'\necho hi\nEOF", "not-allow"),
 ([A("*"), R("edit", "**", "deny")], "bash", "fish -o notes.txt -c 'echo hi'",
  "deny"),                                                      # a file it writes
 ([A("*"), R("read", "**", "allow")], "bash", "fish ok.fish", "allow"),  # a script file, as sh's
 (ANY, "bash", "bash -c 'echo hi'", "allow"),
 # a descriptor by any spelling of its path (the kernel reads // /./ .. as it walks;
 # /proc/thread-self, /proc/PID): a script read from stdin or a descriptor, parsed
 (RM, "bash", "source /dev//stdin <<< 'rm -rf x'", "deny"),
 (RM, "bash", ". /proc/thread-self/fd/0 <<< 'rm -rf x'", "deny"),
 (RM, "bash", ". /dev/./fd/3 3<<< 'rm -rf x'", "deny"),
 (RM, "bash", "bash /proc/self/../self/fd/0 <<< 'rm -rf x'", "deny"),
 (RM, "bash", "bash //dev/stdin <<< 'rm -rf x'", "deny"),
 (RM, "bash", ". " + "../" * 12 + "dev/stdin <<< 'rm -rf x'", "deny"),  # up to the root
 (ANY, "bash", "bash ../../dev/fd/3 3<<< ls", "not-allow"),
 ([A("*"), R("read", "**", "allow")], "bash", "bash dev/stdin", "allow"),  # a file here
 # bash's command tables set by an expansion, read, or through a nameref
 (RM, "bash", ": ${BASH_CMDS[ls]:=/bin/rm}; ls -rf x", "deny"),
 (RM, "bash", "echo ${BASH_CMDS[ls]=/bin/rm}; ls -rf x", "deny"),
 (RM, "bash", ": ${BASH_ALIASES[ls]:=rm}; shopt -s expand_aliases\nls x", "deny"),
 (RM, "bash", "read 'BASH_CMDS[ls]' <<< /bin/rm; ls -rf x", "deny"),
 (RM, "bash", "declare -n r=BASH_CMDS; r[ls]=/bin/rm; ls x", "deny"),
 (RM, "bash", "local -n r=BASH_ALIASES 2>/dev/null; r[ls]=rm; ls x", "deny"),
 (ANY, "bash", "declare -n r=BASH_CMDS; r[ls]=/tmp/evil; ls", "not-allow"),
 # text tree-sitter rejects: the scan's pieces that parse are also read as written
 (RM, "bash", "for x in a; { :; }; {rm,-rf,x}", "deny"),
 (RM, "bash", "for x in a; { :; }; c=rm; $c -rf x", "deny"),
 (RM, "bash", "for x in a; { :; }; rm${IFS}-rf${IFS}x", "deny"),
 (RM, "bash", "for x in a; { :; }; BASH_CMDS[ls]=/bin/rm; ls x", "deny"),
 (RM, "bash", "for x in a; { :; }; cat <<E; rm -rf x", "deny"),
 (RM, "bash", "for x in a; { echo 'a;b'; }; ls", "not-allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("model"))


@pytest.mark.parametrize(("rules", "tool", "text", "expect"), CASES,
                         ids=[f"{c[1]}:{c[2][:40]}" for c in CASES])
def test_model(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)


def test_word_scan_is_linear():
    """A long line tree-sitter rejects is scanned in bounded time and output."""
    analysis = analyse("for x in a; { " + "rm x; " * 3000 + "}")
    assert any(c.dynamic for c in analysis.commands)
    assert len(analysis.speculative) <= 4_096
