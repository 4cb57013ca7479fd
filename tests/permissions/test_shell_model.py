"""Issue 22, item 2: the positive model of bash is one allowlist (``tables/syntax.py``).

Every node kind and token of the installed tree-sitter-bash is either ``MODELLED`` or
``OUTSIDE``; anything outside (and the ``OUTSIDE_SHAPES`` tree-sitter reads as other
kinds) makes the line dynamic -- it asks under an allow-everything policy -- while a deny
rule still sees every command (the line's commands and its word scan). What each variant
does in bash 5.2.15 is in the comments; ``test_bash_differential.py`` (KEPT_TEMPLATES)
runs them in bash and checks the deny rules see what bash ran. docs/shell.md shows the
allowlist as it is here (``test_docs_show_the_allowlist``).
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_bash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judging import A, D, R, assert_meets, project_in

from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.source import join_continuations, syntax_tree
from dm_cc.permissions.shell.tables.syntax import MODELLED, OUTSIDE, OUTSIDE_SHAPES
from dm_cc.permissions.shell.walk import OUTSIDE_MODEL, walk

ALL = [A("*"), R("read", "**", "allow"), R("edit", "**", "allow")]
RM = [*ALL, D("rm *")]
DOCS = Path(__file__).parents[2] / "docs" / "shell.md"
START, END = "<!-- modelled-subset: start -->", "<!-- modelled-subset: end -->"


def _grammar() -> set[str]:
    language = tree_sitter.Language(tree_sitter_bash.language())
    return {language.node_kind_for_id(i) for i in range(language.node_kind_count)
            if language.node_kind_is_visible(i)}


def test_allowlist_names_every_kind_of_the_grammar():
    grammar = _grammar()
    assert not set(MODELLED) & set(OUTSIDE)
    assert set(MODELLED) | set(OUTSIDE) == grammar, (
        f"not listed: {sorted(grammar - set(MODELLED) - set(OUTSIDE))}; "
        f"not in the grammar: {sorted((set(MODELLED) | set(OUTSIDE)) - grammar)}")


# One line for each entry outside the model: what bash 5.2.15 does with it in a comment.
OUTSIDE_EXAMPLES = {
    # prints "1) a 2) b" and "#? ", reads a line (here 1) from stdin, runs the body with
    # x=a, and again for each line until `break` or the end of its input
    "select": "select x in a b; do echo $x; break; done < answers",
    # `;&` runs the next item's commands without testing its pattern: prints A then B
    ";&": "case a in a) echo A;& b) echo B;; esac",
    # `;;&` goes on testing the following patterns: prints A then A2
    ";;&": "case a in a) echo A;;& a) echo A2;; esac",
    # `$` is literal, then the backticks run: prints `$` and date's output
    "$`": "echo $`date`",
    "unsetenv": "unsetenv X",  # bash: "unsetenv: command not found" (it runs a program)
    "coproc": "coproc cat",  # runs cat in the background; COPROC=(63 60), COPROC_PID set
    "{NAME}>": "exec {fd}>out.txt",  # opens out.txt on a free descriptor (10), fd=10
    ">&WORD": "echo hi 2>&1 3>&1 1>&3-",  # `3-` moves descriptor 3 to 1 and closes 3
    "@(..)": "case $x in @(a|b)) echo ab;; esac",  # extglob (on in [[ ]], else shopt)
}
MORE_OUTSIDE = [  # the same shapes spelt otherwise
    "echo >&$fd hi", "cat <&foo", "cat <&$fd", "read x {fd}<in.txt",
    "[[ $x == @(a|b) ]]", "[[ $x == !(a) ]]", "case $x in +(a)) :;; *(b)) :;; ?(c)) :;; esac",
    "select x; do :; done", "bash -c 'select x in a; do :; done'", "ls; coproc x { cat; }",
]


def test_every_entry_outside_has_an_example():
    assert set(OUTSIDE_EXAMPLES) == set(OUTSIDE) | set(OUTSIDE_SHAPES)


@pytest.mark.parametrize("text", [*OUTSIDE_EXAMPLES.values(), *MORE_OUTSIDE])
def test_outside_the_model_asks(text, tmp_path):
    where = project_in(tmp_path)
    assert_meets(ALL, "bash", text, "ask", where)
    notes = [c.note or "" for c in analyse(text).commands if c.dynamic]
    assert any(OUTSIDE_MODEL in n for n in notes), notes  # the reason is said
    # and a deny still holds, after it, inside it and in front of it
    assert_meets(RM, "bash", f"{text}\nrm -rf y", "deny", where)
    assert_meets(RM, "bash", f"rm -rf y; {text}", "deny", where)


@pytest.mark.parametrize("text", [
    "select x in a; do rm -rf y; break; done <<< 1",  # bash 5.2: rm runs
    "case a in a) :;& b) rm -rf y;; esac",  # rm runs (fall-through)
    "case a in a) :;;& a) rm -rf y;; esac",  # rm runs
    "echo $`echo \\`rm -rf y\\``",  # rm runs: `$` literal, the backticks read again
    "echo a |& rm -rf y",
    "coproc rm -rf y; wait",  # rm runs in the coprocess
    "coproc { rm -rf y; }; wait",
    "exec {fd}<<<'rm -rf y'; bash /dev/fd/$fd",  # rm runs
    "shopt -s extglob\ncase a in @(a|b)) rm -rf y;; esac",  # rm runs
])
def test_a_deny_is_not_lost_outside_the_model(text, tmp_path):
    assert_meets(RM, "bash", text, "deny", project_in(tmp_path))


# Constructs the model covers (one per kind of entry, and the tokens next to those outside):
# still allowed by an allow-everything policy, so ordinary lines ask no more than before.
MODELLED_EXAMPLES = [
    "until false; do :; done", "while read -r l; do echo; done < f",
    "function f { echo; }; f", "f() (echo); f", "for i in 1 2; do echo; done",
    "for ((i = 0; i < 3; i++)); do echo; done", "case $x in a|b) echo;; *.py) :;; esac",
    "case $x in [ab]*) echo;; esac", "[[ $x == a* && -f y ]]", "[ -n \"$x\" ] || echo",
    "make 2>&1 | tee log", "make &> log", "make &>> log", "echo >&2 hi", "echo hi >& out.txt",
    "cat <&3", "exec 3>&-", "echo hi 2>/dev/null >| out", "cat <<-EOF\n\thi\n\tEOF",
    "cat <<< hi", "x=$((1 + 2)) y=$[3] z=${x:-a}${#x}${x//a/b}${x^^}${x@Q}",
    "a=(1 2); b=${a[1]}", "x=1 y=2; export X=1; local v; unset x", "! false",
    "echo {a,b}{1..3} $'a\\tb' $\"hi\" 'q'", "diff <(ls a) <(ls b)", "x=`date` y=$(date)",
    "if true; then :; elif false; then :; else :; fi # done", "(cd x && ls) && { ls; }",
]


@pytest.mark.parametrize("text", MODELLED_EXAMPLES)
def test_modelled_constructs_may_be_allowed(text, tmp_path):
    assert_meets(ALL, "bash", text, "allow", project_in(tmp_path))


# Any line: when its tree (parsed without error) holds a kind or token not on the list,
# the walk says so. Fragments of every sort, outside ones among them, joined at random.
FRAGMENTS = [*OUTSIDE_EXAMPLES.values(), *MORE_OUTSIDE[:6], *MODELLED_EXAMPLES,
             "echo a", "ls -la", "git status", "x=$(pwd)", "cat f | wc -l"]


def _kinds(node: tree_sitter.Node) -> set[str]:
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        found.add(current.type)
        stack.extend(current.children)
    return found


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4),
       st.sampled_from(["; ", "\n", " && ", " | "]))
def test_any_node_outside_the_list_makes_the_walk_say_so(parts, joint):
    text = joint.join(parts)
    src = join_continuations(text).encode()
    tree = syntax_tree(src)
    if tree is None or tree.has_error:
        return  # a parse error: dynamic anyway (test_shell.py)
    records = list(walk(src, tree))
    said = bool(records) and type(records[-1]).__name__ == "Broken"
    unlisted = _kinds(tree) - set(MODELLED)
    if unlisted:
        assert said and OUTSIDE_MODEL in records[-1].why, (text, unlisted)
        assert any(c.dynamic for c in analyse(text).commands)


def render_docs() -> str:
    """The allowlist as docs/shell.md shows it, between the two markers."""
    def code(kind: str) -> str:  # a code span: a fence longer than any backticks inside
        fence = "`" * (kind.count("`") + 1)
        return f"{fence} {kind} {fence}" if "`" in kind else f"`{kind}`"

    def row(kinds: list[str], reason: str) -> str:
        cells = [" ".join(map(code, kinds)), reason]
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    lines = [START, "", "| kinds and tokens | modelled by |", "| --- | --- |"]
    for reason, group in groupby(MODELLED.items(), key=lambda item: item[1]):
        lines.append(row([k for k, _ in group], reason))
    lines += ["", "| outside: dynamic | what bash does |", "| --- | --- |"]
    for table in (OUTSIDE, OUTSIDE_SHAPES):
        for reason, group in groupby(table.items(), key=lambda item: item[1]):
            lines.append(row([k for k, _ in group], reason))
    return "\n".join([*lines, "", END])


def test_docs_show_the_allowlist():
    text = DOCS.read_text()
    start, end = text.index(START), text.index(END) + len(END)
    assert text[start:end] == render_docs(), "docs/shell.md: replace the block with\n" + \
        render_docs()
