"""Issue 10, themes 1-3: where tree-sitter-bash may read a line differently from bash
(heredoc delimiters, escaped backticks, ``$()`` inside words, brace expansion, expansions
holding substitutions), text stored in a variable and evaluated later (arithmetic,
subscripts, ``${!x}``, ``${x@P}``), and risky variables set other than by ``NAME=value``.
Each case is judged by the engine with only its own rules (after the default ask)."""

from __future__ import annotations

import os

import pytest
from judging import A, D, assert_meets, project_in

from dm_cc.permissions import Rule

RM = [A("*"), D("rm *")]

CASES = [
 # 1. parser differentials: heredoc delimiters bash reads differently
 (RM, "cat <<EOF; rm -rf x\nhello\nEOF", "deny"),
 (RM, "cat <<EOF;rm -rf x\nhello\nEOF\necho done", "deny"),
 (RM, "cat <<'EOF' ; rm -rf x\nhello\nEOF", "deny"),
 (RM, "cat <<E\\OF\nEOF\nrm -rf x\nE\\OF", "deny"),
 (RM, "cat <<'E'OF\nEOF\nrm -rf x\n'E'OF", "deny"),
 (RM, "cat <<\"EOF\"x\nEOFx\nrm -rf x\nEOF", "deny"),
 (RM, "cat <<E\"O\"F\nEOF\nrm -rf x", "deny"),
 (RM, "cat <<EOF\n$(rm -rf x)\nEOF", "deny"),
 ([A("cat *")], "cat <<E'O'F\n$(rm -rf x)\nEOF", "allow"),
 # escaped backticks inside backticks: bash unescapes and runs the inner substitution
 (RM, "echo `echo \\`rm -rf x\\``", "deny"),
 (RM, "echo `echo \\`echo \\\\\\`rm -rf x\\\\\\`\\``", "deny"),
 (RM, "ls `cat \\`rm -rf x\\`` ", "deny"),
 # a statically empty substitution splices two halves of a word
 (RM, "r$()m -rf x", "deny"),
 (RM, "r$( )m -rf x", "deny"),
 (RM, "r``m -rf x", "deny"),
 # brace expansion makes words
 (RM, "{rm,-rf,x}", "deny"),
 (RM, "r{m,} -rf x", "deny"),
 (RM, "{r,}m -rf x", "deny"),
 (RM, "echo a; {rm,x}", "deny"),
 ([A("ls *")], "l{s,} x", "allow"),  # bash runs `ls l x`: static, exact
 # substitutions inside parameter expansions
 (RM, 'echo "${x#$(rm -rf y)}"', "deny"),
 (RM, "echo ${x:-`rm -rf y`}", "deny"),
 (RM, "echo ${x/$(rm -rf y)/z}", "deny"),
 (RM, 'echo "${x%%`rm -rf y`}"', "deny"),
 # found by the differential test (test_bash_differential.py)
 (RM, "time for i in 1; do rm -rf x; done", "deny"),
 (RM, "time while true; do rm -rf x; break; done", "deny"),
 (RM, "! bash <<EOF\nrm -rf x\nEOF", "deny"),
 ([A("*")], "bash <<EOF\n\\rm -rf x\nEOF", "not-allow"),
 ([A("*")], "echo a # c\n\\rm -rf x", "not-allow"),
 (RM, "cat <<< \"$(r\\\nm -rf x)\"", "deny"),
 ([A("*")], "time x='a[$(rm -rf y)]'; declare -i y=x", "not-allow"),
 ([A("*")], "time read x; (( x ))", "not-allow"),
 # comments and continuations
 (RM, "echo x \\\n; rm y", "deny"),
 ([A("echo *")], "echo a # $(rm x)", "allow"),
 ([A("echo *")], "echo a#$(rm x)", "not-allow"),
 # 2. deferred evaluation: a value set in the line reaches an evaluating context
 ([A("*")], "x='a[$(rm -rf y)]'; (( x ))", "not-allow"),
 (RM, "x='a[$(rm -rf y)]'; (( x ))", "deny"),
 (RM, "x=$'a[$(rm -rf y)]'; [[ $x -eq 1 ]]", "deny"),
 (RM, "declare x='a[`rm -rf y`]'; let z=x", "deny"),
 (RM, "x='$(rm -rf y)'; echo ok", "allow"),  # stored, never evaluated
 ([A("*")], "x='a[$(rm -rf y)]'; (( x + 1 ))", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; [[ $x -eq 1 ]]", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; [[ x -gt 1 ]]", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; [[ -v $x ]]", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; : $(( x ))", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; let y=x", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; declare -i y=x", "not-allow"),
 ([A("*")], "x='$(rm -rf y)'; : ${x@P}", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; y=x; : ${!y}", "not-allow"),
 ([A("*")], "for x in 'a[$(rm -rf y)]'; do (( x )); done", "not-allow"),
 ([A("*")], "read x; (( x ))", "not-allow"),
 ([A("*")], "read -a x; (( x[0] ))", "not-allow"),
 ([A("*")], "mapfile x; (( x ))", "not-allow"),
 ([A("*")], "printf -v x 'a[$(rm -rf y)]'; (( x ))", "not-allow"),
 ([A("*")], "x=$(cat f); (( x ))", "not-allow"),
 ([A("*")], "x=$1; [[ $x -lt 3 ]]", "not-allow"),
 ([A("*")], "declare x='a[$(rm -rf y)]'; (( x ))", "not-allow"),
 ([A("*")], "x='a[$(rm -rf y)]' bash -c '(( x ))'", "not-allow"),
 ([A("*")], "(( $1 ))", "not-allow"),
 ([A("*")], "PS4='$(rm -rf x)'; set -x; :", "not-allow"),
 (RM, "PS4='$(rm -rf x)' bash -xc :", "deny"),
 (RM, "PROMPT_COMMAND='rm -rf x' bash -i", "deny"),
 # legitimate arithmetic stays allowed
 ([A("*")], "for i in 1 2 3; do (( i > 1 )) && echo hi; done", "allow"),
 ([A("*")], "x=3; (( x > 1 ))", "allow"),
 ([A("*")], "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done", "allow"),
 ([A("*")], "x='a[$(rm -rf y)]'; [ $x -lt 3 ]", "allow"),  # test(1) does no arithmetic
 ([A("*")], "x='a[$(rm -rf y)]'; [ -v \"$x\" ]", "not-allow"),
 ([A("echo *")], "x=1; echo $(( 1 + 2 ))", "not-allow"),
 # 3. risky variables set other than NAME=value
 ([A("*")], "for PATH in /tmp; do ls; done", "not-allow"),
 ([A("*")], "select PATH in /tmp; do ls; done", "not-allow"),
 ([A("*")], "(( PATH = 1 )); ls", "not-allow"),
 ([A("*")], "getopts a: PATH", "not-allow"),
 ([A("*")], "read PATH", "not-allow"),
 ([A("*")], "printf -v PATH /tmp", "not-allow"),
 ([A("*")], ": ${PATH:=/tmp}", "not-allow"),
 ([A("*")], "export -n PATH", "not-allow"),
 ([A("*")], "typeset -x PATH=/tmp", "not-allow"),
 ([A("*")], "declare -x CDPATH=/etc", "not-allow"),
 ([A("cd *")], "CDPATH=/etc cd x", "not-allow"),
 ([A("*"), Rule("read", "~/.ssh/**", "deny")], "CDPATH=~ cd .ssh && cat id_rsa", "deny"),
 ([A("*"), Rule("read", "~/.ssh/**", "deny")], "CDPATH=/tmp:~ cd .ssh; cat id_rsa", "deny"),
 ([A("*"), Rule("read", "~/.ssh/**", "deny")], "declare -x CDPATH=~; cd .ssh; cat id_rsa", "deny"),
 ([A("*"), Rule("read", "~/.ssh/**", "deny")], "CDPATH=~; cd .ssh; cat id_rsa", "deny"),
 (RM, "sh 0<<EOF\nrm -rf x\nEOF", "deny"),
 (RM, "bash /dev/fd/3 3<<< 'rm -rf x'", "deny"),
 (RM, "sh 0<<< 'rm -rf x'", "deny"),
 (RM, "echo a && bash <<EOF\nrm -rf x\nEOF", "deny"),
 (RM, "true || sh <<'EOF' && true\nrm -rf x\nEOF", "deny"),
 ([A("curl *")], "https_proxy=http://evil:8080 curl https://x", "not-allow"),
 ([A("curl *")], "ALL_PROXY=socks5://evil curl https://x", "not-allow"),
 ([A("file *")], "MAGIC=/tmp/m file x", "not-allow"),
 ([A("pytest *")], "PYTEST_ADDOPTS=-p evil pytest", "not-allow"),
 ([A("pytest *")], "PYTEST_PLUGINS=evil pytest", "not-allow"),
 ([A("make *")], "MFLAGS=-f/tmp/m make", "not-allow"),
 ([A("ls *")], "GLOBIGNORE=x ls", "not-allow"),
 ([A("zip *")], "ZIPOPT=-TT zip a b", "not-allow"),
 ([A("curl *")], "SSLKEYLOGFILE=/tmp/k curl https://x", "not-allow"),
 ([A("make *")], "CFLAGS=-fplugin=x.so make", "not-allow"),
 ([A("ls *")], "FOO=bar ls", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("hardening-parse"))


@pytest.mark.parametrize(("rules", "text", "expect"), CASES,
                         ids=[c[1][:48] for c in CASES])
def test_variant(rules, text, expect, where):
    os.environ.setdefault("LC_ALL", "C")
    assert_meets(rules, "bash", text, expect, where)
